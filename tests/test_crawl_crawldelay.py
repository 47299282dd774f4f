"""Crawl-delay for a real scrapy-redis fleet: three worker processes of one crawl on one
Redis, against a site in a process of its own whose origin 0 asks ``Crawl-delay: 1``. The
delay is asked of the crawler, not of each process (Bing's and Yandex's reading: the seconds
between two requests of the crawler); everything asserted is read from the site's request log
and the workers' step logs."""

from __future__ import annotations

import itertools
from pathlib import Path

from tests.fleet_worker import Fleet

ORIGINS = 3
PAGES = 6


def test_a_fleet_spaces_its_requests_to_an_origin_by_its_one_crawl_delay(
    tmp_path: Path, redis_url: str
) -> None:
    """Whichever worker sends them, every two consecutive page requests of the delayed origin
    reach the site at least 0.95 s apart (its robots.txt, fetched before the delay is known,
    aside); the other origins, on download slots of their own, are crawled by the same fleet
    meanwhile, and the delayed origin's pages are downloaded by more than one worker."""
    with Fleet(tmp_path, redis_url, ROBOTSTXT_OBEY_CRAWL_DELAY=True) as fleet:
        # Pages link to nothing: a worker following links could otherwise request another
        # worker's start URLs first, and the shared duplicate filter would drop them there.
        origins = fleet.start_site(
            ORIGINS, PAGES, hold=False, outage=False, crawl_delay=1, links=False
        )
        delayed = origins[0]
        workers = ("w1", "w2", "w3")
        fleet.start_each_with_own_urls(
            {
                name: [f"{origin}/p/{i}" for i in range(index, PAGES, 3) for origin in origins]
                for index, name in enumerate(workers)
            }
        )
        # Quiet for longer than a turn: requests waiting for theirs are in the workers alone.
        fleet.finish(timeout=60, quiet=3.0)
        hits = fleet.hits()
        # A worker sent a page when the page's last step there is being taken from the queue
        # (a page set aside for its turn is scheduled again after that).
        senders = {
            name
            for name in workers
            for url, steps in fleet.steps(name).items()
            if url.startswith(f"{delayed}/p/") and steps[-1] == "dequeued"
        }

    assert {hit.url for hit in hits} >= fleet.allowed_pages()
    delayed_pages = sorted(
        hit.time for hit in hits if hit.origin == delayed and hit.path != "/robots.txt"
    )
    assert len(delayed_pages) == PAGES
    gaps = [later - earlier for earlier, later in itertools.pairwise(delayed_pages)]
    assert min(gaps) >= 0.95, gaps
    # The other origins were crawled while the delayed one waited for its turns.
    others = [hit.time for hit in hits if hit.origin != delayed and hit.path.startswith("/p/")]
    assert min(others) < delayed_pages[-1]
    assert len(senders) >= 2
