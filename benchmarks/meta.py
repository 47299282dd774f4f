"""Cost of a page's effective robots directives, against parsing the page with parsel.

    .venv/bin/python -m benchmarks.meta [--pages 200] [--rounds 5]

Pages of 20-80 KB with a full <head>; some carry robots metas, a few an X-Robots-Tag header,
half a character reference in their text (which alone makes (b) parse the page).
Per page, each round times on a fresh response (the order rotating between rounds):

- (a) directives when the callback already built ``response.selector``;
- (b) directives when nothing was parsed yet (the page is parsed only when a meta may match,
  and the selector built then is the one the callback gets);
- parse: building ``response.selector``, what any callback that reads the page pays.

Directives are read as a crawl reads them: RobotsMetaMiddleware sees the response, then the
callback calls ``directives_for(response)``. A page's time is the median of its rounds.
"""

from __future__ import annotations

import argparse
import gc
import random
from collections.abc import Callable
from time import perf_counter_ns
from typing import Any

from scrapy import Spider
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from benchmarks._common import machine, median, percentile, table
from benchmarks._pages import ROBOTS_METAS, page
from benchmarks._results import write_figures
from scrapy_robotsmeta import RobotsMetaMiddleware, directives_for

PAGE_SIZE = (20_000, 80_000)
HEADERS: tuple[dict[str, str], ...] = (
    *([{}] * 4),
    {"X-Robots-Tag": "noarchive, googlebot: nosnippet"},
)


RATIO = "median_to_parse"
# What makes (b) parse a page or not.
KINDS = ("with a robots meta", "without, with a &#…;", "without, plain")


def make_pages(count: int) -> list[tuple[bytes, dict[str, str], str]]:
    """(body, headers, kind), made up deterministically."""
    rng = random.Random(1)
    pages = []
    for i in range(count):
        links = [f"/p/{rng.randrange(10_000)}.html" for _ in range(30)]
        meta = rng.choice(ROBOTS_METAS)
        body = page(rng, links, rng.randrange(*PAGE_SIZE), meta, quote=i % 2 == 0).encode()
        kind = KINDS[0] if meta else KINDS[1] if i % 2 == 0 else KINDS[2]
        pages.append((body, HEADERS[i % len(HEADERS)], kind))
    return pages


def timed(prepare: Callable[[HtmlResponse], object], measure: Callable[[HtmlResponse], object]):
    def run(body: bytes, headers: dict[str, str]) -> float:
        response = HtmlResponse("https://example.com/page", body=body, headers=headers)
        prepare(response)
        gc.disable()
        start = perf_counter_ns()
        measure(response)
        elapsed = perf_counter_ns() - start
        gc.enable()
        return elapsed

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    crawler = get_crawler(Spider, {"USER_AGENT": "BenchBot/1.0"})
    middleware = RobotsMetaMiddleware(crawler)

    def directives(response: HtmlResponse) -> object:
        middleware.process_spider_input(response)
        return directives_for(response)

    def nothing(response: HtmlResponse) -> None:
        pass

    def select(response: HtmlResponse) -> object:
        return response.selector

    cases = {
        "(a) directives, selector built": timed(select, directives),
        "(b) directives, nothing parsed": timed(nothing, directives),
        "parsel parse (response.selector)": timed(nothing, select),
    }
    pages = make_pages(args.pages)
    sizes = [len(body) for body, _, _ in pages]
    print(
        f"{len(pages)} pages of {min(sizes) // 1000}-{max(sizes) // 1000} KB "
        f"({sum(kind == KINDS[0] for *_, kind in pages)} with a robots meta); {machine()}\n"
    )
    times: dict[str, list[float]] = {name: [] for name in cases}
    names = list(cases)
    for body, headers, _ in pages:
        runs: dict[str, list[float]] = {name: [] for name in cases}
        for round_ in range(args.rounds):
            turn = round_ % len(names)
            for name in names[turn:] + names[:turn]:
                runs[name].append(cases[name](body, headers))
        for name in names:
            times[name].append(median(runs[name]))

    parse = median(times[names[2]])
    kinds = [kind for *_, kind in pages]
    figures: dict[str, Any] = {
        "machine": machine(),
        "pages": len(pages),
        "rounds": args.rounds,
        "target_a_us": 30.0,
        "us_per_page": {},
    }
    for name in names:
        values = times[name]
        figures["us_per_page"][name] = {
            "median": median(values) / 1000,
            "p90": percentile(values, 0.9) / 1000,
            **{
                kind: median(v for v, k in zip(values, kinds, strict=True) if k == kind) / 1000
                for kind in KINDS
            },
            RATIO: median(values) / parse,
        }
    rows = [
        (
            name,
            *(f"{value:.{3 if key == 'median_to_parse' else 1}f}" for key, value in case.items()),
        )
        for name, case in figures["us_per_page"].items()
    ]
    print("µs per page (target: (a) ≤ 30 µs at the median); medians by kind of page")
    print(table(("case", "median", "p90", *KINDS, "median / parse"), rows))
    write_figures("meta", figures)


if __name__ == "__main__":
    main()
