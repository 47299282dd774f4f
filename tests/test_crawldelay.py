"""Crawl-delay and the fleet-wide download delay in real crawls: an origin's requests spaced
by turns, the requests waiting for a turn held out of the downloader, the bound
ROBOTSTXT_MAX_CRAWL_DELAY, and the turns of several crawlers sharing one Redis (each crawler
stands for a process of a fleet here; tests/test_crawl_crawldelay.py runs real processes).

Crawl-delay is no RFC 9309 field; Bing and Yandex read it as the seconds between two requests
of the crawler. Every spacing asserted is read from the site's own request log."""

from __future__ import annotations

import itertools
import logging
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request, signals
from scrapy.utils.defer import (
    deferred_f_from_coro_f,
    deferred_from_coro,
    maybe_deferred_to_future,
)
from twisted.internet.defer import DeferredList

from scrapy_robotsmeta._compat import download
from scrapy_robotsmeta.crawldelay import max_crawl_delay
from scrapy_robotsmeta.startup import ConfigurationError
from scrapy_robotsmeta.testing import Site, delayed, html, static
from tests.crawl import ListSpider, crawl, make_crawler, pages_fetched, wait_for
from tests.redisserver import redis_server

PUBLISHED = "robotstxt/redis/published"


def page_times(site: Site, prefix: str = "/p/") -> list[float]:
    return sorted(at for at, path in site.log if path.startswith(prefix))


def gaps(times: list[float]) -> list[float]:
    return [later - earlier for earlier, later in itertools.pairwise(times)]


# How far the reactor's other work may hold one request back between its turn and its arrival
# at the site (both run in this process), more than the next one, on a loaded machine: the
# site may see two requests this much closer than their turns were.
ARRIVAL_JITTER = 0.05


def assert_spaced(times: list[float], interval: float) -> None:
    """Every two consecutive *times* are *interval* apart, as the site can tell."""
    assert min(gaps(times)) >= interval - ARRIVAL_JITTER, gaps(times)


def add_pages(site: Site, robots: str, count: int) -> list[str]:
    site.add({"/robots.txt": static(robots)})
    site.add({f"/p/{i}": html(f"page {i}") for i in range(count)})
    return [site.url(f"/p/{i}") for i in range(count)]


def redis_settings(redis_url: str, **extra: Any) -> dict[str, Any]:
    return {
        "ROBOTSTXT_STORAGE": "scrapy_robotsmeta.storage.RedisStorage",
        "ROBOTSTXT_REDIS_URL": redis_url,
        "ROBOTSTXT_REDIS_POLL_INTERVAL": 0.1,
        **extra,
    }


async def crawl_in_turn(site: Site, urls: list[str], settings: dict[str, Any]) -> list[Any]:
    """Two crawlers of one spider on one Redis, each given half of *urls*: the second starts
    once the first has published robots.txt (before, its requests would be parked in Redis
    and released by the first, which would crawl them all), and once the first's first page
    is at the site: starting a crawler blocks this process's reactor for a moment, which would
    hold back a request that took its turn already, and the site would see it late and the
    next one on time."""
    first = make_crawler(ListSpider, settings)
    second = make_crawler(ListSpider, settings)
    half = len(urls) // 2
    runs = [deferred_from_coro(crawl(urls[:half], crawler=first, spider_cls=ListSpider))]
    await wait_for(lambda: any(path == "/robots.txt" for _, path in site.log))
    await wait_for(lambda: first.stats is not None and first.stats.get_value(PUBLISHED, 0) > 0)
    await wait_for(lambda: bool(page_times(site)))
    runs.append(deferred_from_coro(crawl(urls[half:], crawler=second, spider_cls=ListSpider)))
    done = DeferredList(runs, fireOnOneErrback=True)
    return [result for _, result in await maybe_deferred_to_future(done)]


def pages_downloaded(result: Any) -> int:
    """Pages a crawler downloaded itself (robots.txt aside)."""
    return int(result.stat("downloader/response_count") - result.stat("robotstxt/response_count"))


@deferred_f_from_coro_f
async def test_crawl_delay_spaces_every_request_of_the_origin(site: Site) -> None:
    """Every two requests of the origin are at least the Crawl-delay apart, even with Scrapy's
    random variation of the download delay on (its default)."""
    urls = add_pages(site, "User-agent: *\nCrawl-delay: 0.2\n", 4)
    result = await crawl(urls, {"ROBOTSTXT_OBEY_CRAWL_DELAY": True}, ListSpider)
    times = page_times(site)
    assert len(times) == 4
    assert_spaced(times, 0.2)
    assert result.stat("robotstxt/crawl_delay_applied") == 1  # one origin slowed
    assert result.stat("robotstxt/crawl_delay/max") == pytest.approx(0.2)
    assert result.stat("robotstxt/crawl_delay/set_aside") >= 1


