"""RedisStorage's link to Redis (``storage/redis_link.py``): the checks before a crawl starts,
the names of the keys, Redis failing and answering again, and the fleet's clock."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

import pytest
import redis
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.storage.redis_link import (
    CLOCK_SLACK,
    RedisLink,
    StorageConfigError,
    configured_url,
)
from tests.crawl import ListSpider, make_crawler
from tests.redisserver import free_port

ORIGIN = Origin("https", "example.com", 443)

Links = Callable[..., RedisLink]


def test_keys_are_named_under_the_prefix_of_the_spider(redis_links: Links) -> None:
    link = redis_links()
    assert link.key("state", ORIGIN) == "robotsmeta:list:state:https://example.com"
    assert link.key("lease", ORIGIN) == "robotsmeta:list:lease:https://example.com"
    assert link.key("parked-origins") == "robotsmeta:list:parked-origins"


def test_the_key_prefix_setting_may_name_the_spider(redis_links: Links) -> None:
    link = redis_links(ROBOTSTXT_REDIS_KEY_PREFIX="crawls:%(spider)s:robots")
    assert link.key("state", ORIGIN) == "crawls:list:robots:state:https://example.com"


def test_the_package_url_wins_over_scrapy_redis_one() -> None:
    both = make_crawler(
        ListSpider, {"ROBOTSTXT_REDIS_URL": "redis://a:1/0", "REDIS_URL": "redis://b:2/0"}
    )
    assert configured_url(both) == "redis://a:1/0"
    scrapy_redis_only = make_crawler(ListSpider, {"REDIS_URL": "redis://b:2/0"})
    assert configured_url(scrapy_redis_only) == "redis://b:2/0"


def test_no_url_at_all_is_refused_naming_the_setting() -> None:
    with pytest.raises(StorageConfigError, match="needs ROBOTSTXT_REDIS_URL"):
        configured_url(make_crawler(ListSpider))


def test_without_redis_py_the_line_names_the_package_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A missing optional dependency is one line naming what to install."""
    monkeypatch.setitem(sys.modules, "redis.asyncio", None)  # import redis.asyncio then fails
    crawler = make_crawler(ListSpider, {"ROBOTSTXT_REDIS_URL": "redis://a:1/0"})
    with pytest.raises(StorageConfigError, match=r"needs redis-py: pip install 'redis>=5\.0\.1'"):
        configured_url(crawler)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        pytest.param(None, "cannot reach the Redis of ROBOTSTXT_REDIS_URL", id="nothing-there"),
        pytest.param("reddis://127.0.0.1:1/0", "is not a Redis URL", id="misspelt-scheme"),
    ],
)
def test_a_redis_that_cannot_be_reached_is_refused(url: str | None, why: str) -> None:
    crawler = make_crawler(ListSpider)
    crawler.spider = ListSpider([])
    with pytest.raises(StorageConfigError, match=why):
        RedisLink(crawler, url or f"redis://127.0.0.1:{free_port()}/0")


def test_a_failure_is_counted_each_time_and_logged_once_per_outage(
    redis_links: Links, caplog: pytest.LogCaptureFixture
) -> None:
    link = redis_links()
    with caplog.at_level(logging.WARNING, "scrapy_robotsmeta.storage.redis"):
        link.failed(ConnectionError("refused"))
        link.failed(TimeoutError("slow"))
        link.answered()
        link.answered()
    assert link.stats.get_value("robotstxt/redis/errors") == 2
    assert link.stats.get_value("robotstxt/redis/recovered") == 1
    assert [record.getMessage() for record in caplog.records] == [
        "Redis failed (ConnectionError: refused); robots.txt state is kept in this process "
        "until it answers again",
        "Redis answers again",
    ]
    assert not link.down


def test_the_clock_offset_is_read_halfway_through_the_round_trip(redis_links: Links) -> None:
    link = redis_links()
    assert link.offset is None
    assert link.offset_or_zero() == 0.0
    # Redis said 1000.5 s during a round trip from 10 s to 12 s of this process's clock.
    link.measured((1000, 500_000), 10.0, 12.0)
    assert link.offset == 989.5


def test_a_reading_the_round_trip_explains_keeps_the_offset_in_use(redis_links: Links) -> None:
    """A state read back through a steady difference must be the one published: a reading
    within the round trip's uncertainty (plus the slack) does not move the offset."""
    link = redis_links()
    link.measured((1000, 0), 10.0, 12.0)
    link.measured((1001, 0), 10.0, 12.0)  # 1 s off: within the 1 s round trip's half + slack
    assert link.offset == 989.0
    link.measured((1001, int(2 * CLOCK_SLACK * 1e6)), 10.0, 12.0)
    assert link.offset == pytest.approx(990.0 + 2 * CLOCK_SLACK)


@deferred_f_from_coro_f
async def test_the_clock_is_read_from_redis_time(redis_links: Links, redis_url: str) -> None:
    """With this process's clock at 0, the offset is Redis's time itself."""
    client = redis.Redis.from_url(redis_url)
    before_s, before_us = client.time()
    link = redis_links()
    await link.read_clock()
    after_s, after_us = client.time()
    client.close()
    assert link.offset is not None
    assert before_s + before_us / 1e6 <= link.offset <= after_s + after_us / 1e6
