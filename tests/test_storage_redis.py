"""RedisStorage in real crawls: several crawlers of one spider share one robots.txt state.

Two crawlers in one reactor stand for two worker processes here (the fleet suite runs real
processes); each has its own cache, parking and fetcher, and they meet only in Redis.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis
from scrapy import Request
from scrapy.utils.defer import (
    deferred_f_from_coro_f,
    deferred_from_coro,
    maybe_deferred_to_future,
)
from twisted.internet.defer import DeferredList
from twisted.internet.task import Clock, deferLater

from scrapy_robotsmeta.reactor import Clock as ClockProtocol
from scrapy_robotsmeta.robotstxt.core import RobotsTxtCore
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import unavailable
from scrapy_robotsmeta.robotstxt.state import OriginState, Timing
from scrapy_robotsmeta.serializers import RequestCodec
from scrapy_robotsmeta.storage import RedisStorage
from scrapy_robotsmeta.storage.redis import StorageConfigError
from scrapy_robotsmeta.testing import Site, delayed, html, installed_reactor, sequence, static
from tests.crawl import ListSpider, crawl, make_crawler, stop_when, wait_for
from tests.redisserver import free_port, redis_server

ALLOW = static("User-agent: *\nDisallow: /forbidden\n")
UNAVAILABLE = static("", status=503)
PREFIX = "robotsmeta:list"


def settings(redis_url: str, **extra: Any) -> dict[str, Any]:
    return {
        "ROBOTSTXT_STORAGE": "scrapy_robotsmeta.storage.RedisStorage",
        "ROBOTSTXT_REDIS_URL": redis_url,
        "ROBOTSTXT_REDIS_POLL_INTERVAL": 0.1,
        **extra,
    }


def pages(site: Site, count: int, robots: Any) -> list[str]:
    site.add({"/robots.txt": robots, "/forbidden": html("no")})
    site.add({f"/p/{i}": html(f"page {i}") for i in range(count)})
    return [site.url(f"/p/{i}") for i in range(count)]


def page_hits(site: Site) -> list[str]:
    return [path for _, path in site.log if path.startswith("/p/")]


async def together(*runs: Any) -> list[Any]:
    results = await maybe_deferred_to_future(DeferredList(list(runs), fireOnOneErrback=True))
    return [result for _, result in results]


def client(redis_url: str) -> redis.Redis:
    return redis.Redis.from_url(redis_url)


@deferred_f_from_coro_f
async def test_two_workers_fetch_robots_txt_once(site: Site, redis_url: str) -> None:
    """One fetch per origin per cache lifetime for the whole fleet: the second worker waits
    for the first one's result instead of fetching."""
    urls = pages(site, 20, delayed(0.3, ALLOW))
    a, b = await together(
        deferred_from_coro(crawl(urls[:10], settings(redis_url), ListSpider)),
        deferred_from_coro(crawl(urls[10:], settings(redis_url), ListSpider)),
    )
    assert site.hits["/robots.txt"] == 1
    assert sorted(page_hits(site)) == sorted(f"/p/{i}" for i in range(20))
    assert a.stat("robotstxt/request_count") + b.stat("robotstxt/request_count") == 1


@deferred_f_from_coro_f
async def test_a_later_worker_uses_the_published_rules(site: Site, redis_url: str) -> None:
    urls = pages(site, 3, ALLOW)
    await crawl(urls, settings(redis_url), ListSpider)
    later = await crawl([*urls, site.url("/forbidden")], settings(redis_url), ListSpider)
    assert site.hits["/robots.txt"] == 1
    assert later.stat("robotstxt/forbidden") == 1
    assert later.stat("robotstxt/redis/adopted") == 1


