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

Times in a published state are Redis's (``TIME``): each process keeps the difference between
Redis's clock and its own, measured on each poll and claim, and moves the times it publishes
and adopts through it, so that a process whose clock is off keeps the fleet's schedule.

Every decision still reads this process's own cache only; Redis is asked when an origin is
new to this process, when a fetch is due, and every ``ROBOTSTXT_REDIS_POLL_INTERVAL`` seconds
for the origins that requests wait on. A Redis that fails makes the process carry on alone:
it fetches for itself and keeps what it parks (in memory, on disk past the memory limit)
until Redis answers again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import TYPE_CHECKING, Any

from scrapy.utils.reactor import is_asyncio_reactor_installed
from twisted.internet.task import LoopingCall

from scrapy_robotsmeta.defaults import PackageSettings
from scrapy_robotsmeta.parking import ParkingLot
from scrapy_robotsmeta.reactor import Tasks, crawler_clock
from scrapy_robotsmeta.robotstxt.origin import Origin, origin_of
from scrapy_robotsmeta.robotstxt.policy import Kind
from scrapy_robotsmeta.robotstxt.state import Published, shift_times, unreadable
from scrapy_robotsmeta.serializers import MalformedRequest, RequestCodec
from scrapy_robotsmeta.storage.base import Storage

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from redis.asyncio import Redis
    from redis.asyncio.client import Pipeline
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

#: Requests taken out of a parked list per round trip.
RELEASE_BATCH = 500
#: A new reading of Redis's clock replaces the one in use only when the two disagree by more
#: than the reading's round trip allows plus this (seconds): a state read back through a
#: steady difference is the one this process published, not a change to adopt.
CLOCK_SLACK = 0.01

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


def _check_reachable(url: str, errors: tuple[type[BaseException], ...]) -> None:
    """Refuse to start on a Redis that cannot be reached: a fleet member that started alone
    would fetch and park for itself, which is not what its user configured. (One that fails
    later carries on alone until it answers again.)"""
    from redis import Redis  # noqa: PLC0415 (an optional dependency)

    where = "ROBOTSTXT_REDIS_URL (or scrapy-redis's REDIS_URL)"
    try:
        client = Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
    except ValueError as exc:  # a scheme redis-py does not know, a malformed URL
        raise StorageConfigError(
            f"RedisStorage: {where} {url!r} is not a Redis URL: {exc}"
        ) from exc
    try:
        client.ping()
    except errors as exc:
        raise StorageConfigError(
            f"RedisStorage cannot reach the Redis of {where} {url!r} "
            f"({type(exc).__name__}: {exc}): start it, or fix the URL"
        ) from exc
    finally:
        client.close()


