"""What the robots.txt part tells its user: its log lines and stats, worded in one place.

The per-request lines (a refusal, a drop) stay with the decision that makes them; these are the
lines of an origin's life and of the crawl's close.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy_robotsmeta.keys import (
    ROBOTSTXT_CACHE_DAMAGED,
    ROBOTSTXT_CACHE_DISK_ERRORS,
    ROBOTSTXT_CACHE_DISK_HITS,
    ROBOTSTXT_CACHE_FORGOTTEN,
    ROBOTSTXT_CACHE_MEMORY_HITS,
    ROBOTSTXT_CACHE_PACKED,
    ROBOTSTXT_CACHE_PACKED_HITS,
    ROBOTSTXT_CACHE_SPILLED,
    ROBOTSTXT_DROPPED_ON_CLOSE,
    ROBOTSTXT_GIVEN_UP,
    ROBOTSTXT_KEPT_CACHED_COPY,
    ROBOTSTXT_OUTCOME,
)
from scrapy_robotsmeta.robotstxt.state import Change
from scrapy_robotsmeta.robotstxt.status import Status

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.statscollectors import StatsCollector

    from scrapy_robotsmeta.robotstxt.cache import OriginCache
    from scrapy_robotsmeta.robotstxt.origin import Origin
    from scrapy_robotsmeta.robotstxt.policy import Outcome
    from scrapy_robotsmeta.robotstxt.state import OriginState, Timing

# The middleware's name: these lines are its lines, and a user filtering the log by logger
# name finds them there.
logger = logging.getLogger("scrapy_robotsmeta.downloadermiddleware")


def change(stats: StatsCollector, state: OriginState, change: Change, outcome: Outcome) -> None:
    """Count a fetch's outcome, and log the changes worth a line: a cached copy kept, an
    outage, allow-all, a recovery."""
    stats.inc_value(ROBOTSTXT_OUTCOME.format(kind=outcome.kind.value))
    origin, reason = state.origin, outcome.reason
    allow_all = outcome.kind is Status.ALLOW_ALL
    if change is Change.KEPT_CACHED_COPY:
        # RFC 9309 §2.4: while robots.txt is unreachable, the cached copy may be used.
        stats.inc_value(ROBOTSTXT_KEPT_CACHED_COPY)
        logger.info(
            "robots.txt of %s unavailable on refresh (%s); keeping the cached copy", origin, reason
        )
    elif change is Change.OUTAGE_STARTED:
        logger.info(
            "robots.txt of %s unavailable (%s); its requests wait while it is retried",
            origin,
            reason,
        )
    elif change is Change.RECOVERED or (change is Change.READY and allow_all):
        logger.info(
            "robots.txt of %s: %s; %s",
            origin,
            reason,
            "allowing everything" if allow_all else "rules apply",
        )


def give_up(
    stats: StatsCollector, origin: Origin, last: str, down_for: float, timing: Timing
) -> None:
    """*last*: the outage's last reason; *down_for*: how long it lasted as this process saw it
    (not the setting: a skewed clock, a pause, would show there)."""
    stats.inc_value(ROBOTSTXT_GIVEN_UP)
    logger.warning(
        "robots.txt of %s unavailable for %.0f s (last: %s); giving up on this origin: "
        "its requests are dropped for the next %.0f s",
        origin,
        down_for,
        last,
        timing.expiration,
    )


def lost(stats: StatsCollector, count: int, spider: Spider | None) -> None:
    """Waiting requests lost as the crawl closes: one line for all of them."""
    if not count:
        return
    stats.inc_value(ROBOTSTXT_DROPPED_ON_CLOSE, count)
    logger.warning(
        "%(count)d request(s) dropped: the crawl closed while their robots.txt was "
        "pending (with JOBDIR set, parked requests are kept for the next run)",
        {"count": count},
        extra={"spider": spider},
    )


def restored(origins: int) -> None:
    if origins:
        logger.info(
            "Found requests parked for the robots.txt of %d origin(s) by an earlier run", origins
        )


def cache(stats: StatsCollector, cache: OriginCache) -> None:
    """The cache's counters, as the crawl closes."""
    for stat, value in (
        (ROBOTSTXT_CACHE_MEMORY_HITS, cache.memory_hits),
        (ROBOTSTXT_CACHE_PACKED_HITS, cache.packed_hits),
        (ROBOTSTXT_CACHE_DISK_HITS, cache.second_hits),
        (ROBOTSTXT_CACHE_PACKED, cache.packed),
        (ROBOTSTXT_CACHE_SPILLED, cache.spilled),
        (ROBOTSTXT_CACHE_FORGOTTEN, cache.forgotten),
        (ROBOTSTXT_CACHE_DAMAGED, cache.damaged),
        (ROBOTSTXT_CACHE_DISK_ERRORS, cache.second.errors if cache.second is not None else 0),
    ):
        stats.set_value(stat, value)
