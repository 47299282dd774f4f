"""RedisStorage's shared origin states: the fetch lease that lets one process of the fleet
fetch a robots.txt, the states published in Redis, and reading them back.

A published state's times are Redis's: they are moved through the link's clock offset on the
way in and out.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from twisted.internet.task import LoopingCall

from scrapy_robotsmeta.keys import (
    ROBOTSTXT_REDIS_LEASE_BUSY,
    ROBOTSTXT_REDIS_PUBLISHED,
    ROBOTSTXT_REDIS_UNREADABLE_STATE,
)
from scrapy_robotsmeta.robotstxt.state import (
    Published,
    has_own_rules,
    shift_times,
    unreadable,
)
from scrapy_robotsmeta.storage.redis_link import logger

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from scrapy_robotsmeta.robotstxt.origin import Origin
    from scrapy_robotsmeta.storage.redis_link import RedisLink

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


class RedisStates:
    """The states and fetch leases of one RedisStorage. *lease_ms*: how long a lease lasts
    unless renewed; *grace*: how long a state is kept past its end."""

    def __init__(self, link: RedisLink, lease_ms: int, grace: float) -> None:
        self.link = link
        self.lease_ms = lease_ms
        # A state is kept a while past its end, so that a process whose cached copy expired
        # can still fall back on it (RFC 9309 §2.4) while the refresh is unreachable.
        self.grace = grace
        #: Origins whose state in Redis could not be read, warned about once each.
        self._unreadable: set[Origin] = set()
        self._leases: dict[Origin, LoopingCall] = {}

    async def claim_fetch(self, origin: Origin, settles: Callable[[Published], bool]) -> bool:
        """Take the fetch lease of the origin, unless another process published a state that
        *settles* the fetch, or holds the lease."""
        if self.link.down:
            return True
        try:
            if await self._settled(origin, settles):
                return False
            acquired = await self.link.redis.set(
                self.link.key("lease", origin), self.link.id, nx=True, px=self.lease_ms
            )
            if not acquired:
                self.link.stats.inc_value(ROBOTSTXT_REDIS_LEASE_BUSY)
                return False
            if await self._settled(origin, settles):  # published between the two calls
                await self._drop_lease(origin)
                return False
        except self.link.errors as exc:
            self.link.failed(exc)
            return True
        self._keep_lease(origin)
        return True

    async def _settled(self, origin: Origin, settles: Callable[[Published], bool]) -> bool:
        async with self.link.redis.pipeline(transaction=False) as pipe:
            pipe.time()
            pipe.hgetall(self.link.key("state", origin))
            (fields,) = await self.link.timed(pipe)
        published = self.published(origin, fields)
        return published is not None and settles(published)

    def published(self, origin: Origin, fields: dict[bytes, bytes]) -> Published | None:
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
        if why is None and has_own_rules(snapshot["kind"]) and body is None:
            why = "rules without their body"
        if why is not None:
            self._ignore(origin, why)
            return None
        self._unreadable.discard(origin)
        return Published(shift_times(snapshot, -self.link.offset_or_zero()), body)

    def _ignore(self, origin: Origin, why: str) -> None:
        if origin not in self._unreadable:
            self._unreadable.add(origin)
            self.link.stats.inc_value(ROBOTSTXT_REDIS_UNREADABLE_STATE)
            logger.warning(
                "Ignored the robots.txt state of %s in Redis (%s): it is fetched again, "
                "and the fetch replaces it",
                origin,
                why,
                extra={"spider": self.link.spider},
            )

    def _keep_lease(self, origin: Origin) -> None:
        renewal = LoopingCall(
            lambda: self.link.tasks.run(
                self._renew(origin), f"Renewing the fetch lease of {origin}"
            )
        )
        renewal.clock = self.link.clock  # type: ignore[assignment]
        self._leases[origin] = renewal
        renewal.start(self.lease_ms / 3000, now=False)

    async def _renew(self, origin: Origin) -> None:
        try:
            await self.link.redis.eval(
                _RENEW, 1, self.link.key("lease", origin), self.link.id, self.lease_ms
            )
        except self.link.errors as exc:
            self.link.failed(exc)

    async def _drop_lease(self, origin: Origin) -> None:
        renewal = self._leases.pop(origin, None)
        if renewal is not None and renewal.running:
            renewal.stop()
        await self.link.redis.eval(_DROP, 1, self.link.key("lease", origin), self.link.id)

    async def publish(
        self, origin: Origin, snapshot: dict[str, Any], body: bytes | None, fetched: bool
    ) -> None:
        now = self.link.clock.seconds()
        times = (snapshot["expires_at"], snapshot["give_up_at"], snapshot["retry_at"], now)
        ttl_ms = int(1000 * (max(t for t in times if t) - now + self.grace)) + self.lease_ms
        key = self.link.key("state", origin)
        try:
            if self.link.offset is None:  # Redis was down for every call until now
                await self.link.read_clock()
            shifted = shift_times(snapshot, self.link.offset_or_zero())
            async with self.link.redis.pipeline(transaction=True) as pipe:
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
            self.link.stats.inc_value(ROBOTSTXT_REDIS_PUBLISHED)
        except self.link.errors as exc:
            self.link.failed(exc)

    async def poll(
        self, origins: list[Origin], parked: Iterable[Origin]
    ) -> list[tuple[Origin, Published | None]]:
        """The states published for *origins*, and the origins of *parked* (requests another
        process left parked) with their state or None."""
        wanted = list(dict.fromkeys([*origins, *parked]))
        try:
            async with self.link.redis.pipeline(transaction=False) as pipe:
                pipe.time()
                for origin in wanted:
                    pipe.hgetall(self.link.key("state", origin))
                published = await self.link.timed(pipe)
            self.link.answered()
        except self.link.errors as exc:
            self.link.failed(exc)
            return []
        polled = []
        asked = set(origins)
        for origin, fields in zip(wanted, published, strict=True):
            read = self.published(origin, fields)
            # Not asked for: requests another process left parked.
            if read is not None or origin not in asked:
                polled.append((origin, read))
        return polled

    async def close(self) -> None:
        """Drop the leases this process holds: another process may fetch at once."""
        for origin in list(self._leases):
            try:
                await self._drop_lease(origin)
            except self.link.errors as exc:
                self.link.failed(exc)
