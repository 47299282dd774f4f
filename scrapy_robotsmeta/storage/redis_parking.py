"""RedisStorage's parked requests: written to Redis, where any process of the crawl releases
them, and kept by this process while Redis cannot take them.

A parked request goes to an outbox first (in memory, on disk past
``ROBOTSTXT_PARKED_MEMORY_LIMIT``), and a background flush writes the outbox to the origin's
list in Redis. A request that cannot be serialised could not run in another process: it stays
here, as Scrapy's scheduler keeps such a request in memory.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from scrapy_robotsmeta.keys import (
    ROBOTSTXT_PARKED_UNSERIALIZABLE,
    ROBOTSTXT_REDIS_MALFORMED,
    ROBOTSTXT_REDIS_PARKED,
    ROBOTSTXT_REDIS_RELEASED,
)
from scrapy_robotsmeta.parking import ParkingLot
from scrapy_robotsmeta.robotstxt.origin import Origin, origin_of
from scrapy_robotsmeta.serializers import MalformedRequest, RequestCodec
from scrapy_robotsmeta.storage.redis_link import logger

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from scrapy import Request

    from scrapy_robotsmeta.storage.redis_link import RedisLink

#: Requests taken out of a parked list per round trip.
RELEASE_BATCH = 500

# Forget an origin in the set once its list is empty, atomically: a request parked by another
# process between the two steps would otherwise be left out of the set, and never released.
_FORGET_IF_EMPTY = """
if redis.call('llen', KEYS[1]) == 0 then
    return redis.call('srem', KEYS[2], ARGV[1])
end
return 0
"""


class RedisParking:
    """The parked requests of one RedisStorage. *write* writes one origin's serialised batch to
    Redis (:meth:`push`, or what a RedisStorage subclass puts around it)."""

    def __init__(
        self,
        link: RedisLink,
        codec: RequestCodec,
        memory_limit: int,
        write: Callable[[Origin, list[bytes]], Awaitable[None]],
    ) -> None:
        self.link = link
        self.codec = codec
        self._write = write
        # What this process parked and has not written to Redis yet (or cannot: Redis down,
        # or a request that cannot be serialised).
        self._outbox = ParkingLot(link.stats, codec, memory_limit)
        # Its requests come from the outbox, where they were counted.
        self._unserializable = ParkingLot(link.stats, codec, memory_limit=2**62, counted=False)
        # Requests taken out of the outbox to be written, with their bytes, until Redis has
        # them: a write that fails leaves them here for the next one (parked once, counted
        # once), and a release or close finds them.
        self._unsent: dict[Origin, list[tuple[Request, bytes]]] = {}
        # Held while a flush writes: a release waits for the batch in flight to be in Redis
        # (where its LPOP finds it) or back in _unsent, and close waits for it before
        # counting what is lost.
        self._flush_lock = asyncio.Lock()
        self._flushing = False
        #: The origins with a parked list in Redis, as last read or written.
        self.fleet_parked: set[Origin] = set()

    def origins(self) -> list[Origin]:
        # While Redis is down, what waits there cannot be released: a crawl that waited for
        # it would wait for Redis; those requests stay there for whoever reads them next.
        fleet = () if self.link.down else self.fleet_parked
        local = [*self._unsent, *self._outbox.origins(), *self._unserializable.origins()]
        return list(dict.fromkeys([*fleet, *local]))

    def park(self, origin: Origin, request: Request) -> None:
        # Serialised once, when written to Redis (_flush), not here as well.
        self._outbox.park(origin, request)
        if not self._flushing and not self.link.down:
            self._flushing = True
            self.link.tasks.run(self._flush(), "Writing parked requests to Redis")

    async def flush_waiting(self) -> None:
        """Write what waits to be written, unless a flush is doing it already: the one that
        a failure of Redis stopped is taken up again this way."""
        if (self._outbox.origins() or self._unsent) and not self._flushing:
            self._flushing = True
            await self._flush()

    async def _flush(self) -> None:
        """Write what this process parked to Redis, origin by origin; what a failure leaves
        unwritten stays in _unsent for the next flush."""
        async with self._flush_lock:
            try:
                while (origin := self._next_unsent()) is not None:
                    await self._write(origin, [data for _, data in self._unsent[origin]])
                    del self._unsent[origin]
            except self.link.errors as exc:
                self.link.failed(exc)
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
        """Take *origin*'s requests out of the outbox with their bytes; keep here those that
        cannot be serialised."""
        batch = []
        for request in self._outbox.release(origin):
            data = self.codec.dump(request)
            if data is None:
                self.link.stats.inc_value(ROBOTSTXT_PARKED_UNSERIALIZABLE)
                self._unserializable.park(origin, request)
            else:
                batch.append((request, data))
        return batch

    async def push(self, origin: Origin, batch: list[bytes]) -> None:
        if not batch:
            return
        async with self.link.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(self.link.key("parked", origin), *batch)
            pipe.sadd(self.link.key("parked-origins"), str(origin))
            await pipe.execute()
        self.link.answered()
        self.fleet_parked.add(origin)
        self.link.stats.inc_value(ROBOTSTXT_REDIS_PARKED, len(batch))

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
        if self.link.down:
            return
        key = self.link.key("parked", origin)
        try:
            while True:
                # LPOP with a count hands each request to exactly one process, however many
                # release the same origin at once.
                batch: list[bytes] | None = await self.link.redis.lpop(  # type: ignore[assignment]
                    key, RELEASE_BATCH
                )
                if not batch:
                    break
                self.link.stats.inc_value(ROBOTSTXT_REDIS_RELEASED, len(batch))
                for request in self.loaded(origin, batch):
                    yield request
            await self.link.redis.eval(
                _FORGET_IF_EMPTY, 2, key, self.link.key("parked-origins"), str(origin)
            )
            self.fleet_parked.discard(origin)
        except self.link.errors as exc:
            self.link.failed(exc)

    def loaded(self, origin: Origin, batch: list[bytes]) -> list[Request]:
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
            self.link.stats.inc_value(ROBOTSTXT_REDIS_MALFORMED, len(failures))
            logger.warning(
                "Skipped %d request(s) parked in Redis for %s that could not be read (%s: %s)",
                len(failures),
                origin,
                type(failures[0]).__name__,
                failures[0],
                extra={"spider": self.link.spider},
            )
        return requests

    async def read_fleet_parked(self) -> None:
        members: set[bytes] = await self.link.redis.smembers(  # type: ignore[assignment]
            self.link.key("parked-origins")
        )
        self.fleet_parked = {
            origin
            for origin in (origin_of(member.decode("latin-1")) for member in members)
            if origin is not None
        }

    async def close(self) -> int:
        """Write what can be, and say what stays in Redis; return how many requests are lost."""
        self._flushing = True
        await self._flush()  # after the one in flight, if any: its failure is counted below
        lost = sum(map(len, self._unsent.values()))
        self._unsent.clear()
        lost += self._outbox.close() + self._unserializable.close()
        await self._log_left_in_redis()
        return lost

    async def _log_left_in_redis(self) -> None:
        """Say where the requests that wait in Redis are: the crawl closes without them."""
        try:
            await self.read_fleet_parked()
        except self.link.errors as exc:
            self.link.failed(exc)  # the origins last read are told
        if self.fleet_parked:
            logger.info(
                "Requests parked for the robots.txt of %d origin(s) stay in Redis, for "
                "another process of the crawl or its next run",
                len(self.fleet_parked),
                extra={"spider": self.link.spider},
            )
