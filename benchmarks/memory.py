"""Memory of the robots.txt cache: bytes per cached origin, and the cache's bound.

    .venv/bin/python -m benchmarks.memory [--origins 11291] [--bound-origins 100000]

Origins are filled as a crawl fills them: RobotsTxtMiddleware's cache gets the origin, the
fetched body's outcome is applied to it, and one URL of the origin is checked (which builds the
matcher of the group that applies). The corpus' files are used in turn, each origin parsing its
own copy. tracemalloc counts what stays allocated after each origin is added. The bound is
checked first, without tracemalloc (which slows everything down several times): the number of
cached origins after every origin added, and the process' resident memory.
"""

from __future__ import annotations

import argparse
import os
import tracemalloc
from pathlib import Path

from scrapy import Spider
from scrapy.utils.test import get_crawler
from twisted.internet.task import Clock

from benchmarks._common import answered_200, corpus, machine, median, percentile, table
from benchmarks._results import write_figures
from scrapy_robotsmeta import RobotsTxtMiddleware
from scrapy_robotsmeta.reactor import CLOCK_ATTRIBUTE
from scrapy_robotsmeta.robotstxt.origin import origin_of

TOKEN = "mybot"


def middleware(cache_size: int) -> RobotsTxtMiddleware:
    crawler = get_crawler(
        Spider, {"ROBOTSTXT_OBEY": True, "ROBOTSTXT_CACHE_SIZE": cache_size, "LOG_LEVEL": "ERROR"}
    )
    setattr(crawler, CLOCK_ATTRIBUTE, Clock())
    return RobotsTxtMiddleware(crawler)


def add_origin(mw: RobotsTxtMiddleware, index: int, body: bytes) -> None:
    url = f"https://site{index}.example/"
    origin = origin_of(url)
    assert origin is not None
    state = mw.states.get_or_create(origin)
    state.start_fetch(0.0, mw.timing)
    state.apply(answered_200(origin, body), 0.0, mw.timing)
    assert state.rules is not None
    state.rules.allowed(url + "products/item-1.html", TOKEN)


def per_origin(bodies: list[bytes], count: int) -> list[int]:
    """Bytes that stay allocated for each of *count* origins (no eviction)."""
    mw = middleware(cache_size=count)
    sizes = []
    for index in range(count):
        before = tracemalloc.get_traced_memory()[0]
        add_origin(mw, index, bodies[index % len(bodies)])
        sizes.append(tracemalloc.get_traced_memory()[0] - before)
    assert len(mw.states) == count
    return sizes


def rss_mb() -> float:
    resident_pages = int(Path("/proc/self/statm").read_text().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def bound(bodies: list[bytes], count: int, cache_size: int) -> list[tuple[int, int, float]]:
    """(origins added, most origins ever cached, RSS in MB) after each tenth of *count*
    origins."""
    mw = middleware(cache_size)
    most = 0
    checkpoints = []
    for index in range(count):
        add_origin(mw, index, bodies[index % len(bodies)])
        most = max(most, len(mw.states))
        if (index + 1) % (count // 10) == 0:
            checkpoints.append((index + 1, most, rss_mb()))
    return checkpoints


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--origins", type=int, default=7 * 1613)
    parser.add_argument("--bound-origins", type=int, default=100_000)
    parser.add_argument("--cache-size", type=int, default=10_000, help="ROBOTSTXT_CACHE_SIZE")
    args = parser.parse_args()
    bodies = list(corpus().values())
    print(f"{len(bodies)} corpus files; {machine()}\n")

    checkpoints = bound(bodies, args.bound_origins, args.cache_size)
    print(f"ROBOTSTXT_CACHE_SIZE = {args.cache_size:,}: the cache as origins keep coming")
    print(
        table(
            ("origins added", "most origins cached so far", "RSS (MB)"),
            [(f"{added:,}", f"{cached:,}", f"{mb:.0f}") for added, cached, mb in checkpoints],
        )
    )

    tracemalloc.start()
    sizes = per_origin(bodies, args.origins)
    rows = [
        ("median", median(sizes)),
        ("p90", percentile(sizes, 0.9)),
        ("p99", percentile(sizes, 0.99)),
        ("max", max(sizes)),
        ("mean", sum(sizes) / len(sizes)),
    ]
    print(f"\nBytes per cached origin, {len(sizes)} origins (target: ≤ 5 KB at the median)")
    print(table(("per origin", "bytes"), [(label, f"{value:,.0f}") for label, value in rows]))
    write_figures(
        "memory",
        {
            "machine": machine(),
            "cache_size": args.cache_size,
            "bound": [
                {"origins_added": added, "most_origins_cached": cached, "rss_mb": mb}
                for added, cached, mb in checkpoints
            ],
            "origins_measured": len(sizes),
            "bytes_per_cached_origin": dict(rows),
            "target_median_bytes": 5000,
        },
    )


if __name__ == "__main__":
    main()
