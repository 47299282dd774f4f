"""A scrapy-redis fleet of 1, 2 and 4 workers sharing one robots.txt state in Redis.

    .venv/bin/python -m benchmarks.fleet [--workers 1,2,4] [--origins 6] [--pages 200]
        [--outage 4] [--rounds 3]

The fleet is the fleet test's (tests/fleet_worker.py): a site process serving ORIGINS origins
on 127.0.0.1-127.0.0.N, PAGES pages each (a page links to 3 pages of its origin, one of the
next origin and one page its robots.txt disallows), every page seeded as a start URL; worker
processes running a RedisSpider with scrapy-redis's scheduler and the add-on with
RedisStorage, on a redis-server of the run's own. Origin 0's robots.txt answers 503 from the
start until ``--outage`` seconds after its first request, then 200. Every figure is read from
the site's request log.

For each number of workers, two crawls:

- uninterrupted: pages/s (the healthy origins' pages over the time from the first page
  request to their last one: the unavailable origin's pages wait for its outage), robots.txt
  requests per healthy origin, and requests to the unavailable origin's robots.txt per minute
  of its outage;
- killed: one worker is SIGKILLed once half the healthy origins' pages are requested (its
  replacement starts at once, so that a 1-worker fleet finishes too). Pages never requested are
  lost; each is placed by the killed worker's own step log: held by Scrapy's engine (taken from
  scrapy-redis's queue, not parked: any scrapy-redis crawl loses these), or the robots.txt
  storage's (parked in the process and not yet in Redis; taken out of Redis and not yet back in
  scrapy-redis's queue).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks._common import fleet_arguments, fleet_sizes, machine, median, table
from tests.fleet_worker import Fleet, Hit, wait_until
from tests.redisserver import redis_server

RESULTS = Path(__file__).resolve().parent / "results" / "fleet.json"
# Retries of the unavailable origin as a crawl would space them (the fleet test's are
# shorter), still several per outage.
SETTINGS = {"ROBOTSTXT_RETRY_DELAY": 0.5, "ROBOTSTXT_RETRY_MAX_DELAY": 1.0}


def robots_counts(hits: list[Hit], origin: str) -> Counter[str]:
    """Status → robots.txt requests of *origin*."""
    return Counter(
        hit.status for hit in hits if hit.origin == origin and hit.path == "/robots.txt"
    )


def run(workers: int, kill: bool, args: argparse.Namespace) -> dict[str, Any]:
    """One crawl of the site by a fleet of *workers*; its figures."""
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        # A fresh redis-server per crawl: nothing to empty between crawls.
        (Path(tmp) / "redis").mkdir()
        (Path(tmp) / "fleet").mkdir()
        with (
            redis_server(Path(tmp) / "redis") as url,
            Fleet(Path(tmp) / "fleet", url, **SETTINGS) as fleet,
        ):
            return crawl(fleet, workers, kill, args)


def crawl(fleet: Fleet, workers: int, kill: bool, args: argparse.Namespace) -> dict[str, Any]:
    origins = fleet.start_site(args.origins, args.pages, hold=False, outage=True)
    failing = origins[0]
    allowed = fleet.allowed_pages()
    healthy = {url for url in allowed if not url.startswith(f"{failing}/")}
    fleet.seed(
        [f"{origin}/p/{i}" for i in range(args.pages) for origin in origins]
        + [f"{origin}/private/{i}" for i in range(0, args.pages, 10) for origin in origins]
    )
    names = [f"w{i}" for i in range(workers)]
    for name in names:
        fleet.start_worker(name)
    events: dict[str, Any] = {}

    def step() -> bool:
        """Advance the run by what the site's log shows; True once the crawl is over."""
        hits = fleet.hits()
        if "outage_ended" not in events:
            first = next((h for h in hits if h.url == f"{failing}/robots.txt"), None)
            if first is not None and time.time() - first.time >= args.outage:
                events["outage_started"] = first.time
                events["outage_ended"] = fleet.end("outage")
        if kill and "killed" not in events:
            requested = {hit.url for hit in hits} & healthy
            if len(requested) >= len(healthy) / 2:
                events["parked_at_kill"] = len(fleet.parked(failing))
                fleet.kill(names[0])
                events["killed"] = names[0]
                fleet.start_worker(f"{names[0]}-replacement")
        return "outage_ended" in events and (not kill or "killed" in events) and fleet.settled()

    wait_until(step, args.timeout, "the crawl to end")
    fleet.interrupt(*fleet.running())
    hits = fleet.hits()
    pages = [hit for hit in hits if hit.url in allowed]
    missing = allowed - {hit.url for hit in pages}
    result: dict[str, Any] = {
        "workers": workers,
        "killed": kill,
        "pages": len({hit.url for hit in pages}),
        "page_requests": len(pages),
        "forbidden_requests": sum(hit.path.startswith("/private/") for hit in hits),
        "robots_per_healthy_origin": [
            sum(robots_counts(hits, origin).values()) for origin in origins[1:]
        ],
        "failing_robots": dict(robots_counts(hits, failing)),
    }
    if pages:
        result["seconds"] = pages[-1].time - pages[0].time
        # The healthy origins alone: the unavailable origin's pages wait for the outage,
        # however fast the fleet is.
        crawled = [hit for hit in pages if hit.url in healthy]
        result["pages_per_s"] = len(crawled) / (crawled[-1].time - pages[0].time)
    outage = events["outage_ended"] - events["outage_started"]
    unavailable = sum(
        1
        for hit in hits
        if hit.url == f"{failing}/robots.txt"
        and events["outage_started"] <= hit.time < events["outage_ended"]
    )
    result["outage_s"] = outage
    result["failing_robots_per_min"] = 60 * unavailable / outage
    if kill:
        result["parked_at_kill"] = events["parked_at_kill"]
        result["lost"] = {
            where: sorted(urls) for where, urls in fleet.losses(events["killed"], missing).items()
        }
        # What each worker did with a page its loss does not explain.
        result["unexplained_trails"] = {
            url: fleet.trail(url) for url in result["lost"]["unexplained"]
        }
    elif missing:
        result["lost"] = {"uninterrupted": sorted(missing)}
    return result