@deferred_f_from_coro_f
async def test_parked_requests_outlive_the_worker_that_parked_them(
    site: Site, redis_url: str
) -> None:
    """A worker stopped while its requests wait on an outage leaves them in Redis; another
    worker releases and fetches every one once the origin recovers."""
    urls = pages(site, 25, UNAVAILABLE)
    first = make_crawler(ListSpider, settings(redis_url, ROBOTSTXT_RETRY_DELAY=30))
    stop_when(first, lambda stats: stats.get("robotstxt/redis/parked", 0) >= len(urls))
    stopped = await crawl(urls, crawler=first)
    assert stopped.stat("robotstxt/dropped_on_close") == 0
    assert client(redis_url).llen(f"{PREFIX}:parked:{site.origin}") == len(urls)
    assert not page_hits(site)
    site.add({"/robots.txt": ALLOW})
    # The second worker's own start list is empty: everything it fetches came from Redis.
    await crawl([], settings(redis_url), ListSpider)
    assert sorted(page_hits(site)) == sorted(f"/p/{i}" for i in range(25))
    remaining = client(redis_url)
    assert remaining.llen(f"{PREFIX}:parked:{site.origin}") == 0
    assert not remaining.smembers(f"{PREFIX}:parked-origins")


@deferred_f_from_coro_f
async def test_an_outage_is_retried_on_one_schedule_for_the_fleet(
    site: Site, redis_url: str
) -> None:
    """An unavailable origin sees the retries of one worker, not one series per worker."""
    urls = pages(site, 10, sequence(UNAVAILABLE, UNAVAILABLE, UNAVAILABLE, ALLOW))
    extra = {"ROBOTSTXT_RETRY_DELAY": 0.2}
    await together(
        *(
            deferred_from_coro(crawl(urls[i::3], settings(redis_url, **extra), ListSpider))
            for i in range(3)
        )
    )
    assert site.hits["/robots.txt"] == 4
    assert sorted(page_hits(site)) == sorted(f"/p/{i}" for i in range(10))


@deferred_f_from_coro_f
async def test_a_lease_left_by_a_dead_worker_expires(site: Site, redis_url: str) -> None:
    """A worker that died holding the fetch lease blocks the origin only until the lease
    expires (by Redis's clock); then another worker fetches."""
    urls = pages(site, 5, ALLOW)
    client(redis_url).set(f"{PREFIX}:lease:{site.origin}", "dead-worker", px=500)
    result = await crawl(urls, settings(redis_url), ListSpider)
    assert site.hits["/robots.txt"] == 1
    assert len(page_hits(site)) == 5
    assert result.stat("robotstxt/redis/lease_busy") >= 1


@deferred_f_from_coro_f
async def test_a_fetch_slower_than_the_lease_keeps_its_lease(site: Site, redis_url: str) -> None:
    """The fetching worker renews its lease while the download lasts, so a slow robots.txt is
    not fetched a second time by a worker that took the lease for expired."""
    urls = pages(site, 10, delayed(1.0, ALLOW))
    extra = {"ROBOTSTXT_REDIS_LEASE_TIME": 0.3}
    await together(
        deferred_from_coro(crawl(urls[:5], settings(redis_url, **extra), ListSpider)),
        deferred_from_coro(crawl(urls[5:], settings(redis_url, **extra), ListSpider)),
    )
    assert site.hits["/robots.txt"] == 1
    assert len(page_hits(site)) == 10


@deferred_f_from_coro_f
async def test_every_key_but_parked_lists_expires(site: Site, redis_url: str) -> None:
    """A finished crawl leaves nothing that grows: states expire, leases are dropped, and
    parked lists are emptied."""
    urls = pages(site, 5, ALLOW)
    await crawl(urls, settings(redis_url), ListSpider)
    keys = client(redis_url).keys(f"{PREFIX}:*")
    assert keys == [f"{PREFIX}:state:{site.origin}".encode()]
    assert 0 < client(redis_url).pttl(keys[0]) <= (86400 + 600 + 60) * 1000


# Scrapy 2.13 masks an error raised while the engine is built with one of its own.
@pytest.mark.newest_scrapy
@deferred_f_from_coro_f
async def test_without_a_redis_url_the_crawl_stops_saying_what_is_missing() -> None:
    """A storage that cannot work must not turn robots.txt off: the crawl does not start."""
    with pytest.raises(StorageConfigError, match="ROBOTSTXT_REDIS_URL"):
        await crawl([], {"ROBOTSTXT_STORAGE": RedisStorage}, ListSpider)