class RedisStorage(Storage):
    """Origin states, fetch leases and parked requests in Redis, for a fleet of processes."""

    shared = True

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
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
        self._errors = _redis_errors()
        _check_reachable(url, self._errors)
        self.redis: Redis = Redis.from_url(
            url, socket_timeout=5, socket_connect_timeout=5, health_check_interval=30
        )
        self._id = uuid.uuid4().hex
        # What this process parked and has not written to Redis yet (or cannot: Redis down,
        # or a request that cannot be serialised).
        self.codec = RequestCodec.from_crawler(crawler)
        self._outbox = ParkingLot(
            self.stats, self.codec, settings.getint("ROBOTSTXT_PARKED_MEMORY_LIMIT")
        )
        self._unserializable = ParkingLot(self.stats, self.codec, memory_limit=2**62)
        # Requests taken out of the outbox to be written, with their bytes, until Redis has
        # them: a write that fails leaves them here for the next one (parked once, counted
        # once), and a release or close finds them.
        self._unsent: dict[Origin, list[tuple[Request, bytes]]] = {}
        # Held while a flush writes: a release waits for the batch in flight to be in Redis
        # (where its LPOP finds it) or back in _unsent, and close waits for it before
        # counting what is lost.
        self._flush_lock = asyncio.Lock()
        #: Redis's clock minus this process's (seconds), once measured.
        self._offset: float | None = None
        #: Origins whose state in Redis could not be read, warned about once each.
        self._unreadable: set[Origin] = set()
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
            await self._read_clock()
            await self._read_fleet_parked()
            self._answered()
        except self._errors as exc:
            self._failed(exc)

    def parked_origins(self) -> list[Origin]:
        # While Redis is down, what waits there cannot be released: a crawl that waited for
        # it would wait for Redis; those requests stay there for whoever reads them next.
        fleet = () if self._down else self._fleet_parked
        local = [*self._unsent, *self._outbox.origins(), *self._unserializable.origins()]
        return list(dict.fromkeys([*fleet, *local]))

    def park(self, origin: Origin, request: Request) -> None:
        # Serialised once, when written to Redis (_flush), not here as well.
        self._outbox.park(origin, request)
        if not self._flushing and not self._down:
            self._flushing = True
            self._tasks.run(self._flush(), "Writing parked requests to Redis")

    async def _flush(self) -> None:
        """Write what this process parked to Redis, origin by origin; what a failure leaves
        unwritten stays in _unsent for the next flush."""
        async with self._flush_lock:
            try:
                while (origin := self._next_unsent()) is not None:
                    await self._push(origin, [data for _, data in self._unsent[origin]])
                    del self._unsent[origin]
            except self._errors as exc:
                self._failed(exc)
            finally:
                self._flushing = False

    def _next_unsent(self) -> Origin | None:
        """The next origin to write: one a failed write left, else one of the outbox, its
        requests moved to _unsent."""
        for origin in self._unsent:
            return origin
        for origin in self._outbox.origins():
            batch = self._serialised(origin)
            if batch:
                self._unsent[origin] = batch
                return origin
        return None

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
        async with self._flush_lock:
            # A batch being written when the release began is in Redis now, or back here.
            unsent = self._unsent.pop(origin, [])
        for request, _ in unsent:
            yield request
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
                for request in self._loaded(origin, batch):
                    yield request
            await self.redis.eval(
                _FORGET_IF_EMPTY, 2, key, self._key("parked-origins"), str(origin)
            )
            self._fleet_parked.discard(origin)
        except self._errors as exc:
            self._failed(exc)

    def _loaded(self, origin: Origin, batch: list[bytes]) -> list[Request]:
        """The requests of *batch*, taken from Redis. An entry that does not load (damaged, or
        written by code this process lacks) is skipped, logged and counted: its neighbours,
        out of Redis already, are not lost with it."""
        requests, failures = [], []
        for data in batch:
            try:
                requests.append(self.codec.load(data))
            except MalformedRequest as exc:
                failures.append(exc)
        if failures:
            self.stats.inc_value("robotstxt/redis/malformed", len(failures))
            logger.warning(
                "Skipped %d request(s) parked in Redis for %s that could not be read (%s: %s)",
                len(failures),
                origin,
                type(failures[0]).__name__,
                failures[0],
                extra={"spider": self.spider},
            )
        return requests

    async def claim_fetch(self, origin: Origin, settles: Callable[[Published], bool]) -> bool:
        """Take the fetch lease of the origin, unless another process published a state that
        *settles* the fetch, or holds the lease."""
        if self._down:
            return True
        try:
            if await self._settled(origin, settles):
                return False
            acquired = await self.redis.set(
                self._key("lease", origin), self._id, nx=True, px=self.lease_ms
            )
            if not acquired:
                self.stats.inc_value("robotstxt/redis/lease_busy")
                return False
            if await self._settled(origin, settles):  # published between the two calls
                await self._drop_lease(origin)
                return False
        except self._errors as exc:
            self._failed(exc)
            return True
        self._keep_lease(origin)
        return True

    async def _settled(self, origin: Origin, settles: Callable[[Published], bool]) -> bool:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.time()
            pipe.hgetall(self._key("state", origin))
            (fields,) = await self._timed(pipe)
        published = self._published(origin, fields)
        return published is not None and settles(published)

    def _published(self, origin: Origin, fields: dict[bytes, bytes]) -> Published | None:
        """The state of *origin* read from Redis, its times in this process's clock; None
        when there is none, or none this process can read (another version of the package,
        a damaged value): the next fetch replaces it."""
        if not fields:
            return None
        raw, body = fields.get(b"snapshot"), fields.get(b"body")
        snapshot: Any = None
        why: str | None = "no snapshot"
        if raw is not None:
            try:
                snapshot = json.loads(raw)
            except ValueError:
                why = "not JSON"
            else:
                why = unreadable(snapshot)
        if why is None and snapshot["kind"] == Kind.RULES.value and body is None:
            why = "rules without their body"
        if why is not None:
            self._ignore(origin, why)
            return None
        self._unreadable.discard(origin)
        return Published(shift_times(snapshot, -self._offset_or_zero()), body)

    def _ignore(self, origin: Origin, why: str) -> None:
        if origin not in self._unreadable:
            self._unreadable.add(origin)
            self.stats.inc_value("robotstxt/redis/unreadable_state")
            logger.warning(
                "Ignored the robots.txt state of %s in Redis (%s): it is fetched again, "
                "and the fetch replaces it",
                origin,
                why,
                extra={"spider": self.spider},
            )

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

    async def publish(
        self, origin: Origin, snapshot: dict[str, Any], body: bytes | None, fetched: bool
    ) -> None:
        now = self.clock.seconds()
        times = (snapshot["expires_at"], snapshot["give_up_at"], snapshot["retry_at"], now)
        ttl_ms = int(1000 * (max(t for t in times if t) - now + self.grace)) + self.lease_ms
        key = self._key("state", origin)
        try:
            if self._offset is None:  # Redis was down for every call until now
                await self._read_clock()
            shifted = shift_times(snapshot, self._offset_or_zero())
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hset(key, "snapshot", json.dumps(shifted))
                if body is not None:
                    # The body is written only with fresh rules: a cached copy kept through an
                    # outage keeps the body already there.
                    pipe.hset(key, "body", body)
                pipe.pexpire(key, ttl_ms)
                await pipe.execute()
            if origin in self._leases or fetched:
                await self._drop_lease(origin)
            self._unreadable.discard(origin)
            self.stats.inc_value("robotstxt/redis/published")
        except self._errors as exc:
            self._failed(exc)

    async def poll(self, origins: list[Origin]) -> list[tuple[Origin, Published | None]]:
        if (self._outbox.origins() or self._unsent) and not self._flushing:
            self._flushing = True
            await self._flush()
        try:
            await self._read_fleet_parked()
            wanted = list(dict.fromkeys([*origins, *self._fleet_parked]))
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.time()
                for origin in wanted:
                    pipe.hgetall(self._key("state", origin))
                published = await self._timed(pipe)
            self._answered()
        except self._errors as exc:
            self._failed(exc)
            return []
        polled = []
        asked = set(origins)
        for origin, fields in zip(wanted, published, strict=True):
            read = self._published(origin, fields)
            # Not asked for: requests another process left parked.
            if read is not None or origin not in asked:
                polled.append((origin, read))
        return polled

    # -- one clock for the fleet -----------------------------------------------------------

    async def _read_clock(self) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.time()
            await self._timed(pipe)

    async def _timed(self, pipe: Pipeline) -> list[Any]:
        """Execute *pipe*, whose first command is TIME; return the other replies. The reading
        is taken halfway through the round trip, so it is off by half of it at most."""
        sent = self.clock.seconds()
        replies: list[Any] = await pipe.execute()
        answered = self.clock.seconds()
        seconds, microseconds = replies[0]
        offset = seconds + microseconds / 1e6 - (sent + answered) / 2
        error = (answered - sent) / 2 + CLOCK_SLACK
        if self._offset is None or abs(offset - self._offset) > error:
            self._offset = offset
        return replies[1:]

    def _offset_or_zero(self) -> float:
        return self._offset if self._offset is not None else 0.0

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
        self._flushing = True
        await self._flush()  # after the one in flight, if any: its failure is counted below
        lost = sum(map(len, self._unsent.values()))
        self._unsent.clear()
        lost += self._outbox.close() + self._unserializable.close()
        await self._log_left_in_redis()
        try:
            await self.redis.aclose()
        except self._errors as exc:
            self._failed(exc)
        return lost

    async def _log_left_in_redis(self) -> None:
        """Say where the requests that wait in Redis are: the crawl closes without them."""
        try:
            await self._read_fleet_parked()
        except self._errors as exc:
            self._failed(exc)  # the origins last read are told
        if self._fleet_parked:
            logger.info(
                "Requests parked for the robots.txt of %d origin(s) stay in Redis, for "
                "another process of the crawl or its next run",
                len(self._fleet_parked),
                extra={"spider": self.spider},
            )
