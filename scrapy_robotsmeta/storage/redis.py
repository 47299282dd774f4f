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
``P:turn:<origin>``     present while the origin's requests are spaced (Crawl-delay) and its
                        turn is taken; expires after that spacing, by Redis's clock
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

from typing import TYPE_CHECKING, Any

from scrapy_robotsmeta.defaults import PackageSettings
from scrapy_robotsmeta.serializers import RequestCodec
from scrapy_robotsmeta.storage.base import Storage
from scrapy_robotsmeta.storage.redis_link import RedisLink, StorageConfigError, configured_url
from scrapy_robotsmeta.storage.redis_parking import RedisParking
from scrapy_robotsmeta.storage.redis_states import RedisStates
from scrapy_robotsmeta.storage.redis_turns import RedisTurns

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from scrapy import Request
    from scrapy.crawler import Crawler

    from scrapy_robotsmeta.robotstxt.origin import Origin
    from scrapy_robotsmeta.robotstxt.state import Published

# StorageConfigError stays importable from here, where RedisStorage is: startup.py and users
# catch the storage's refusals by it.
__all__ = ["RedisStorage", "StorageConfigError"]


class RedisStorage(Storage):
    """Origin states, fetch leases and parked requests in Redis, for a fleet of processes: the
    arrangement of a link to Redis (:mod:`!scrapy_robotsmeta.storage.redis_link`), the
    parked requests (:mod:`!scrapy_robotsmeta.storage.redis_parking`) and the shared states
    (:mod:`!scrapy_robotsmeta.storage.redis_states`). Each hook of the interface is a method
    of its own here, so that a subclass can wrap it."""

    shared = True

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        url = configured_url(crawler)
        settings = PackageSettings(crawler.settings)
        self.poll_interval = settings.getfloat("ROBOTSTXT_REDIS_POLL_INTERVAL")
        lease_ms = int(1000 * settings.getfloat("ROBOTSTXT_REDIS_LEASE_TIME"))
        grace = settings.getfloat("ROBOTSTXT_UNAVAILABLE_TIMEOUT")
        self.link = RedisLink(crawler, url)
        self.stats, self.spider = self.link.stats, self.link.spider
        self.codec = RequestCodec.from_crawler(crawler)
        memory_limit = settings.getint("ROBOTSTXT_PARKED_MEMORY_LIMIT")
        self.parking = RedisParking(self.link, self.codec, memory_limit, self._push)
        self.states = RedisStates(self.link, lease_ms, grace)
        self.turns = RedisTurns(self.link, self.poll_interval)

    @property
    def _id(self) -> str:
        """This process's value in the fetch leases it holds."""
        return self.link.id

    async def open(self) -> None:
        try:
            await self.link.read_clock()
            await self.parking.read_fleet_parked()
            self.link.answered()
        except self.link.errors as exc:
            self.link.failed(exc)

    # -- parked requests -------------------------------------------------------------------

    def parked_origins(self) -> list[Origin]:
        return self.parking.origins()

    def park(self, origin: Origin, request: Request) -> None:
        self.parking.park(origin, request)

    async def _push(self, origin: Origin, batch: list[bytes]) -> None:
        """Write *batch*, parked for *origin*, to Redis."""
        await self.parking.push(origin, batch)

    def release(self, origin: Origin) -> AsyncIterator[Request]:
        return self.parking.release(origin)

    # -- shared states ---------------------------------------------------------------------

    async def claim_fetch(self, origin: Origin, settles: Callable[[Published], bool]) -> bool:
        return await self.states.claim_fetch(origin, settles)

    async def publish(
        self, origin: Origin, snapshot: dict[str, Any], body: bytes | None, fetched: bool
    ) -> None:
        await self.states.publish(origin, snapshot, body, fetched)

    async def poll(self, origins: list[Origin]) -> list[tuple[Origin, Published | None]]:
        # Each poll also takes up a write of parked requests that a failure of Redis stopped,
        # and reads which origins have requests waiting in Redis: another process may have
        # parked them, or died leaving them there.
        await self.parking.flush_waiting()
        try:
            await self.parking.read_fleet_parked()
        except self.link.errors as exc:
            self.link.failed(exc)
            return []
        return await self.states.poll(origins, self.parking.fleet_parked)

    async def take_turn(self, origin: Origin, interval: float) -> float | None:
        return await self.turns.take(origin, interval)

    async def close(self) -> int:
        await self.states.close()
        lost = await self.parking.close()
        await self.link.close()
        return lost
