"""RobotsTxt against Protego called the way Scrapy calls it, over the real robots.txt corpus.

    .venv/bin/python -m benchmarks.matcher [--rounds 3] [--modes parse,first,warm,new]

Parse: each file parsed by both, in alternation (A B, then B A), N rounds; a file's time is the
median of its rounds. The first allowed() after a parse (where RobotsTxt scans the rules of
the group it selects, compiled by a later check), timed the same way, each round on a fresh
parse. allowed(): every check warmed up once, then timed the same way. Both sides get the
same bytes, the same URLs and the same product tokens.

New URLs (``new``), as in a crawl, where every URL checked is one never checked before: each
call is given a URL string made for it alone (see :func:`fresh_urls`), so that nothing a
matcher keeps from an earlier call, by value or by identity, can answer it. Timed so: a parse
plus the first check of each file, in batches like the parse; and warm checks (group
compiled, every check done once before with other strings), CALLS_PER_CHECK calls in a row,
each on its own new URL.
"""

from __future__ import annotations

import argparse
import gc
import re
from collections.abc import Callable
from functools import partial
from itertools import repeat
from time import perf_counter_ns
from typing import Any

from scrapy.robotstxt import ProtegoRobotParser

from benchmarks._common import corpus, machine, median, percentile, table
from benchmarks._results import write_figures
from scrapy_robotsmeta import RobotsTxt

TOKENS = ("googlebot", "bingbot", "mybot")  # named in many files, in some, in none
GENERIC_PATHS = (
    "/",
    "/index.html",
    "/about/team",
    "/search?q=robots&page=2",
    "/products/item-1234.html?ref=home#reviews",
    "/images/logo.png",
    "/wp-admin/admin-ajax.php",
    "/%E6%97%A5%E6%9C%AC/page",
)
RULES_PER_FILE = 20  # rules sampled evenly from each file to derive URLs from
_RULE_PATH = re.compile(rb"^[ \t]*(?:dis)?allow[ \t]*:[ \t]*([^#\s]+)", re.IGNORECASE | re.M)
# Each timed batch lasts about this long, so that the clock's resolution does not matter.
BATCH_NS = 200_000
# A check takes microseconds: a few calls in a row make the clock's own cost negligible.
CALLS_PER_CHECK = 5


