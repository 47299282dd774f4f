"""RobotsTxt against Protego called the way Scrapy calls it, over the real robots.txt corpus.

    .venv/bin/python -m benchmarks.matcher [--rounds 3]

Parse: each file parsed by both, in alternation (A B, then B A), N rounds; a file's time is the
median of its rounds. The first allowed() after a parse (where RobotsTxt compiles the group
it selects), timed the same way, each round on a fresh parse. allowed(): every check warmed
up once, then timed the same way. Both sides get the same bytes, the same URLs and the same
product tokens.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per file (3)")
    args = parser.parse_args()
    files = corpus()
    print(f"{len(files)} files; {machine()}\n")

    figures: dict[str, Any] = {"machine": machine(), "files": len(files), "rounds": args.rounds}
    ours, theirs = bench_parse(files, args.rounds)
    ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
    parse = compare(ours, theirs, {"median": median, "p99": p99, "max": max})
    figures["parse_us_per_file"] = {**parse, "median_of_per_file_ratios": median(ratios)}
    rows = [row(label, stats) for label, stats in parse.items()]
    rows.append(("median of per-file ratios", "", "", f"{median(ratios):.2f}"))
    print("Parse, µs per file (target: ratio ≤ 1.00 at median and p99)")
    print(table(("per file", "RobotsTxt", "Protego", "ratio"), rows), "\n")

    ours, theirs = bench_first_check(files, args.rounds)
    first = compare(ours, theirs, {"median": median, "p99": p99, "sum": sum})
    figures["first_check_us_per_file"] = first
    print("First allowed() after a parse, µs per file (RobotsTxt compiles its group then)")
    rows = [row(label, stats) for label, stats in first.items()]
    print(table(("per file", "RobotsTxt", "Protego", "ratio"), rows), "\n")

    ours, theirs = bench_allowed(files, args.rounds)
    count = len(ours)
    allowed = compare(ours, theirs, {"median": median, "mean": lambda v: sum(v) / len(v)})
    figures["allowed_us_per_check"] = {**allowed, "checks": count}
    print(f"Warm allowed(), µs per check, {count} checks (target: ratio ≤ 0.60)")
    rows = [row(label, stats) for label, stats in allowed.items()]
    print(table(("per check", "RobotsTxt", "Protego", "ratio"), rows))
    write_figures("matcher", figures)


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
