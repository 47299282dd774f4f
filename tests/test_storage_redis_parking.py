"""RedisStorage's parked requests (``storage/redis_parking.py``), against the tests' own
redis-server: written to the origin's list in Redis, released oldest first by one process,
kept in this process while they cannot be written, and skipped when what Redis holds does
not load."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
import redis
from scrapy import Request
from scrapy.http import Response
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.serializers import RequestCodec, pickle
from scrapy_robotsmeta.storage.redis_link import RedisLink
from scrapy_robotsmeta.storage.redis_parking import RedisParking
from tests.crawl import ListSpider

ORIGIN = Origin("https", "example.com", 443)
PARKED = "robotsmeta:list:parked:https://example.com"
PARKED_ORIGINS = "robotsmeta:list:parked-origins"

Links = Callable[..., RedisLink]


def parking(link: RedisLink) -> RedisParking:
    """The parking of a RedisStorage that writes its batches as they are."""

    async def write(origin: Origin, batch: list[bytes]) -> None:
        await lot.push(origin, batch)

    lot = RedisParking(link, RequestCodec(pickle, link.spider), 10**6, write)
    return lot


def requests(link: RedisLink, count: int) -> list[Request]:
    spider = link.spider
    assert isinstance(spider, ListSpider)
    return [Request(f"https://example.com/{i}", callback=spider.parse_page) for i in range(count)]


def outside_the_spider(response: Response) -> None:
    """A callback no spider method: a request that names it cannot be serialised."""


async def parked_while_down(lot: RedisParking, batch: list[Request]) -> None:
    """Park *batch* while Redis is down, then write it as a poll does once Redis answers."""
    lot.link.down = True
    for request in batch:
        lot.park(ORIGIN, request)
    lot.link.down = False
    await lot.flush_waiting()


@deferred_f_from_coro_f
async def test_parked_requests_wait_in_redis_and_are_released_oldest_first(
    redis_links: Links, redis_url: str
) -> None:
    link = redis_links()
    lot = parking(link)
    await parked_while_down(lot, requests(link, 3))
    client = redis.Redis.from_url(redis_url)
    assert client.llen(PARKED) == 3
    assert client.smembers(PARKED_ORIGINS) == {b"https://example.com"}
    assert link.stats.get_value("robotstxt/redis/parked") == 3
    released = [request.url async for request in lot.release(ORIGIN)]
    assert released == [f"https://example.com/{i}" for i in range(3)]
    assert link.stats.get_value("robotstxt/redis/released") == 3
    # The origin is forgotten once its list is empty: nothing waits for it any more.
    assert not client.exists(PARKED, PARKED_ORIGINS)
    assert lot.origins() == []
    client.close()


@deferred_f_from_coro_f
async def test_a_request_that_cannot_be_serialised_stays_in_this_process(
    redis_links: Links, redis_url: str
) -> None:
    link = redis_links()
    lot = parking(link)
    await parked_while_down(lot, [Request("https://example.com/a", callback=outside_the_spider)])
    assert link.stats.get_value("robotstxt/parked/unserializable") == 1
    # Counted once where it waited, in memory, however many lots it went through.
    assert link.stats.get_value("robotstxt/parked/memory") == 1
    assert not redis.Redis.from_url(redis_url).exists(PARKED)
    assert lot.origins() == [ORIGIN]
    assert [request.url async for request in lot.release(ORIGIN)] == ["https://example.com/a"]


def test_an_entry_that_does_not_load_is_skipped_and_its_neighbours_kept(
    redis_links: Links, caplog: pytest.LogCaptureFixture
) -> None:
    link = redis_links()
    lot = parking(link)
    first, last = (lot.codec.dump(request) for request in requests(link, 2))
    assert first is not None
    assert last is not None
    with caplog.at_level(logging.WARNING, "scrapy_robotsmeta.storage.redis"):
        loaded = lot.loaded(ORIGIN, [first, b"\x80damaged", last])
    assert [request.url for request in loaded] == [
        "https://example.com/0",
        "https://example.com/1",
    ]
    assert link.stats.get_value("robotstxt/redis/malformed") == 1
    assert (
        caplog.records[0]
        .getMessage()
        .startswith(
            "Skipped 1 request(s) parked in Redis for https://example.com that could not be read"
        )
    )


@deferred_f_from_coro_f
async def test_origins_parked_by_the_fleet_wait_only_while_redis_answers(
    redis_links: Links, redis_url: str
) -> None:
    """What waits in Redis cannot be released while Redis is down: the crawl does not wait
    for it then. A member of the set that is no origin is left out."""
    redis.Redis.from_url(redis_url).sadd(PARKED_ORIGINS, "https://example.com", "not an origin")
    link = redis_links()
    lot = parking(link)
    await lot.read_fleet_parked()
    assert lot.origins() == [ORIGIN]
    link.down = True
    assert lot.origins() == []


@deferred_f_from_coro_f
async def test_close_counts_the_requests_it_cannot_keep_and_says_what_stays_in_redis(
    redis_links: Links, caplog: pytest.LogCaptureFixture
) -> None:
    link = redis_links()
    lot = parking(link)
    unserialisable = Request("https://example.com/a", callback=outside_the_spider)
    lot.link.down = True
    for request in [*requests(link, 2), unserialisable]:
        lot.park(ORIGIN, request)
    lot.link.down = False
    with caplog.at_level(logging.INFO, "scrapy_robotsmeta.storage.redis"):
        assert await lot.close() == 1
    assert link.stats.get_value("robotstxt/redis/parked") == 2
    assert caplog.records[-1].getMessage() == (
        "Requests parked for the robots.txt of 1 origin(s) stay in Redis, for another "
        "process of the crawl or its next run"
    )
