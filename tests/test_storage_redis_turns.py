"""RedisStorage's turns (``storage/redis_turns.py``) against the tests' own redis-server: one
turn per origin for every process of the fleet, held by Redis's clock for one interval at
most, and a Redis that fails leaving each process to take its turns alone."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
import redis
from redis.asyncio import Redis
from scrapy.utils.defer import deferred_f_from_coro_f
from twisted.internet.task import Clock

from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.storage.redis_link import RedisLink
from scrapy_robotsmeta.storage.redis_turns import RedisTurns
from tests.redisserver import free_port

ORIGIN = Origin("https", "example.com", 443)
OTHER = Origin("https", "example.org", 443)
TURN = "robotsmeta:list:turn:https://example.com"

Links = Callable[..., RedisLink]


@deferred_f_from_coro_f
async def test_one_process_of_the_fleet_takes_the_turn_the_others_are_told_the_wait(
    redis_links: Links,
) -> None:
    first, second = RedisTurns(redis_links(), 1.0), RedisTurns(redis_links(), 1.0)
    assert await first.take(ORIGIN, 5.0) == 0.0
    wait = await second.take(ORIGIN, 5.0)
    assert wait is not None
    assert 4.0 < wait <= 5.0
    assert await first.take(ORIGIN, 5.0) is not None  # busy for its taker too
    assert await second.take(OTHER, 5.0) == 0.0  # each origin on its own


@deferred_f_from_coro_f
async def test_a_turn_lives_one_interval_by_redis_clock_whoever_took_it(
    redis_links: Links, redis_url: str
) -> None:
    """A process that dies having taken a turn holds the origin one interval at most: the
    turn expires in Redis, which no process has to give back."""
    turns = RedisTurns(redis_links(), 1.0)
    assert await turns.take(ORIGIN, 0.05) == 0.0
    client = redis.Redis.from_url(redis_url)
    assert 0 < int(client.pttl(TURN)) <= 50  # type: ignore[arg-type,unused-ignore]
    client.close()
    time.sleep(0.06)  # the interval passes (no process gives the turn back)
    assert await RedisTurns(redis_links(), 1.0).take(ORIGIN, 0.05) == 0.0


@deferred_f_from_coro_f
async def test_a_failing_redis_leaves_the_turn_to_the_process_and_is_asked_again_later(
    redis_links: Links, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    link = redis_links()
    link.redis = Redis.from_url(f"redis://127.0.0.1:{free_port()}/0")  # nobody listens
    turns = RedisTurns(link, 1.0)
    assert await turns.take(ORIGIN, 5.0) is None
    assert link.down
    assert link.stats.get_value("robotstxt/redis/errors") == 1
    assert caplog.text.count("Redis failed") == 1
    assert await turns.take(ORIGIN, 5.0) is None  # not asked: no second error
    assert link.stats.get_value("robotstxt/redis/errors") == 1
    clock.advance(1.0)
    assert await turns.take(ORIGIN, 5.0) is None  # asked again after the retry time
    assert link.stats.get_value("robotstxt/redis/errors") == 2
    await link.redis.aclose()
