"""Broad crawls: more origins than memory holds. RFC 9309 §2.4 lets a crawler cache robots.txt
for up to 24 hours; the cache here keeps what leaves memory on disk, so each origin's
robots.txt is fetched once in that lifetime however many origins the crawl meets."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from scrapy import signals
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robotsmeta import RobotsTxtMiddleware
from scrapy_robotsmeta.robotstxt.cache import STATE_BYTES
from scrapy_robotsmeta.robotstxt.statefile import FILENAME, StateFile
from scrapy_robotsmeta.testing import Site, html, links_page, static
from tests.crawl import FollowAllSpider, ListSpider, crawl, make_crawler

ORIGINS = 25
LAPS = 3
ROBOTS_TXT = "User-agent: *\nDisallow: /private\n"
# Room for one origin's live state (with its small robots.txt) and the records of two or three
# others: under a fifth of the origins.
A_FEW_ORIGINS = 2 * (STATE_BYTES + 8 * len(ROBOTS_TXT))


@pytest.fixture
def ring() -> Iterator[list[Site]]:
    """ORIGINS origins whose pages lead from each to the next, LAPS times round the ring:
    every origin is met again after all the others."""
    sites = [Site().start() for _ in range(ORIGINS)]
    for index, site in enumerate(sites):
        site.add({"/robots.txt": static(ROBOTS_TXT)})
        for lap in range(LAPS):
            if index + 1 < len(sites):
                onward = sites[index + 1].url(f"/lap{lap}")
            elif lap + 1 < LAPS:
                onward = sites[0].url(f"/lap{lap + 1}")
            else:
                onward = site.url("/end")
            site.add({f"/lap{lap}": links_page(onward)})
        site.add({"/end": html("end")})
    yield sites
    for site in sites:
        pytest_twisted.blockon(site.stop())


def watch_memory(crawler: Any, record: list[tuple[int, int]]) -> None:
    """Record, at each response, the origins in memory and those in the state file."""

    def received(**kwargs: Any) -> None:
        middleware = crawler.get_downloader_middleware(RobotsTxtMiddleware)
        state_file = middleware.core.cache.second
        assert isinstance(state_file, StateFile)
        record.append((len(middleware.core.cache), len(state_file)))

    crawler.signals.connect(received, signals.response_received, weak=False)


@deferred_f_from_coro_f
async def test_robots_txt_is_fetched_once_per_origin_when_memory_holds_a_fifth(
    ring: list[Site],
) -> None:
    crawler = make_crawler(FollowAllSpider, {"ROBOTSTXT_CACHE_MEMORY": A_FEW_ORIGINS})
    record: list[tuple[int, int]] = []
    watch_memory(crawler, record)
    result = await crawl([ring[0].url("/lap0")], crawler=crawler)

    for site in ring:
        assert site.hits["/robots.txt"] == 1
        assert all(site.hits[f"/lap{lap}"] == 1 for lap in range(LAPS))
    assert max(in_memory for in_memory, _ in record) < ORIGINS / 5
    assert max(on_disk for _, on_disk in record) >= ORIGINS - ORIGINS / 5
    stats = result.crawler.stats.get_stats()
    assert stats["robotstxt/cache/disk_hits"] >= ORIGINS * (LAPS - 1) - ORIGINS / 5
    assert stats["robotstxt/cache/spilled"] > 0
    assert stats.get("robotstxt/cache/forgotten", 0) == 0


@deferred_f_from_coro_f
async def test_without_the_disk_tier_an_evicted_origin_is_fetched_again(
    ring: list[Site],
) -> None:
    """ROBOTSTXT_CACHE_SPILL = False trades the fetches for the disk."""
    settings = {"ROBOTSTXT_CACHE_MEMORY": A_FEW_ORIGINS, "ROBOTSTXT_CACHE_SPILL": False}
    result = await crawl([ring[0].url("/lap0")], settings)
    assert all(site.hits["/robots.txt"] == LAPS for site in ring)
    assert result.crawler.stats.get_value("robotstxt/cache/forgotten") >= ORIGINS


@deferred_f_from_coro_f
async def test_a_resumed_job_fetches_no_robots_txt_again(ring: list[Site], tmp_path: Path) -> None:
    """With JOBDIR, the states still in memory are written at close: the next run of the job
    reads every robots.txt it needs from disk (within its lifetime)."""
    settings = {"JOBDIR": str(tmp_path)}
    await crawl([ring[0].url("/lap0")], settings)
    assert len(StateFile(tmp_path)) == ORIGINS
    assert (tmp_path / FILENAME).exists()
    # The next run: new pages of every origin (the job's duplicate filter saw the old ones).
    for site in ring:
        site.add({"/more": html("more")})
    await crawl([site.url("/more") for site in ring], settings)
    assert all(site.hits["/more"] == 1 for site in ring)
    assert all(site.hits["/robots.txt"] == 1 for site in ring)


@deferred_f_from_coro_f
async def test_without_the_disk_tier_released_requests_keep_their_origin_in_memory(
    ring: list[Site],
) -> None:
    """Requests released by an origin's fetch are decided by its rules before it can leave
    memory: forgetting it in between would fetch its robots.txt again and park them again,
    over and over (the crawl never ended). Every page of every origin is asked for at once,
    shuffled; an origin is fetched again only for requests that were not waiting on it."""
    urls = [site.url(f"/lap{lap}") for site in ring for lap in range(LAPS)]
    random.Random(3).shuffle(urls)
    settings = {
        "ROBOTSTXT_CACHE_MEMORY": A_FEW_ORIGINS,
        "ROBOTSTXT_CACHE_SPILL": False,
        "CLOSESPIDER_TIMEOUT": 30,  # what ends the crawl if it goes round in circles
    }
    result = await crawl(urls, settings, ListSpider)
    pages = [url for url in result.downloaded if not url.endswith("/robots.txt")]
    assert sorted(pages) == sorted(urls)
    assert max(site.hits["/robots.txt"] for site in ring) <= LAPS