def urls_for(host: str, body: bytes) -> list[str]:
    """URLs that exercise the file's own rules: each sampled rule as a concrete path, and a
    longer path under it, plus a few paths every site has."""
    paths = [m.decode("utf-8", "replace") for m in _RULE_PATH.findall(body)]
    step = max(1, len(paths) // RULES_PER_FILE)
    derived: list[str] = []
    for path in paths[::step][:RULES_PER_FILE]:
        concrete = path.replace("*", "x").removesuffix("$")
        if not concrete.startswith("/"):
            concrete = "/" + concrete
        derived += [concrete, concrete.rstrip("/") + "/more/page.html?id=7"]
    return [f"https://{host}{path}" for path in (*GENERIC_PATHS, *derived)]


def per_call_ns(call: Callable[[], object], count: int) -> float:
    gc.disable()  # as timeit does: a collection would land on whichever side triggered it
    try:
        start = perf_counter_ns()
        for _ in repeat(None, count):
            call()
        return (perf_counter_ns() - start) / count
    finally:
        gc.enable()


def batch_size(call: Callable[[], object]) -> int:
    single = per_call_ns(call, 1)
    return max(1, int(BATCH_NS // max(single, 1.0)))


def bench_parse(files: dict[str, bytes], rounds: int) -> tuple[list[float], list[float]]:
    ours: list[float] = []
    theirs: list[float] = []
    for body in files.values():
        sides = (partial(RobotsTxt.parse, body), partial(ProtegoRobotParser, body, None))
        count = batch_size(sides[1])
        times: tuple[list[float], list[float]] = ([], [])
        for round_ in range(rounds):
            for side in (0, 1) if round_ % 2 == 0 else (1, 0):
                times[side].append(per_call_ns(sides[side], count))
        ours.append(median(times[0]))
        theirs.append(median(times[1]))
    return ours, theirs


def bench_first_check(files: dict[str, bytes], rounds: int) -> tuple[list[float], list[float]]:
    ours: list[float] = []
    theirs: list[float] = []
    for host, body in files.items():
        url = f"https://{host}/products/item-1234.html"
        parsers = (partial(RobotsTxt.parse, body), partial(ProtegoRobotParser, body, None))
        times: tuple[list[float], list[float]] = ([], [])
        for round_ in range(rounds):
            for side in (0, 1) if round_ % 2 == 0 else (1, 0):
                first = partial(parsers[side]().allowed, url, "mybot")
                times[side].append(per_call_ns(first, 1))
        ours.append(median(times[0]))
        theirs.append(median(times[1]))
    return ours, theirs


def time_checks(allowed: Callable[[str, str], bool], checks: list[tuple[str, str]]) -> list[float]:
    times = []
    gc.disable()
    for url, token in checks:
        start = perf_counter_ns()
        for _ in repeat(None, CALLS_PER_CHECK):
            allowed(url, token)
        times.append((perf_counter_ns() - start) / CALLS_PER_CHECK)
    gc.enable()
    return times


def fresh_urls(url: str, count: int, tag: str) -> list[str]:
    """*count* spellings of *url* no matcher has seen, each a new string, tagged *tag* (a
    round and a side) so that no two calls of a run share one.

    The difference is in the authority, which neither side reads when matching (RFC 9309
    rules apply to the path): the path and query are the ones the warm benchmark checks,
    character for character, so every verdict and every rule looked at stays the same, while
    a matcher caching anything by URL would find nothing to reuse.
    """
    scheme, rest = url.split("://", 1)
    return [f"{scheme}://{tag}{number}.{rest}" for number in range(count)]


def time_new_checks(
    allowed: Callable[[str, str], bool], checks: list[tuple[str, str]], tag: str
) -> list[float]:
    # The URLs are made before the clock starts: only the checks are timed.
    batches = [(fresh_urls(url, CALLS_PER_CHECK, tag), token) for url, token in checks]
    times = []
    gc.disable()
    for urls, token in batches:
        start = perf_counter_ns()
        for url in urls:
            allowed(url, token)
        times.append((perf_counter_ns() - start) / CALLS_PER_CHECK)
    gc.enable()
    return times


def bench_new_allowed(files: dict[str, bytes], rounds: int) -> tuple[list[float], list[float]]:
    """Warm checks, each on a URL never checked before."""
    ours: list[float] = []
    theirs: list[float] = []
    for host, body in files.items():
        checks = [(url, token) for url in urls_for(host, body) for token in TOKENS]
        sides = (RobotsTxt.parse(body).allowed, ProtegoRobotParser(body, None).allowed)
        for side, allowed in enumerate(sides):  # warm: compiled, with strings never used again
            for url, token in checks:
                allowed(fresh_urls(url, 1, f"w{side}x")[0], token)
        runs: tuple[list[list[float]], list[list[float]]] = ([], [])
        for round_ in range(rounds):
            for side in (0, 1) if round_ % 2 == 0 else (1, 0):
                runs[side].append(time_new_checks(sides[side], checks, f"r{round_}s{side}x"))
        ours += [median(check) for check in zip(*runs[0], strict=True)]
        theirs += [median(check) for check in zip(*runs[1], strict=True)]
    return ours, theirs


def parse_and_check(parse: Callable[[bytes], Any], body: bytes, urls: list[str]) -> float:
    """ns per parse of *body* followed by its first check, each of a URL of *urls*."""
    gc.disable()
    try:
        start = perf_counter_ns()
        for url in urls:
            parse(body).allowed(url, "mybot")
        return (perf_counter_ns() - start) / len(urls)
    finally:
        gc.enable()


def bench_new_first(files: dict[str, bytes], rounds: int) -> tuple[list[float], list[float]]:
    """A parse and the first check after it, on a URL never checked before."""
    ours: list[float] = []
    theirs: list[float] = []
    parsers = (RobotsTxt.parse, partial(ProtegoRobotParser, spider=None))
    for host, body in files.items():
        url = f"https://{host}/products/item-1234.html"
        count = batch_size(partial(parse_and_check, parsers[1], body, [url]))
        times: tuple[list[float], list[float]] = ([], [])
        for round_ in range(rounds):
            for side in (0, 1) if round_ % 2 == 0 else (1, 0):
                urls = fresh_urls(url, count, f"r{round_}s{side}x")
                times[side].append(parse_and_check(parsers[side], body, urls))
        ours.append(median(times[0]))
        theirs.append(median(times[1]))
    return ours, theirs


def bench_allowed(files: dict[str, bytes], rounds: int) -> tuple[list[float], list[float]]:
    ours: list[float] = []
    theirs: list[float] = []
    for host, body in files.items():
        checks = [(url, token) for url in urls_for(host, body) for token in TOKENS]
        sides = (RobotsTxt.parse(body).allowed, ProtegoRobotParser(body, None).allowed)
        for allowed in sides:  # warm: lazy compilation and per-agent caches done
            for url, token in checks:
                allowed(url, token)
        runs: tuple[list[list[float]], list[list[float]]] = ([], [])
        for round_ in range(rounds):
            for side in (0, 1) if round_ % 2 == 0 else (1, 0):
                runs[side].append(time_checks(sides[side], checks))
        ours += [median(check) for check in zip(*runs[0], strict=True)]
        theirs += [median(check) for check in zip(*runs[1], strict=True)]
    return ours, theirs


MODES = ("parse", "first", "warm", "new")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per file (3)")
    parser.add_argument(
        "--modes", default=",".join(MODES), help=f"which to run, of {','.join(MODES)} (all)"
    )
    args = parser.parse_args()
    modes = args.modes.split(",")
    files = corpus()
    print(f"{len(files)} files; {machine()}\n")
    figures: dict[str, Any] = {"machine": machine(), "files": len(files), "rounds": args.rounds}
    if "parse" in modes:
        figures["parse_us_per_file"] = report_parse(*bench_parse(files, args.rounds))
    if "first" in modes:
        figures["first_check_us_per_file"] = report(
            "First allowed() after a parse, µs per file (RobotsTxt scans its group's rules then)",
            *bench_first_check(files, args.rounds),
            {"median": median, "p99": p99, "sum": sum},
        )
    if "warm" in modes:
        figures["allowed_us_per_check"] = report_checks(
            "Warm allowed(), µs per check, {count} checks (target: ratio ≤ 0.60)",
            *bench_allowed(files, args.rounds),
        )
    if "new" in modes:
        figures["new_parse_and_first_check_us_per_file"] = report(
            "New URLs: a parse and the first allowed() after it, µs per file "
            "(target: ratio ≤ 0.60 at median and p99)",
            *bench_new_first(files, args.rounds),
            {"median": median, "p99": p99, "sum": sum},
        )
        figures["new_allowed_us_per_check"] = report_checks(
            "New URLs: warm allowed(), µs per check, {count} checks (target: ratio ≤ 0.50)",
            *bench_new_allowed(files, args.rounds),
        )
    write_figures("matcher", figures)


def report_parse(ours: list[float], theirs: list[float]) -> dict[str, Any]:
    ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
    parse = compare(ours, theirs, {"median": median, "p99": p99, "max": max})
    rows = [row(label, stats) for label, stats in parse.items()]
    rows.append(("median of per-file ratios", "", "", f"{median(ratios):.2f}"))
    print("Parse, µs per file (target: ratio ≤ 1.00 at median and p99)")
    print(table(("per file", "RobotsTxt", "Protego", "ratio"), rows), "\n")
    return {**parse, "median_of_per_file_ratios": median(ratios)}


def report(
    title: str,
    ours: list[float],
    theirs: list[float],
    stats: dict[str, Callable[[list[float]], float]],
) -> dict[str, dict[str, float]]:
    figures = compare(ours, theirs, stats)
    print(title)
    rows = [row(label, values) for label, values in figures.items()]
    print(table(("per file", "RobotsTxt", "Protego", "ratio"), rows), "\n")
    return figures


def report_checks(title: str, ours: list[float], theirs: list[float]) -> dict[str, Any]:
    checks = compare(ours, theirs, {"median": median, "mean": lambda v: sum(v) / len(v)})
    print(title.format(count=len(ours)))
    rows = [row(label, stats) for label, stats in checks.items()]
    print(table(("per check", "RobotsTxt", "Protego", "ratio"), rows), "\n")
    return {**checks, "checks": len(ours)}


def p99(values: list[float]) -> float:
    return percentile(values, 0.99)


def compare(
    ours: list[float], theirs: list[float], stats: dict[str, Callable[[list[float]], float]]
) -> dict[str, dict[str, float]]:
    """Each statistic of both sides in µs, and their ratio."""
    return {
        label: {
            "robotstxt": stat(ours) / 1000,
            "protego": stat(theirs) / 1000,
            "ratio": stat(ours) / stat(theirs),
        }
        for label, stat in stats.items()
    }


def row(label: str, stats: dict[str, float]) -> tuple[str, ...]:
    return (
        label,
        f"{stats['robotstxt']:.2f}",
        f"{stats['protego']:.2f}",
        f"{stats['ratio']:.2f}",
    )


if __name__ == "__main__":
    main()
