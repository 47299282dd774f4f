"""RedisStorage's link to Redis: the checks before it starts, the client, the names of its keys,
whether Redis answers, and Redis's clock, the one the fleet's published times are in.

Redis's clock minus this process's is measured on each round trip that asks for ``TIME``
(:meth:`RedisLink.timed`); the times a process publishes and adopts are moved through it, so
that a process whose clock is off keeps the fleet's schedule.
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any

from scrapy.utils.reactor import is_asyncio_reactor_installed

from scrapy_robotsmeta.defaults import PackageSettings
from scrapy_robotsmeta.keys import ROBOTSTXT_REDIS_ERRORS, ROBOTSTXT_REDIS_RECOVERED
from scrapy_robotsmeta.reactor import Tasks, crawler_clock

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.client import Pipeline
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from scrapy_robotsmeta.robotstxt.origin import Origin

# The storage's parts all log under the name of the module that holds RedisStorage, the one a
# user filters or raises the level of.
logger = logging.getLogger("scrapy_robotsmeta.storage.redis")

#: A new reading of Redis's clock replaces the one in use only when the two disagree by more
#: than the reading's round trip allows plus this (seconds): a state read back through a
#: steady difference is the one this process published, not a change to adopt.
CLOCK_SLACK = 0.01

_WHERE = "ROBOTSTXT_REDIS_URL (or scrapy-redis's REDIS_URL)"


class StorageConfigError(RuntimeError):
    """The storage cannot work as configured. Not NotConfigured: that would silently turn
    robots.txt off for the crawl instead of stopping it."""


def _redis_errors() -> tuple[type[BaseException], ...]:
    from redis.exceptions import RedisError  # noqa: PLC0415 (an optional dependency)

    return (RedisError, OSError)


def configured_url(crawler: Crawler) -> str:
    """The Redis URL of the crawl, once redis-py and Scrapy's asyncio reactor are known to be
    there: without any of the three the storage cannot start."""
    try:
        import redis.asyncio  # noqa: F401, PLC0415 (an optional dependency)
    except ImportError as exc:
        raise StorageConfigError(
            "RedisStorage needs redis-py: pip install 'redis>=5.0.1' (or install this package "
            "with its redis extra: pip install '.[redis]' from its folder)"
        ) from exc
    if not is_asyncio_reactor_installed():
        raise StorageConfigError(
            "RedisStorage needs Scrapy's asyncio reactor (TWISTED_REACTOR = "
            '"twisted.internet.asyncioreactor.AsyncioSelectorReactor", the default)'
        )
    settings = PackageSettings(crawler.settings)
    url: str = settings.get("ROBOTSTXT_REDIS_URL") or crawler.settings.get("REDIS_URL")
    if not url:
        raise StorageConfigError(
            "RedisStorage needs ROBOTSTXT_REDIS_URL (or scrapy-redis's REDIS_URL)"
        )
    return url


def _check_reachable(url: str, errors: tuple[type[BaseException], ...]) -> None:
    """Refuse to start on a Redis that cannot be reached: a fleet member that started alone
    would fetch and park for itself, which is not what its user configured. (One that fails
    later carries on alone until it answers again.)"""
    from redis import Redis  # noqa: PLC0415 (an optional dependency)

    try:
        client = Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
    except ValueError as exc:  # a scheme redis-py does not know, a malformed URL
        raise StorageConfigError(
            f"RedisStorage: {_WHERE} {url!r} is not a Redis URL: {exc}"
        ) from exc
    try:
        client.ping()
    except errors as exc:
        raise StorageConfigError(
            f"RedisStorage cannot reach the Redis of {_WHERE} {url!r} "
            f"({type(exc).__name__}: {exc}): start it, or fix the URL"
        ) from exc
    finally:
        client.close()


class RedisLink:
    """The client of one RedisStorage, and what every part of it shares about Redis."""

    def __init__(self, crawler: Crawler, url: str) -> None:
        from redis.asyncio import Redis  # noqa: PLC0415 (an optional dependency)

        assert crawler.stats is not None
        assert crawler.spider is not None
        self.stats: StatsCollector = crawler.stats
        self.spider = crawler.spider
        settings = PackageSettings(crawler.settings)
        self.prefix = settings.get("ROBOTSTXT_REDIS_KEY_PREFIX") % {"spider": self.spider.name}
        self.errors = _redis_errors()
        _check_reachable(url, self.errors)
        self.redis: Redis = Redis.from_url(
            url, socket_timeout=5, socket_connect_timeout=5, health_check_interval=30
        )
        #: This process, in the fetch leases it takes.
        self.id = uuid.uuid4().hex
        self.clock = crawler_clock(crawler)
        self.tasks = Tasks(self.stats)
        #: Redis's clock minus this process's (seconds), once measured.
        self.offset: float | None = None
        self.down = False

    def key(self, kind: str, origin: Origin | None = None) -> str:
        return f"{self.prefix}:{kind}" if origin is None else f"{self.prefix}:{kind}:{origin}"

    # -- Redis availability ----------------------------------------------------------------

    def failed(self, exc: BaseException) -> None:
        self.stats.inc_value(ROBOTSTXT_REDIS_ERRORS)
        if not self.down:
            self.down = True
            logger.warning(
                "Redis failed (%s: %s); robots.txt state is kept in this process until it "
                "answers again",
                type(exc).__name__,
                exc,
                extra={"spider": self.spider},
            )

    def answered(self) -> None:
        if self.down:
            self.down = False
            self.stats.inc_value(ROBOTSTXT_REDIS_RECOVERED)
            logger.warning("Redis answers again", extra={"spider": self.spider})

    async def close(self) -> None:
        try:
            await self.redis.aclose()
        except self.errors as exc:
            self.failed(exc)

    # -- one clock for the fleet -----------------------------------------------------------

    async def read_clock(self) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.time()
            await self.timed(pipe)

    async def timed(self, pipe: Pipeline) -> list[Any]:
        """Execute *pipe*, whose first command is TIME; return the other replies. The reading
        is taken halfway through the round trip, so it is off by half of it at most."""
        sent = self.clock.seconds()
        replies: list[Any] = await pipe.execute()
        self.measured(replies[0], sent, self.clock.seconds())
        return replies[1:]

    def measured(self, time: tuple[int, int], sent: float, answered: float) -> None:
        """Take in Redis's *time* (``TIME``'s seconds and microseconds), read by a round trip
        from *sent* to *answered* (this process's clock)."""
        seconds, microseconds = time
        offset = seconds + microseconds / 1e6 - (sent + answered) / 2
        error = (answered - sent) / 2 + CLOCK_SLACK
        if self.offset is None or abs(offset - self.offset) > error:
            self.offset = offset

    def offset_or_zero(self) -> float:
        return self.offset if self.offset is not None else 0.0
