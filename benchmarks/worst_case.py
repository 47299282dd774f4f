"""One check of the worst robots.txt files we could build, RobotsTxt against Protego.

    .venv/bin/python -m benchmarks.worst_case [--rounds 5]

Each file is as large as the parser reads (500 KiB) unless said otherwise, one ``*`` group,
checked with URLs of about 8 KiB built to make its rules as slow to rule out as they can be:
every run of characters a rule holds is in the URL, the rule is not. For each file and side:
the parse, the first check after it (where RobotsTxt compiles the group), and a warm check
(the median of the rounds), and the verdict, which tells a check decided by its rules from
one past the matcher's work bound (``undecided``, disallowed).
"""

from __future__ import annotations

import argparse
import string
from collections.abc import Callable
from functools import partial
from time import perf_counter_ns
from typing import Any

from scrapy.robotstxt import ProtegoRobotParser

from benchmarks._common import machine, median, table
from benchmarks._results import write_figures
from benchmarks.matcher import per_call_ns
from scrapy_robotsmeta import RobotsTxt
from scrapy_robotsmeta.robotstxt import MAX_BYTES

HOST = "https://example.com"
URL_SIZE = 8192
# Characters that are canonical as they are, to vary the rules by ("a" is their filler).
MARKS = string.ascii_letters[1:] + string.digits


def _fill(lines: Callable[[int], bytes], size: int = MAX_BYTES) -> bytes:
    """``User-agent: *`` and as many of the lines ``lines(0)``, ``lines(1)``… as fit *size*."""
    body = [b"User-agent: *\n"]
    total = len(body[0])
    for number in range(size):
        line = lines(number)
        if total + len(line) > size:
            break
        body.append(line)
        total += len(line)
    return b"".join(body)


def _repeat(unit: str) -> str:
    return HOST + "/" + unit * (URL_SIZE // len(unit))


def _near_misses(number: int, run: int = 40) -> bytes:
    # /*aaa…Xaa: a run longer than the URL's runs, then a mark. CPython's str.find compares
    # up to the run at each position of the URL (needles under 100 characters): the slowest
    # search there is, repeated for thousands of rules whose runs of three the URL all holds.
    mark = MARKS[number % len(MARKS)]
    extra = number // len(MARKS) % (96 - run)
    return b"Disallow: /*%s%saa\n" % (b"a" * (run + 1 + extra), mark.encode())


def _many_stars(number: int) -> bytes:
    # 120 pieces each: a check of each rule starts 120 searches.
    mark = MARKS[number % len(MARKS)]
    return b"Disallow: /" + b"*a" * 120 + b"*%s%d\n" % (mark.encode(), number)


def cases() -> dict[str, tuple[bytes, str]]:
    """Name → (robots.txt body, URL): the worst we could build for each way of matching."""
    # Every run of three characters of the rules, then "a" only, where a search compares a
    # rule's run of "a" at each position.
    marks = "".join(f"aa{mark}aa" for mark in MARKS)
    misses_url = HOST + "/" + marks + "a" * (URL_SIZE - len(marks))
    return {
        # The fault report's file: one 96-character piece thousands of times.
        "issue: 4,571 x /*a…(93)baa, URL a…": (
            _fill(lambda n: b"Disallow: /*" + b"a" * 93 + b"baa\n"),
            _repeat("a"),
        ),
        "near misses: /*a…Xaa, all runs in URL": (_fill(_near_misses), misses_url),
        "near misses, anchored: /*a…Xaa$": (
            _fill(lambda n: _near_misses(n)[:-1] + b"$\n"),
            misses_url,
        ),
        "near misses, 31 rules (not indexed)": (_fill(_near_misses, 1400), misses_url),
        "many stars: /*a*a…(120)*Xn": (_fill(_many_stars), _repeat("a" + MARKS)),
        "one prefix: /aaaa0, /aaaa1…": (
            _fill(lambda n: b"Disallow: /aaaa%d\n" % n),
            HOST + "/aaaa" + "1" * (URL_SIZE - 5),
        ),
        "short pieces: /*b0, /*b1…": (
            _fill(lambda n: b"Disallow: /*b%d\n" % n),
            _repeat("b" + string.digits + "b" + string.digits[::-1]),
        ),
        "one 500 KiB rule: /*a*a…*b": (
            b"User-agent: *\nDisallow: /" + b"*a" * (MAX_BYTES // 2 - 20) + b"*b\n",
            _repeat("a"),
        ),
    }


def verdict_of(rules: RobotsTxt, url: str) -> str:
    verdict = rules.explain(url, "bot")
    if verdict.undecided:
        return "undecided"
    return "allowed" if verdict.allowed else "disallowed"


def measure(body: bytes, url: str, rounds: int) -> dict[str, Any]:
    """Both sides' times in ms for one file: parse, first check, warm check."""
    figures: dict[str, Any] = {}
    sides: dict[str, Callable[[bytes], Any]] = {
        "robotstxt": RobotsTxt.parse,
        "protego": partial(ProtegoRobotParser, spider=None),
    }
    for name, parse in sides.items():
        start = perf_counter_ns()
        parsed = parse(body)
        parse_ns = perf_counter_ns() - start
        check = partial(parsed.allowed, url, "bot")
        figures[name] = {
            "parse_ms": parse_ns / 1e6,
            "first_check_ms": per_call_ns(check, 1) / 1e6,
            "check_ms": median(per_call_ns(check, 1) for _ in range(rounds)) / 1e6,
        }
        if name == "robotstxt":
            figures[name]["verdict"] = verdict_of(parsed, url)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="timed warm checks per file (5)")
    args = parser.parse_args()
    print(f"{machine()}\n")
    results: dict[str, Any] = {}
    rows = []
    for name, (body, url) in cases().items():
        figures = results[name] = measure(body, url, args.rounds)
        figures.update(bytes=len(body), url_chars=len(url))
        ours, theirs = figures["robotstxt"], figures["protego"]
        rows.append(
            (
                name,
                f"{len(body) // 1024}",
                f"{ours['check_ms']:.3f}",
                f"{theirs['check_ms']:.3f}",
                f"{ours['first_check_ms']:.1f}",
                f"{ours['parse_ms']:.1f}",
                f"{theirs['parse_ms']:.1f}",
                ours["verdict"],
            )
        )
    header = (
        "file",
        "KiB",
        "check, ours",
        "check, Protego",
        "first check, ours",
        "parse, ours",
        "parse, Protego",
        "our verdict",
    )
    print(f"One check of an {URL_SIZE // 1024} KiB URL, ms (warm: median of {args.rounds})")
    print(table(header, rows))
    write_figures("worst_case", {"machine": machine(), "rounds": args.rounds, "cases": results})


if __name__ == "__main__":
    main()