@deferred_f_from_coro_f
async def test_crawl_delay_ignored_unless_enabled(site: Site) -> None:
    site.add({"/robots.txt": static("User-agent: *\nCrawl-delay: 5\n"), "/p": html("ok")})
    result = await crawl([site.url("/p")], spider_cls=ListSpider)
    assert pages_fetched(site) == {"/p"}
    assert result.stat("robotstxt/crawl_delay_applied") == 0


@deferred_f_from_coro_f
async def test_requests_waiting_for_a_turn_hold_no_place_of_concurrent_requests(
    site: Site, other_site: Site
) -> None:
    """With two places in all (CONCURRENT_REQUESTS = 2) and the delayed origin's requests
    taken first (Scrapy's scheduler hands out the last start requests first), the origin
    without a delay is crawled to its last page, two requests at a time, while the delayed
    origin's requests wait for their turns: they wait out of the downloader. (Waiting inside
    it, two of them would fill both places until their turns.)"""
    delayed_urls = add_pages(site, "User-agent: *\nCrawl-delay: 1\n", 4)
    other_site.add({"/robots.txt": static("User-agent: *\nAllow: /\n")})
    other_site.add({f"/p/{i}": delayed(0.02, html(f"page {i}")) for i in range(30)})
    other_urls = [other_site.url(f"/p/{i}") for i in range(30)]
    settings = {"ROBOTSTXT_OBEY_CRAWL_DELAY": True, "CONCURRENT_REQUESTS": 2}
    crawler = make_crawler(ListSpider, settings)
    in_flight: set[Any] = set()
    most = 0

    def reached(request: Any, spider: Any) -> None:
        nonlocal most
        if request.url.startswith(other_site.url("/p/")):
            in_flight.add(request)
            most = max(most, len(in_flight))

    def left(request: Any, spider: Any) -> None:
        in_flight.discard(request)

    crawler.signals.connect(reached, signals.request_reached_downloader, weak=False)
    crawler.signals.connect(left, signals.request_left_downloader, weak=False)
    result = await crawl(other_urls + delayed_urls, crawler=crawler, spider_cls=ListSpider)
    other_done = max(page_times(other_site))
    assert len(page_times(other_site)) == 30
    assert len(page_times(site)) == 4
    # The delayed origin's requests still waited when the other one was done...
    assert len([at for at in page_times(site) if at <= other_done]) <= 2
    # ...which was crawled with both places.
    assert most == 2
    assert result.stat("robotstxt/crawl_delay/set_aside") >= 3


