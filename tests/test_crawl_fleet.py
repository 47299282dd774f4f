"""A real scrapy-redis fleet: three worker processes of one crawl on one Redis, against a site
in a process of its own, one worker killed and one stopped while requests wait on an origin
whose robots.txt fails. Everything asserted is read from the site's request log.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

from tests.fleet_worker import TDMREP_PATH, Fleet, wait_until

ORIGINS = 3
PAGES = 20


def test_parked_requests_survive_a_worker_killed_holding_the_lease_and_one_stopped(
    tmp_path: Path, redis_url: str
) -> None:
    """Requests parked for an origin whose robots.txt is being fetched, then unavailable,
    survive the worker that holds that fetch's lease being killed, and another worker being
    stopped with SIGINT: the survivors and a fresh worker request every allowed page, none
    forbidden, and each robots.txt that answers 200 once for the whole fleet."""
    with Fleet(tmp_path, redis_url) as fleet:
        origins = fleet.start_site(ORIGINS, PAGES, hold=True, outage=True)
        failing = origins[0]
        allowed = fleet.allowed_pages()
        waiting = {url for url in allowed if url.startswith(f"{failing}/")}
        fleet.seed(
            [f"{origin}/p/{i}" for i in range(PAGES) for origin in origins]
            + [f"{origin}/private/{i}" for i in range(0, PAGES, 5) for origin in origins]
        )
        for name in ("w1", "w2", "w3"):
            fleet.start_worker(name)
        fleet.wait_opened("w1", "w2", "w3")

        # The site holds the failing origin's robots.txt unanswered, so one worker holds the
        # fetch lease; the healthy origins are crawled and the failing one's pages all wait
        # in Redis. (The kill waits for that: a request a worker has just taken from a queue
        # is in that process alone for a moment, whoever's queue it was, and so is one waiting
        # inside its downloader for a robots.txt fetch, for ROBOTSTXT_HOLD_TIME at most.)
        def parked_and_quiet() -> bool:
            requested = {hit.url for hit in fleet.hits()}
            return bool(
                fleet.lease_holder(failing)
                and allowed - waiting <= requested
                and not fleet.queued()
                and waiting <= fleet.parked(failing)
                and not fleet.holding(failing)
            )

        wait_until(parked_and_quiet, 30, "the failing origin's pages to be parked in Redis")
        killed = fleet.lease_holder(failing)
        assert killed is not None
        fleet.kill(killed)
        fleet.end("hold")

        # Once the dead worker's lease expires another worker fetches: the outage proper.
        wait_until(
            lambda: any(
                hit.url == f"{failing}/robots.txt" and hit.status == "503" for hit in fleet.hits()
            ),
            30,
            "another worker to take the fetch over",
        )
        stopped = fleet.running()[0]
        fleet.interrupt(stopped)
        assert waiting <= fleet.parked(failing)  # a clean stop leaves what waits in Redis

        fleet.start_worker("w4")
        fleet.wait_opened("w4")
        fleet.end("outage")
        fleet.finish(timeout=40)
        assert not fleet.running()

        hits = fleet.hits()
        missing = allowed - {hit.url for hit in hits}
        lost = fleet.losses(killed, missing)
        stopped_log = (tmp_path / f"worker-{stopped}.scrapy.log").read_text()

    assert not missing, lost
    assert not [hit for hit in hits if hit.path.startswith("/private/")]
    robots_fetched = Counter(
        hit.origin for hit in hits if hit.path == "/robots.txt" and hit.status == "200"
    )
    assert robots_fetched == Counter(origins)
    # The failing origin's pages waited for its robots.txt: none was requested before the
    # site answered it with a 200.
    recovered_at = next(
        i
        for i, hit in enumerate(hits)
        if hit.url == f"{failing}/robots.txt" and hit.status == "200"
    )
    first_page = next(i for i, hit in enumerate(hits) if hit.url.startswith(f"{failing}/p/"))
    assert first_page > recovered_at
    assert "request(s) dropped" not in stopped_log


def test_tdmrep_json_is_fetched_once_per_origin_for_the_whole_fleet(
    tmp_path: Path, redis_url: str
) -> None:
    """TDMRep's well-known file travels with robots.txt through RedisStorage: three workers
    crawl three origins, and each origin's tdmrep.json is requested once for the fleet in the
    cache lifetime, each before any page of its origin; every worker's items carry what it
    says, those of workers that adopted the state from Redis too."""
    with Fleet(tmp_path, redis_url, ROBOTSMETA_TDMREP=True) as fleet:
        origins = fleet.start_site(ORIGINS, PAGES, hold=False, outage=False)
        allowed = fleet.allowed_pages()
        fleet.start_each_with_own_urls(
            {
                name: [f"{origin}/p/{i}" for i in range(index, PAGES, 3) for origin in origins]
                for index, name in enumerate(("w1", "w2", "w3"))
            }
        )
        fleet.finish(timeout=40)
        hits = fleet.hits()
        exports = [path.read_text().splitlines() for path in tmp_path.glob("items-*.jsonl")]
        items = [json.loads(line) for lines in exports for line in lines]
    assert allowed <= {hit.url for hit in hits}
    assert {item["url"] for item in items} == allowed
    for item in items:
        reserved = urlsplit(item["url"]).path.startswith("/p/1")
        assert item["robots"]["tdm_reservation"] is reserved, item
        assert item["robots"]["tdm_file"] == "read"
    # More than one worker crawled: those that did not fetch a file read it from Redis.
    assert len([lines for lines in exports if lines]) > 1
    fetched = Counter(hit.origin for hit in hits if hit.path == TDMREP_PATH)
    assert fetched == Counter(origins)
    assert Counter(hit.origin for hit in hits if hit.path == "/robots.txt") == Counter(origins)
    for origin in origins:
        file_at = next(i for i, hit in enumerate(hits) if hit.url == origin + TDMREP_PATH)
        first_page = next(i for i, hit in enumerate(hits) if hit.url.startswith(f"{origin}/p/"))
        assert first_page > file_at
