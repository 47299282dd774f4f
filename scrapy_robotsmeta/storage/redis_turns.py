"""RedisStorage's turns: one Crawl-delay (or download delay) per origin for the whole fleet.

An origin's turn is the key ``P:turn:<origin>``, set with ``NX`` and ``PX interval`` by the
process whose request goes next: while it exists, the origin is busy, and it expires by
Redis's clock, so no process's clock enters the spacing, and a process that dies having
taken a turn holds the origin for one interval at most. Who fails to set it reads how long
it still lives (``PTTL``) in the same round trip.

Redis is asked only for origins whose requests are spaced. While it fails, turns are taken
in this process alone (the caller's own book), and Redis is asked again after a poll
interval.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy_robotsmeta.robotstxt.origin import Origin
    from scrapy_robotsmeta.storage.redis_link import RedisLink

logger = logging.getLogger("scrapy_robotsmeta.storage.redis")


class RedisTurns:
    """The turns of one RedisStorage; *retry*: seconds before Redis is asked again after it
    failed."""

    def __init__(self, link: RedisLink, retry: float) -> None:
        self.link = link
        self.retry = retry
        self._ask_again_at = 0.0

    async def take(self, origin: Origin, interval: float) -> float | None:
        """Take *origin*'s turn for the fleet, keeping it busy for *interval* seconds: 0.0 when
        taken, otherwise how long until it is free; None when Redis cannot say (the turn is
        then this process's to take)."""
        now = self.link.clock.seconds()
        if self.link.down and now < self._ask_again_at:
            return None
        key = self.link.key("turn", origin)
        try:
            async with self.link.redis.pipeline(transaction=False) as pipe:
                pipe.set(key, self.link.id, nx=True, px=max(1, round(interval * 1000)))
                pipe.pttl(key)
                taken, left_ms = await pipe.execute()
        except self.link.errors as exc:
            self.link.failed(exc)
            self._ask_again_at = now + self.retry
            return None
        self.link.answered()
        if taken:
            return 0.0
        # -2: expired between the two commands, free now; try again in a millisecond.
        return max(int(left_ms), 1) / 1000