@deferred_f_from_coro_f
async def test_a_crawl_delay_over_the_bound_is_crawled_at_the_bound_with_a_warning(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    urls = add_pages(site, "User-agent: *\nCrawl-delay: 86400\n", 3)
    settings = {"ROBOTSTXT_OBEY_CRAWL_DELAY": True, "ROBOTSTXT_MAX_CRAWL_DELAY": 0.3}
    with caplog.at_level(logging.WARNING):
        result = await crawl(urls, settings, ListSpider)
    times = page_times(site)
    assert len(times) == 3  # crawled, never dropped
    assert_spaced(times, 0.3)
    warnings = [r.getMessage() for r in caplog.records if "Crawl-delay" in r.getMessage()]
    assert warnings == [
        f"Crawl-delay of {site.url('')} is 86400 s, over ROBOTSTXT_MAX_CRAWL_DELAY: its "
        "requests go 0.3 s apart instead"
    ]
    assert result.stat("robotstxt/crawl_delay/bounded") == 1
    assert result.stat("robotstxt/crawl_delay/max") == pytest.approx(0.3)


@deferred_f_from_coro_f
async def test_an_unbounded_crawl_delay_over_a_minute_is_obeyed_with_a_warning(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    urls = add_pages(site, "User-agent: *\nCrawl-delay: 120\n", 1)
    with caplog.at_level(logging.WARNING):
        result = await crawl(urls, {"ROBOTSTXT_OBEY_CRAWL_DELAY": True}, ListSpider)
    warnings = [r.getMessage() for r in caplog.records if "Crawl-delay" in r.getMessage()]
    assert warnings == [
        f"Crawl-delay of {site.url('')} is 120 s: its requests go that far apart "
        "(ROBOTSTXT_MAX_CRAWL_DELAY sets a bound)"
    ]
    assert result.stat("robotstxt/crawl_delay/max") == 120
    assert result.stat("robotstxt/crawl_delay/bounded") == 0


@deferred_f_from_coro_f
async def test_crawlers_sharing_redis_space_the_origin_by_one_crawl_delay(
    site: Site, redis_url: str
) -> None:
    """Two crawlers of one spider on one Redis are one crawler to the site: both download
    pages of the origin at the same time, and the site sees their requests together spaced
    by the Crawl-delay."""
    urls = add_pages(site, "User-agent: *\nCrawl-delay: 0.3\n", 8)
    settings = redis_settings(redis_url, ROBOTSTXT_OBEY_CRAWL_DELAY=True)
    results = await crawl_in_turn(site, urls, settings)
    times = page_times(site)
    assert len(times) == 8
    assert_spaced(times, 0.3)
    assert all(pages_downloaded(result) >= 1 for result in results)
    assert all(result.stat("robotstxt/crawl_delay/local_turns") == 0 for result in results)


@deferred_f_from_coro_f
async def test_the_fleet_download_delay_spaces_the_crawlers_together(
    site: Site, redis_url: str
) -> None:
    """ROBOTSTXT_FLEET_DOWNLOAD_DELAY: DOWNLOAD_DELAY between two requests of all the crawlers
    to the origin, its random variation (±50 % by default) included, with no Crawl-delay."""
    urls = add_pages(site, "User-agent: *\nAllow: /\n", 8)
    settings = redis_settings(redis_url, ROBOTSTXT_FLEET_DOWNLOAD_DELAY=True, DOWNLOAD_DELAY=0.3)
    results = await crawl_in_turn(site, urls, settings)
    times = page_times(site)
    assert len(times) == 8
    assert_spaced(times, 0.15)  # half of DOWNLOAD_DELAY, the shortest random wait
    assert all(pages_downloaded(result) >= 1 for result in results)


@deferred_f_from_coro_f
async def test_redis_failing_leaves_each_crawler_its_own_crawl_delay(
    site: Site, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis gone once robots.txt is known: the crawler spaces its own requests by the
    Crawl-delay, with one WARNING saying so and a stat counting the turns it took alone."""
    urls = add_pages(site, "User-agent: *\nCrawl-delay: 0.2\n", 4)
    with caplog.at_level(logging.WARNING), redis_server(tmp_path) as url:
        crawler = make_crawler(ListSpider, redis_settings(url, ROBOTSTXT_OBEY_CRAWL_DELAY=True))
        crawling = deferred_from_coro(crawl(urls, crawler=crawler, spider_cls=ListSpider))
        await wait_for(lambda: crawler.stats is not None and crawler.stats.get_value(PUBLISHED))
        # Stopped once a page is requested: stopping blocks the reactor for a moment, which
        # would hold back a request that took its turn already.
        await wait_for(lambda: bool(page_times(site)))
    result = await maybe_deferred_to_future(crawling)
    times = page_times(site)
    assert len(times) == 4
    assert_spaced(times, 0.2)
    assert result.stat("robotstxt/crawl_delay/local_turns") >= 1
    assert caplog.text.count("The fleet's turns cannot be read") == 1


@deferred_f_from_coro_f
async def test_a_request_downloaded_outside_the_scheduler_waits_its_turn_in_the_downloader(
    site: Site,
) -> None:
    """engine.download_async() never schedules: a request sent back to wait for its turn comes
    straight back, and waits for the turn there instead of looping."""
    urls = add_pages(site, "User-agent: *\nCrawl-delay: 0.2\n", 3)
    downloaded: list[int] = []

    class DirectSpider(ListSpider):
        async def parse_page(self, response: Any) -> Any:
            for url in urls[1:]:
                page = await download(self.crawler.engine, Request(url))
                downloaded.append(page.status)
            yield {"url": response.url}

    await crawl(urls[:1], {"ROBOTSTXT_OBEY_CRAWL_DELAY": True}, spider_cls=DirectSpider)
    assert downloaded == [200, 200]
    times = page_times(site)
    assert len(times) == 3
    assert_spaced(times, 0.2)


@pytest.mark.parametrize("value", ["thirty", -1, "nan"])
def test_a_max_crawl_delay_that_is_not_seconds_stops_the_start_naming_the_setting(
    value: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(ConfigurationError):
        max_crawl_delay(value)
    assert caplog.messages == [
        "Crawl not started: ROBOTSTXT_MAX_CRAWL_DELAY must be a number of seconds (or None for "
        f"no bound), not {value!r}"
    ]


@pytest.mark.parametrize(("value", "bound"), [(None, None), ("", None), ("30", 30.0), (0.5, 0.5)])
def test_a_max_crawl_delay_is_seconds_or_none(value: Any, bound: float | None) -> None:
    assert max_crawl_delay(value) == bound
