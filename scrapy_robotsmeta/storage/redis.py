"""RedisStorage: one robots.txt state for every process of a crawl (a scrapy-redis fleet).

Keys, under ``ROBOTSTXT_REDIS_KEY_PREFIX`` (``robotsmeta:<spider name>`` by default):

======================  ====================================================================
``P:state:<origin>``    hash: ``snapshot`` (JSON of the origin's state) and ``body`` (the
                        robots.txt bytes, parsed by each process); expires when the state
                        stops mattering
``P:lease:<origin>``    which process fetches that robots.txt now; expires after
                        ``ROBOTSTXT_REDIS_LEASE_TIME`` unless renewed, by Redis's clock
``P:parked:<origin>``   list of parked requests (pickled ``Request.to_dict()``, as scrapy-redis
                        stores its queue); no expiry: emptied when released
``P:parked-origins``    set of the origins that have such a list
======================  ====================================================================

Every decision still reads this process's own cache only; Redis is asked when an origin is
new to this process, when a fetch is due, and every ``ROBOTSTXT_REDIS_POLL_INTERVAL`` seconds
for the origins that requests wait on. A Redis that fails makes the process carry on alone:
it fetches for itself and keeps what it parks (in memory, on disk past the memory limit)
until Redis answers again.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import TYPE_CHECKING, Any

from scrapy.utils.reactor import is_asyncio_reactor_installed
from twisted.internet.task import LoopingCall

from scrapy_robotsmeta.defaults import PackageSettings
from scrapy_robotsmeta.parking import ParkingLot
from scrapy_robotsmeta.reactor import Tasks, crawler_clock
from scrapy_robotsmeta.robotstxt import RobotsTxt
from scrapy_robotsmeta.robotstxt.origin import Origin, origin_of
from scrapy_robotsmeta.robotstxt.policy import ALLOW_ALL_RULES, Kind
from scrapy_robotsmeta.robotstxt.state import Decision, OriginState
from scrapy_robotsmeta.serializers import RequestCodec
from scrapy_robotsmeta.storage.base import Storage

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from redis.asyncio import Redis
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from scrapy_robotsmeta.robotstxt.cache import OriginCache
    from scrapy_robotsmeta.robotstxt.policy import Outcome

logger = logging.getLogger(__name__)

#: Requests taken out of a parked list per round trip.
RELEASE_BATCH = 500

# Renew or drop a lease only while this process still holds it.
_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""
_DROP = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('del', KEYS[1])
end
return 0
"""
# Forget an origin in the set once its list is empty, atomically: a request parked by another
# process between the two steps would otherwise be left out of the set, and never released.
_FORGET_IF_EMPTY = """
if redis.call('llen', KEYS[1]) == 0 then
    return redis.call('srem', KEYS[2], ARGV[1])
end
return 0
"""


class StorageConfigError(RuntimeError):
    """The storage cannot work as configured. Not NotConfigured: that would silently turn
    robots.txt off for the crawl instead of stopping it."""


def _redis_errors() -> tuple[type[BaseException], ...]:
    from redis.exceptions import RedisError  # noqa: PLC0415 (an optional dependency)

    return (RedisError, OSError)


