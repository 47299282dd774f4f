"""Crawl-delay for a scrapy-redis fleet of 1, 2 and 4 workers: the delayed origin's rate for
the whole fleet, and what waiting for its turns costs the other origins.

    .venv/bin/python -m benchmarks.crawldelay [--workers 1,2,4] [--origins 6] [--pages 200]
        [--delayed 15] [--rounds 2]

The fleet is the fleet test's (tests/fleet_worker.py): a site process serving ORIGINS origins
on 127.0.0.1-127.0.0.N, PAGES pages each, linking to nothing (only start URLs are crawled, so
that each crawl is the same set of pages); worker processes running a RedisSpider with
scrapy-redis's scheduler and the add-on with RedisStorage and ``ROBOTSTXT_OBEY_CRAWL_DELAY``,
on a redis-server of the run's own (a fresh one per crawl). Origin 0's robots.txt asks
``Crawl-delay: 1``. For each fleet size, per round, two crawls, alternating which goes first:

- *delayed*: every page of the other origins and the first DELAYED pages of origin 0 seeded
  (origin 0's spread evenly among the others);
- *absent*: the other origins' pages alone.

Every figure is read from the site's request log: the delayed origin's requests per second
for the whole fleet (its requests but one over the time from its first to its last) and the
shortest gap between two of them; the other origins' pages per second (their pages over the
time from the first page request to their last one), and its ratio to the same fleet's with
origin 0 absent.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks._common import fleet_arguments, fleet_sizes, machine, median, table
from benchmarks._results import write_figures
from tests.fleet_worker import Fleet, Hit, wait_until
from tests.redisserver import redis_server

CRAWL_DELAY = 1.0


def seeds(origins: list[str], pages: int, delayed: int) -> list[str]:
    """The other origins' pages, page by page, with *delayed* pages of origin 0 spread
    evenly among them."""
    others = [f"{origin}/p/{i}" for i in range(pages) for origin in origins[1:]]
    every = max(1, len(others) // max(delayed, 1))
    mixed: list[str] = []
    for index, url in enumerate(others):
        if index % every == 0 and index // every < delayed:
            mixed.append(f"{origins[0]}/p/{index // every}")
        mixed.append(url)
    return mixed


def run(workers: int, with_delayed: bool, args: argparse.Namespace) -> dict[str, Any]:
    """One crawl by a fleet of *workers*; its figures."""
    with tempfile.TemporaryDirectory(prefix="bench-crawldelay-") as tmp:
        (Path(tmp) / "redis").mkdir()
        (Path(tmp) / "fleet").mkdir()
        with (
            redis_server(Path(tmp) / "redis") as url,
            Fleet(Path(tmp) / "fleet", url, ROBOTSTXT_OBEY_CRAWL_DELAY=True) as fleet,
        ):
            origins = fleet.start_site(
                args.origins,
                args.pages,
                hold=False,
                outage=False,
                crawl_delay=CRAWL_DELAY,
                links=False,
            )
            urls = seeds(origins, args.pages, args.delayed if with_delayed else 0)
            fleet.seed(urls)
            for name in (f"w{i}" for i in range(workers)):
                fleet.start_worker(name)
            expected = set(urls)
            wait_until(
                lambda: expected <= {hit.url for hit in fleet.hits()} and fleet.settled(2.5),
                args.timeout,
                "the crawl to end",
            )
            fleet.interrupt(*fleet.running())
            return figures(fleet.hits(), origins, expected, workers, with_delayed)


def figures(
    hits: list[Hit], origins: list[str], expected: set[str], workers: int, with_delayed: bool
) -> dict[str, Any]:
    pages = [hit for hit in hits if hit.path.startswith("/p/")]
    delayed = [hit.time for hit in pages if hit.origin == origins[0]]
    others = [hit.time for hit in pages if hit.origin != origins[0]]
    result: dict[str, Any] = {
        "workers": workers,
        "delayed_origin": with_delayed,
        "other_pages": len(others),
        "other_pages_per_s": len(others) / (others[-1] - pages[0].time),
        "page_requests": len(pages),
        "missing": sorted(expected - {hit.url for hit in pages}),
    }
    if len(delayed) > 1:
        gaps = [later - earlier for earlier, later in itertools.pairwise(delayed)]
        result["delayed_requests"] = len(delayed)
        result["delayed_requests_per_s"] = (len(delayed) - 1) / (delayed[-1] - delayed[0])
        result["delayed_min_gap_s"] = min(gaps)
        # How many of them the fleet still had waiting when the other origins were done.
        result["delayed_after_others"] = sum(at > others[-1] for at in delayed)
    return result


def main() -> None:
    parser = fleet_arguments(__doc__.split("\n\n")[0], rounds=2, timeout=180.0)
    parser.add_argument("--delayed", type=int, default=15, help="pages of the delayed origin")
    args = parser.parse_args()
    sizes = fleet_sizes(args)
    runs: dict[tuple[int, bool], list[dict[str, Any]]] = {}
    for round_ in range(args.rounds):
        for workers in sizes:
            # Alternating which crawl goes first: A B, then B A.
            for with_delayed in (True, False) if round_ % 2 == 0 else (False, True):
                result = run(workers, with_delayed, args)
                runs.setdefault((workers, with_delayed), []).append(result)
                print(
                    f"round {round_ + 1}: {workers} worker(s), delayed origin "
                    f"{'in' if with_delayed else 'absent'}: "
                    f"{result['other_pages_per_s']:.0f} pages/s, "
                    f"{result.get('delayed_requests_per_s', 0):.2f} delayed requests/s, "
                    f"{len(result['missing'])} missing",
                    file=sys.stderr,
                )
    report(runs, sizes, args)


def report(
    runs: dict[tuple[int, bool], list[dict[str, Any]]], sizes: list[int], args: argparse.Namespace
) -> None:
    rows, fleets = [], []
    for workers in sizes:
        delayed, absent = runs[(workers, True)], runs[(workers, False)]
        with_rate = median(run["other_pages_per_s"] for run in delayed)
        without_rate = median(run["other_pages_per_s"] for run in absent)
        figure = {
            "workers": workers,
            "delayed_requests_per_s_max": max(run["delayed_requests_per_s"] for run in delayed),
            "delayed_min_gap_s": min(run["delayed_min_gap_s"] for run in delayed),
            "delayed_after_others": [run["delayed_after_others"] for run in delayed],
            "other_pages_per_s": with_rate,
            "other_pages_per_s_absent": without_rate,
            "ratio": with_rate / without_rate,
            "missing": sum(len(run["missing"]) for run in [*delayed, *absent]),
            "runs": {"delayed": delayed, "absent": absent},
        }
        fleets.append(figure)
        rows.append(
            [
                workers,
                f"{figure['delayed_requests_per_s_max']:.3f}",
                f"{figure['delayed_min_gap_s']:.3f}",
                ", ".join(str(n) for n in figure["delayed_after_others"]),
                f"{with_rate:.0f}",
                f"{without_rate:.0f}",
                f"{figure['ratio']:.2f}",
                figure["missing"],
            ]
        )
    print(
        f"Crawl-delay {CRAWL_DELAY:g} s on 1 origin of {args.origins}, {args.delayed} of its "
        f"pages among {args.pages} pages of each other origin, {args.rounds} round(s)"
    )
    print(
        table(
            [
                "workers",
                "delayed origin: requests/s (max)",
                "delayed origin: shortest gap (s)",
                "its requests after the others were done",
                "other origins: pages/s",
                "pages/s with origin 0 absent",
                "ratio",
                "pages missing",
            ],
            rows,
        )
    )
    print(f"\n{machine()}")
    write_figures(
        "crawldelay",
        {"machine": machine(), "crawl_delay": CRAWL_DELAY, "args": vars(args), "fleets": fleets},
    )


if __name__ == "__main__":
    main()