def main() -> None:
    parser = fleet_arguments(__doc__.split("\n\n")[0], rounds=3, timeout=120.0)
    parser.add_argument("--outage", type=float, default=4.0, help="seconds of 503")
    args = parser.parse_args()
    sizes = fleet_sizes(args)
    runs: dict[tuple[int, bool], list[dict[str, Any]]] = {}
    for round_ in range(args.rounds):
        for workers in sizes:
            for kill in (False, True):
                result = run(workers, kill, args)
                runs.setdefault((workers, kill), []).append(result)
                lost = sum(len(urls) for urls in result.get("lost", {}).values())
                print(
                    f"round {round_ + 1}: {workers} worker(s){', one killed' if kill else ''}: "
                    f"{result['pages']} pages, {result.get('pages_per_s', 0):.0f} pages/s, "
                    f"{lost} lost",
                    file=sys.stderr,
                )
    report(runs, sizes, args)


def report(
    runs: dict[tuple[int, bool], list[dict[str, Any]]], sizes: list[int], args: argparse.Namespace
) -> None:
    rows, figures = [], []
    for workers in sizes:
        clean, killed = runs[(workers, False)], runs[(workers, True)]
        lost = {
            where: sum(len(run["lost"].get(where, [])) for run in killed)
            for where in ("engine", "outbox", "release", "unexplained")
        }
        figure = {
            "workers": workers,
            "pages": args.origins * args.pages,
            "pages_per_s": median(run["pages_per_s"] for run in clean),
            "page_requests_per_page": median(run["page_requests"] / run["pages"] for run in clean),
            "robots_per_healthy_origin_max": max(
                max(run["robots_per_healthy_origin"]) for run in [*clean, *killed]
            ),
            "failing_robots_per_min": median(run["failing_robots_per_min"] for run in clean),
            "failing_robots_200": max(
                run["failing_robots"].get("200", 0) for run in [*clean, *killed]
            ),
            "forbidden_requests": sum(run["forbidden_requests"] for run in [*clean, *killed]),
            "pages_lost_uninterrupted": sum(
                len(run.get("lost", {}).get("uninterrupted", [])) for run in clean
            ),
            "parked_at_kill": [run["parked_at_kill"] for run in killed],
            "pages_lost_under_kill": lost,
            "runs": {"uninterrupted": clean, "killed": killed},
        }
        figures.append(figure)
        rows.append(
            [
                workers,
                f"{figure['pages_per_s']:.0f}",
                f"{figure['page_requests_per_page']:.3f}",
                figure["robots_per_healthy_origin_max"],
                f"{figure['failing_robots_per_min']:.0f}",
                figure["failing_robots_200"],
                figure["forbidden_requests"],
                ", ".join(str(n) for n in figure["parked_at_kill"]),
                f"{sum(lost.values())} ({lost['engine']} / {lost['outbox']} / "
                f"{lost['release']} / {lost['unexplained']})",
            ]
        )
    print(
        f"Fleet of scrapy-redis workers, {args.origins} origins x {args.pages} pages, origin 0's "
        f"robots.txt 503 for {args.outage:.0f} s, {args.rounds} round(s)"
    )
    print(
        table(
            [
                "workers",
                "pages/s (healthy origins)",
                "page requests per page",
                "robots.txt per healthy origin (max)",
                "503 origin: robots.txt per min",
                "503 origin: 200 fetches",
                "forbidden requested",
                "parked in Redis at the kill",
                "pages lost under kill (engine / outbox / release / unexplained)",
            ],
            rows,
        )
    )
    print(f"\n{machine()}")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {"machine": machine(), "settings": SETTINGS, "args": vars(args), "fleets": figures},
            indent=2,
        )
        + "\n"
    )
    print(f"\nFigures written to {RESULTS.relative_to(Path.cwd())}")


if __name__ == "__main__":
    main()