class RedisStorage(Storage):
    """Origin states, fetch leases and parked requests in Redis, for a fleet of processes."""

    shared = True

    def __init__(self, crawler: Crawler, states: OriginCache) -> None:
        super().__init__(crawler, states)
        try:
            from redis.asyncio import Redis  # noqa: PLC0415 (an optional dependency)
        except ImportError as exc:
            raise StorageConfigError(
                "RedisStorage needs redis-py: pip install 'scrapy-robotsmeta[redis]'"
            ) from exc
        if not is_asyncio_reactor_installed():
            raise StorageConfigError(
                "RedisStorage needs Scrapy's asyncio reactor (TWISTED_REACTOR = "
                '"twisted.internet.asyncioreactor.AsyncioSelectorReactor", the default)'
            )
        settings = PackageSettings(crawler.settings)
        url = settings.get("ROBOTSTXT_REDIS_URL") or crawler.settings.get("REDIS_URL")
        if not url:
            raise StorageConfigError(
                "RedisStorage needs ROBOTSTXT_REDIS_URL (or scrapy-redis's REDIS_URL)"
            )
        assert crawler.stats is not None
        assert crawler.spider is not None
        self.stats: StatsCollector = crawler.stats
        self.spider = crawler.spider
        self.poll_interval = settings.getfloat("ROBOTSTXT_REDIS_POLL_INTERVAL")
        self.lease_ms = int(1000 * settings.getfloat("ROBOTSTXT_REDIS_LEASE_TIME"))
        # A state is kept a while past its end, so that a process whose cached copy expired
        # can still fall back on it (RFC 9309 §2.4) while the refresh is unreachable.
        self.grace = settings.getfloat("ROBOTSTXT_UNAVAILABLE_TIMEOUT")
        self.prefix = settings.get("ROBOTSTXT_REDIS_KEY_PREFIX") % {"spider": self.spider.name}
        self.redis: Redis = Redis.from_url(
            url, socket_timeout=5, socket_connect_timeout=5, health_check_interval=30
        )
        self._errors = _redis_errors()
        self._id = uuid.uuid4().hex
        # What this process parked and has not written to Redis yet (or cannot: Redis down,
        # or a request that cannot be serialised).
        self.codec = RequestCodec.from_crawler(crawler)
        self._outbox = ParkingLot(
            self.stats, self.codec, settings.getint("ROBOTSTXT_PARKED_MEMORY_LIMIT")
        )
        self._unserializable = ParkingLot(self.stats, self.codec, memory_limit=2**62)
        self._fleet_parked: set[Origin] = set()
        self._leases: dict[Origin, LoopingCall] = {}
        self._flushing = False
        self._down = False
        self.clock = crawler_clock(crawler)
        self._tasks = Tasks(self.stats)

    # -- keys ------------------------------------------------------------------------------

    def _key(self, kind: str, origin: Origin | None = None) -> str:
        return f"{self.prefix}:{kind}" if origin is None else f"{self.prefix}:{kind}:{origin}"

    # -- Redis availability ----------------------------------------------------------------

    def _failed(self, exc: BaseException) -> None:
        self.stats.inc_value("robotstxt/redis/errors")
        if not self._down:
            self._down = True
            logger.warning(
                "Redis failed (%s: %s); robots.txt state is kept in this process until it "
                "answers again",
                type(exc).__name__,
                exc,
                extra={"spider": self.spider},
            )

    def _answered(self) -> None:
        if self._down:
            self._down = False
            self.stats.inc_value("robotstxt/redis/recovered")
            logger.warning("Redis answers again", extra={"spider": self.spider})

    # -- storage interface -----------------------------------------------------------------

    async def open(self) -> None:
        try:
            await self.redis.ping()
            await self._read_fleet_parked()
            self._answered()
        except self._errors as exc:
            self._failed(exc)

    def parked_origins(self) -> list[Origin]:
        return list(
            dict.fromkeys(
                [*self._fleet_parked, *self._outbox.origins(), *self._unserializable.origins()]
            )
        )

    def park(self, origin: Origin, request: Request) -> None:
        # Serialised once, when written to Redis (_flush), not here as well.
        self._outbox.park(origin, request)
        if not self._flushing and not self._down:
            self._flushing = True
            self._tasks.run(self._flush(), "Writing parked requests to Redis")

    async def _flush(self) -> None:
        """Write what this process parked to Redis, origin by origin."""
        try:
            while self._outbox.origins():
                for origin in self._outbox.origins():
                    batch = self._serialised(origin)
                    try:
                        await self._push(origin, [data for _, data in batch])
                    except self._errors:
                        for request, _ in batch:
                            self._outbox.park(origin, request)
                        raise
        except self._errors as exc:
            self._failed(exc)
        finally:
            self._flushing = False

    def _serialised(self, origin: Origin) -> list[tuple[Request, bytes]]:
        """Take *origin*'s requests out of the outbox with their bytes. One that cannot be
        serialised could not run in another process: it stays here, as Scrapy's scheduler
        keeps such a request in memory."""
        batch = []
        for request in self._outbox.release(origin):
            data = self.codec.dump(request)
            if data is None:
                self.stats.inc_value("robotstxt/parked/unserializable")
                self._unserializable.park(origin, request)
            else:
                batch.append((request, data))
        return batch

    async def _push(self, origin: Origin, batch: list[bytes]) -> None:
        if not batch:
            return
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(self._key("parked", origin), *batch)
            pipe.sadd(self._key("parked-origins"), str(origin))
            await pipe.execute()
        self._answered()
        self._fleet_parked.add(origin)
        self.stats.inc_value("robotstxt/redis/parked", len(batch))

    async def release(self, origin: Origin) -> AsyncIterator[Request]:
        for request in self._unserializable.release(origin):
            yield request
        for request in self._outbox.release(origin):
            yield request
        if self._down:
            return
        key = self._key("parked", origin)
        try:
            while True:
                # LPOP with a count hands each request to exactly one process, however many
                # release the same origin at once.
                batch: list[bytes] | None = await self.redis.lpop(  # type: ignore[assignment]
                    key, RELEASE_BATCH
                )
                if not batch:
                    break
                self.stats.inc_value("robotstxt/redis/released", len(batch))
                for data in batch:
                    yield self.codec.load(data)
            await self.redis.eval(
                _FORGET_IF_EMPTY, 2, key, self._key("parked-origins"), str(origin)
            )
            self._fleet_parked.discard(origin)
        except self._errors as exc:
            self._failed(exc)

    async def claim_fetch(self, state: OriginState) -> bool:
        """Take the fetch lease of the origin, unless another process published a state that
        decides its requests, or holds the lease."""
        if self._down:
            return True
        origin = state.origin
        try:
            if await self._adopt_published(state):
                return False
            acquired = await self.redis.set(
                self._key("lease", origin), self._id, nx=True, px=self.lease_ms
            )
            if not acquired:
                self.stats.inc_value("robotstxt/redis/lease_busy")
                return False
            if await self._adopt_published(state):  # published between the two calls
                await self._drop_lease(origin)
                return False
        except self._errors as exc:
            self._failed(exc)
            return True
        self._keep_lease(origin)
        return True

    async def _adopt_published(self, state: OriginState) -> bool:
        """Take the state another process published, if it lets requests be decided now or
        puts the next fetch off until later.

        The second case is an outage: every process wakes at the fleet's retry time, one
        takes the lease and fetches, and a process that tries a moment after that fetch ended
        finds the lease free again. The published retry time, now in the future, tells it that
        the try it meant to make was made."""
        published: dict[bytes, bytes] = await self.redis.hgetall(  # type: ignore[assignment]
            self._key("state", state.origin)
        )
        if not published:
            return False
        snapshot = json.loads(published[b"snapshot"])
        now = self.clock.seconds()
        retry_later = snapshot["retry_at"] is not None and snapshot["retry_at"] > now
        if snapshot["expires_at"] <= now and not retry_later:
            return False
        if not self._adopt(state, snapshot, published.get(b"body")):
            return False
        return retry_later or state.decide(now) is not Decision.WAIT

    def _adopt(self, state: OriginState, snapshot: dict[str, Any], body: bytes | None) -> bool:
        """Take a published state; False when another version of this package published it
        (a fleet being upgraded): its next fetch replaces it."""
        if not OriginState.adoptable(snapshot):
            return False
        if snapshot == state.snapshot():
            return True
        rules = None
        if snapshot["kind"] == Kind.RULES.value:
            rules = RobotsTxt.parse(body or b"")
        elif snapshot["kind"] == Kind.ALLOW_ALL.value:
            rules = ALLOW_ALL_RULES
        state.adopt(snapshot, rules)
        self.stats.inc_value("robotstxt/redis/adopted")
        return True

    def _keep_lease(self, origin: Origin) -> None:
        renewal = LoopingCall(
            lambda: self._tasks.run(self._renew(origin), f"Renewing the fetch lease of {origin}")
        )
        renewal.clock = self.clock  # type: ignore[assignment]
        self._leases[origin] = renewal
        renewal.start(self.lease_ms / 3000, now=False)

    async def _renew(self, origin: Origin) -> None:
        try:
            await self.redis.eval(_RENEW, 1, self._key("lease", origin), self._id, self.lease_ms)
        except self._errors as exc:
            self._failed(exc)

    async def _drop_lease(self, origin: Origin) -> None:
        renewal = self._leases.pop(origin, None)
        if renewal is not None and renewal.running:
            renewal.stop()
        await self.redis.eval(_DROP, 1, self._key("lease", origin), self._id)

    async def publish(self, state: OriginState, outcome: Outcome | None) -> None:
        origin = state.origin
        snapshot = state.snapshot()
        now = self.clock.seconds()
        ends = max(t for t in (state.expires_at, state.give_up_at, state.retry_at, now) if t)
        ttl_ms = int(1000 * (ends - now + self.grace)) + self.lease_ms
        key = self._key("state", origin)
        try:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hset(key, "snapshot", json.dumps(snapshot))
                if outcome is not None and outcome.rules is not None:
                    # The body is written only with fresh rules: a cached copy kept through an
                    # outage keeps the body already there.
                    pipe.hset(key, "body", outcome.body or b"")
                pipe.pexpire(key, ttl_ms)
                await pipe.execute()
            if origin in self._leases or outcome is not None:
                await self._drop_lease(origin)
            self.stats.inc_value("robotstxt/redis/published")
        except self._errors as exc:
            self._failed(exc)

    async def poll(self, origins: list[Origin]) -> list[OriginState]:
        if self._outbox.origins() and not self._flushing:
            self._flushing = True
            await self._flush()
        try:
            await self._read_fleet_parked()
            wanted = list(dict.fromkeys([*origins, *self._fleet_parked]))
            async with self.redis.pipeline(transaction=False) as pipe:
                for origin in wanted:
                    pipe.hgetall(self._key("state", origin))
                published = await pipe.execute()
            self._answered()
        except self._errors as exc:
            self._failed(exc)
            return []
        changed = []
        for origin, fields in zip(wanted, published, strict=True):
            state = self.states.get_or_create(origin)
            if fields:
                before = state.snapshot()
                self._adopt(state, json.loads(fields[b"snapshot"]), fields.get(b"body"))
                if state.snapshot() != before:
                    changed.append(state)
                    continue
            if origin in self._fleet_parked and origin not in origins:
                changed.append(state)  # requests another process left parked
        return changed

    async def _read_fleet_parked(self) -> None:
        members: set[bytes] = await self.redis.smembers(  # type: ignore[assignment]
            self._key("parked-origins")
        )
        self._fleet_parked = {
            origin
            for origin in (origin_of(member.decode("latin-1")) for member in members)
            if origin is not None
        }

    async def close(self) -> int:
        for origin in list(self._leases):
            try:
                await self._drop_lease(origin)
            except self._errors as exc:
                self._failed(exc)
        if self._outbox.origins():
            self._flushing = True
            await self._flush()
        lost = self._outbox.close() + self._unserializable.close()
        try:
            await self.redis.aclose()
        except self._errors as exc:
            self._failed(exc)
        return lost