@deferred_f_from_coro_f
async def test_redis_failing_mid_crawl_loses_nothing(
    site: Site, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis goes away while requests wait on an outage: the worker carries on alone, keeps
    what it parks meanwhile, and writes it to Redis once Redis is back (restarted with its
    data); every page is fetched once the origin recovers."""
    urls = pages(site, 30, UNAVAILABLE)
    port = free_port()
    extra = {"ROBOTSTXT_RETRY_DELAY": 0.2, "ROBOTSTXT_RETRY_MAX_DELAY": 0.2}
    crawler = make_crawler(ListSpider, settings(f"redis://127.0.0.1:{port}/0", **extra))

    def stat(name: str) -> int:
        assert crawler.stats is not None
        return int(crawler.stats.get_value(name, 0))

    with caplog.at_level(logging.WARNING), redis_server(tmp_path, port, persist=True):
        crawling = deferred_from_coro(crawl(urls[:15], crawler=crawler))
        await wait_for(lambda: stat("robotstxt/redis/parked") >= 15)
    # Redis is gone: these are parked in the worker, which retries robots.txt by itself.
    spider = crawler.spider
    assert isinstance(spider, ListSpider)
    for url in urls[15:]:
        crawler.engine.crawl(Request(url, callback=spider.parse_page))
    await wait_for(lambda: stat("robotstxt/redis/errors") >= 1 and stat("robotstxt/parked") >= 30)
    with redis_server(tmp_path, port, persist=True):
        await wait_for(lambda: stat("robotstxt/redis/parked") >= 30)
        site.add({"/robots.txt": ALLOW})
        await maybe_deferred_to_future(crawling)
    assert sorted(page_hits(site)) == sorted(f"/p/{i}" for i in range(30))
    # One WARNING when Redis fails and one when it answers again, per failure. A server that
    # is shutting down may still answer a call or two between its first refusals, so the
    # failure it ends on may be noticed after the last call that would have seen it answer.
    failures = caplog.text.count("Redis failed")
    recovered = stat("robotstxt/redis/recovered")
    assert failures >= 1
    assert caplog.text.count("Redis answers again") == recovered
    assert max(1, failures - 1) <= recovered <= failures
    assert stat("robotstxt/dropped_on_close") == 0
    # Each parked request is counted where it waited once, however many writes failed.
    assert stat("robotstxt/parked/memory") == stat("robotstxt/parked")


def settles(core: RobotsTxtCore, state: OriginState, clock: Clock) -> Any:
    """What the middleware asks a claim: whether the published state makes the fetch needless."""
    return lambda published: core.adopt_if_settling(state, published, clock.seconds())


def storage_of_a_worker(redis_url: str, clock: Clock) -> RedisStorage:
    """A worker's RedisStorage, outside a crawl: its time is *clock*'s."""
    crawler = make_crawler(ListSpider, settings(redis_url), clock)
    crawler.spider = ListSpider.from_crawler(crawler, start_urls=[])
    return RedisStorage(crawler)


@deferred_f_from_coro_f
async def test_a_retry_another_worker_just_made_is_not_made_again(
    redis_url: str, clock: Clock
) -> None:
    """One outage schedule for the fleet: a worker that goes to retry a failing robots.txt
    just after another worker retried it (and published the next retry for later) takes
    that schedule instead of fetching again, though the lease is free by then."""
    origin = Origin("http", "example.com", 80)
    first, second = storage_of_a_worker(redis_url, clock), storage_of_a_worker(redis_url, clock)
    cores = RobotsTxtCore(Timing(), 10**6), RobotsTxtCore(Timing(), 10**6)
    retried = cores[0].check(origin, clock.seconds()).state
    assert await first.claim_fetch(origin, settles(cores[0], retried, clock))
    cores[0].fetch_claimed(retried, clock.seconds())
    cores[0].settle(retried, unavailable("HTTP 503"), clock.seconds())
    await first.publish(origin, retried.snapshot(), None, fetched=True)
    assert client(redis_url).get(f"{PREFIX}:lease:{origin}") is None

    # Found the retry due before the outcome was published.
    late = cores[1].check(origin, clock.seconds()).state
    assert not await second.claim_fetch(origin, settles(cores[1], late, clock))
    # Each worker reads Redis's clock against its own (here one that stands still while real
    # time passes): the schedule comes through to within the time between the two readings.
    assert late.retry_at == pytest.approx(retried.retry_at, abs=1.0)
    assert client(redis_url).get(f"{PREFIX}:lease:{origin}") is None
    await first.close()
    await second.close()


# -- what Redis holds may be damaged --------------------------------------------------------


@pytest.mark.parametrize(
    "snapshot",
    [
        b"not json",
        b'{"version": 4, "kind": "rules"}',
        b'{"version": 4, "kind": "rules", "reason": "", "tries": "none", "expires_at": 1e12,'
        b' "given_up": false, "down_since": null, "failures": 0, "retry_at": null,'
        b' "give_up_at": null}',
        b"[1, 2]",
    ],
    ids=["not-json", "fields-missing", "field-of-another-type", "not-an-object"],
)
@deferred_f_from_coro_f
async def test_a_damaged_state_in_redis_is_ignored_and_replaced_by_the_next_fetch(
    site: Site, redis_url: str, snapshot: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    """A state this version cannot read is no reason to stop: one WARNING, a stat, and the
    origin is fetched as if Redis had nothing, its pages crawled; the fetch overwrites it."""
    urls = pages(site, 50, ALLOW)
    key = f"{PREFIX}:state:{site.origin}"
    client(redis_url).hset(key, mapping={"snapshot": snapshot, "body": b""})
    with caplog.at_level(logging.WARNING):
        result = await crawl(urls, settings(redis_url, CLOSESPIDER_TIMEOUT=60), ListSpider)
    assert result.stat("finish_reason") == "finished"
    assert len(page_hits(site)) == 50
    assert site.hits["/robots.txt"] == 1
    assert result.stat("robotstxt/redis/unreadable_state") == 1
    assert caplog.text.count(f"Ignored the robots.txt state of {site.origin} in Redis") == 1
    published = client(redis_url).hget(key, "snapshot")
    assert isinstance(published, bytes)
    assert json.loads(published)["kind"] == "rules"


@deferred_f_from_coro_f
async def test_a_malformed_parked_request_is_skipped_not_its_neighbours(
    site: Site, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An entry of a parked list that does not load is logged, counted and skipped; the
    requests popped with it are crawled."""
    urls = pages(site, 2, ALLOW)
    crawler = make_crawler(ListSpider)
    spider = crawler.spider = ListSpider.from_crawler(crawler, start_urls=[])
    codec = RequestCodec.from_crawler(crawler)
    first, second = (codec.dump(Request(url, callback=spider.parse_page)) for url in urls)
    assert first is not None
    assert second is not None
    redis = client(redis_url)
    redis.rpush(f"{PREFIX}:parked:{site.origin}", first, b"not a pickle", second)
    redis.sadd(f"{PREFIX}:parked-origins", str(site.origin))
    with caplog.at_level(logging.WARNING):
        result = await crawl([], settings(redis_url), ListSpider)
    assert sorted(page_hits(site)) == ["/p/0", "/p/1"]
    assert result.stat("robotstxt/redis/malformed") == 1
    assert f"Skipped 1 request(s) parked in Redis for {site.origin}" in caplog.text
    assert not redis.exists(f"{PREFIX}:parked:{site.origin}", f"{PREFIX}:parked-origins")


# -- one clock for the fleet --------------------------------------------------------------


class SkewedClock:
    """The reactor's time, off by *skew* seconds: a worker whose clock is wrong."""

    def __init__(self, skew: float) -> None:
        self.skew = skew
        self.reactor: ClockProtocol = installed_reactor()

    def seconds(self) -> float:
        return self.reactor.seconds() + self.skew

    def callLater(self, delay: float, callable: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        return self.reactor.callLater(delay, callable, *args, **kw)


@deferred_f_from_coro_f
async def test_a_worker_whose_clock_is_ahead_keeps_the_fleets_outage_schedule(
    site: Site, redis_url: str
) -> None:
    """The outage's give-up time is shared in Redis's clock: a worker a minute ahead, which
    adopts an outage another worker started, waits for the same retries instead of finding
    the deadline a minute past and giving the origin up for the whole fleet."""
    failing = delayed(0.5, UNAVAILABLE)
    urls = pages(site, 10, sequence(failing, failing, failing, ALLOW))
    extra = {
        "ROBOTSTXT_RETRY_DELAY": 0.2,
        "ROBOTSTXT_RETRY_MAX_DELAY": 0.2,
        "ROBOTSTXT_UNAVAILABLE_TIMEOUT": 20,
    }
    on_time = make_crawler(ListSpider, settings(redis_url, **extra))
    ahead = make_crawler(ListSpider, settings(redis_url, **extra), SkewedClock(60.0))
    first = deferred_from_coro(crawl(urls[:5], crawler=on_time))
    # Its second try in flight (the lease held): the worker ahead adopts the outage.
    assert on_time.stats is not None
    await wait_for(lambda: on_time.stats.get_value("robotstxt/request_count", 0) >= 2)
    second = deferred_from_coro(crawl(urls[5:], crawler=ahead))
    results = await together(first, second)
    assert sorted(page_hits(site)) == sorted(f"/p/{i}" for i in range(10))
    assert [r.stat("robotstxt/given_up") for r in results] == [0, 0]
    assert results[1].stat("robotstxt/redis/adopted") >= 1
    published = client(redis_url).hget(f"{PREFIX}:state:{site.origin}", "snapshot")
    assert isinstance(published, bytes)
    assert abs(json.loads(published)["expires_at"] - 86400 - time.time()) < 30


@deferred_f_from_coro_f
async def test_the_give_up_says_how_long_the_outage_was_seen(
    site: Site, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The give-up WARNING reports the outage's length as measured, in one clock, by a worker
    whose clock is off: not a minute more or less."""
    urls = pages(site, 3, UNAVAILABLE)
    extra = {"ROBOTSTXT_RETRY_DELAY": 0.2, "ROBOTSTXT_UNAVAILABLE_TIMEOUT": 2}
    on_time = make_crawler(ListSpider, settings(redis_url, **extra))
    behind = make_crawler(ListSpider, settings(redis_url, **extra), SkewedClock(-60.0))
    with caplog.at_level(logging.WARNING):
        first = deferred_from_coro(crawl(urls[:2], crawler=on_time))
        assert on_time.stats is not None
        await wait_for(lambda: on_time.stats.get_value("robotstxt/outcome/unavailable", 0) >= 1)
        results = await together(first, deferred_from_coro(crawl(urls[2:], crawler=behind)))
    assert not page_hits(site)
    assert sum(r.stat("robotstxt/given_up") for r in results) >= 1
    assert sum(r.stat("robotstxt/unavailable_dropped") for r in results) == 3
    assert re.findall(r"unavailable for (\d+) s", caplog.text)
    assert set(re.findall(r"unavailable for (\d+) s", caplog.text)) <= {"2", "3"}


# -- a lone process -------------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_a_lone_process_waits_for_the_retries_of_an_unavailable_robots_txt(
    site: Site, redis_url: str
) -> None:
    """RFC 9309 §2.3.1.4: an unavailable robots.txt is retried; a crawl that is no fleet (a
    plain spider) stays open for the retries while its requests wait in Redis, and crawls
    them once robots.txt answers, as it would with MemoryStorage."""
    urls = pages(site, 30, sequence(UNAVAILABLE, UNAVAILABLE, ALLOW))
    extra = {"ROBOTSTXT_RETRY_DELAY": 1.0, "ROBOTSTXT_RETRY_MAX_DELAY": 1.0}
    result = await crawl(urls, settings(redis_url, **extra), ListSpider)
    assert result.stat("robotstxt/redis/parked") == 30
    assert sorted(page_hits(site)) == sorted(f"/p/{i}" for i in range(30))
    assert result.stat("robotstxt/parked/memory") == result.stat("robotstxt/parked")


class SlowWriteRedisStorage(RedisStorage):
    """A RedisStorage whose writes of parked requests take a second to reach Redis."""

    async def _push(self, origin: Origin, batch: list[bytes]) -> None:
        await maybe_deferred_to_future(deferLater(installed_reactor(), 1.0, lambda: None))
        await super()._push(origin, batch)


def slow_write_settings(redis_url: str) -> dict[str, Any]:
    # No hold: the start request is parked at once, while its robots.txt is being fetched.
    return settings(redis_url, ROBOTSTXT_STORAGE=SlowWriteRedisStorage, ROBOTSTXT_HOLD_TIME=0)


@deferred_f_from_coro_f
async def test_a_request_written_to_redis_after_its_release_is_still_crawled(
    site: Site, redis_url: str
) -> None:
    """A request being written to Redis when its robots.txt answers is released once the
    write ends: the crawl does not close with it left in Redis."""
    urls = pages(site, 1, ALLOW)
    result = await crawl(urls, slow_write_settings(redis_url), ListSpider)
    assert result.stat("robotstxt/parked") == 1
    assert page_hits(site) == ["/p/0"]
    assert not client(redis_url).exists(f"{PREFIX}:parked-origins")


@deferred_f_from_coro_f
async def test_redis_failing_while_a_request_is_written_loses_nothing_silently(
    site: Site, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis dies while a parked request is being written: the write fails, and the request,
    back with the process, is crawled when its robots.txt answers."""
    urls = pages(site, 1, ALLOW)
    port = free_port()
    crawler = make_crawler(ListSpider, slow_write_settings(f"redis://127.0.0.1:{port}/0"))
    assert crawler.stats is not None
    stats = crawler.stats
    with caplog.at_level(logging.WARNING):
        with redis_server(tmp_path, port):
            crawling = deferred_from_coro(crawl(urls, crawler=crawler))
            await wait_for(lambda: stats.get_value("robotstxt/parked", 0) >= 1)
        result = await maybe_deferred_to_future(crawling)
    assert "Redis failed" in caplog.text
    assert page_hits(site) == ["/p/0"]
    assert result.stat("robotstxt/dropped_on_close") == 0
    assert result.stat("robotstxt/parked/memory") == 1
    assert result.stat("test/errback_count") == 0


# Scrapy 2.13 masks an error raised while the engine is built with one of its own.
@pytest.mark.newest_scrapy
@pytest.mark.parametrize(
    ("url", "why"),
    [
        pytest.param(None, "cannot reach the Redis of ROBOTSTXT_REDIS_URL", id="nothing-there"),
        pytest.param("reddis://127.0.0.1:1/0", "is not a Redis URL", id="misspelt-scheme"),
    ],
)
@deferred_f_from_coro_f
async def test_a_redis_that_cannot_be_reached_at_start_stops_the_crawl_with_one_line(
    site: Site, caplog: pytest.LogCaptureFixture, url: str | None, why: str
) -> None:
    """A fleet member alone would fetch and park for itself: the crawl does not start, and
    the one ERROR line names the setting."""
    url = url or f"redis://127.0.0.1:{free_port()}/0"
    with caplog.at_level(logging.ERROR), pytest.raises(StorageConfigError, match=why):
        await crawl(pages(site, 1, ALLOW), settings(url), ListSpider)
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert errors[0].getMessage().startswith("Crawl not started: RedisStorage")
    assert "ROBOTSTXT_REDIS_URL" in errors[0].getMessage()
    assert site.hits["/robots.txt"] == 0
