"""Crawl-delay (``ROBOTSTXT_OBEY_CRAWL_DELAY``) and a fleet-wide download delay
(``ROBOTSTXT_FLEET_DOWNLOAD_DELAY``): an origin's requests spaced by turns.

Crawl-delay is no part of RFC 9309; Google ignores it, Bing and Yandex read it as the seconds
between two requests of the crawler, which a fleet of processes is as a whole. So a request
whose origin is spaced takes the origin's *turn* as it is about to be downloaded (its spacing
in :mod:`.robotstxt.turns`; the storage's own for a fleet, else this process's book). A
request that finds the origin busy is set aside out of the downloader (:class:`TurnLine`), so
that it holds no place of ``CONCURRENT_REQUESTS``, and comes back at the origin's next turn.
"""

from __future__ import annotations

import logging
import weakref
from collections import deque
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from scrapy_robotsmeta.defaults import PackageSettings
from scrapy_robotsmeta.keys import (
    ROBOTSTXT_CRAWL_DELAY_APPLIED,
    ROBOTSTXT_CRAWL_DELAY_BOUNDED,
    ROBOTSTXT_CRAWL_DELAY_LOCAL_TURNS,
    ROBOTSTXT_CRAWL_DELAY_MAX,
    ROBOTSTXT_CRAWL_DELAY_SET_ASIDE,
    ROBOTSTXT_DROPPED_ON_CLOSE,
    TURN_META_KEY,
)
from scrapy_robotsmeta.robotstxt.turns import Spacing, TurnBook, spacing
from scrapy_robotsmeta.startup import refuse

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.internet.base import DelayedCall

    from scrapy_robotsmeta.reactor import Clock
    from scrapy_robotsmeta.robotstxt import RobotsTxt
    from scrapy_robotsmeta.robotstxt.core import RobotsTxtCore
    from scrapy_robotsmeta.robotstxt.origin import Origin
    from scrapy_robotsmeta.storage import Storage

logger = logging.getLogger("scrapy_robotsmeta.downloadermiddleware")

#: A line's next request is sent back this long after its origin's turn is free, so that a
#: turn kept by a clock a little ahead of this process's is free when the request asks.
_MARGIN = 0.002


class TurnLine:
    """The requests set aside until their origin's turn, by origin, oldest first.

    A request is set aside by sending it back from ``process_request`` (out of the downloader)
    and taking it at ``request_scheduled`` (before the scheduler); at its origin's next turn
    the first one goes back through ``engine.crawl()``, and asks for the turn again."""

    def __init__(self, crawler: Crawler, core: RobotsTxtCore, clock: Clock) -> None:
        assert crawler.stats is not None
        self.crawler, self.stats, self.core, self.clock = crawler, crawler.stats, core, clock
        self._lines: dict[Origin, deque[Request]] = {}
        self._timers: dict[Origin, DelayedCall] = {}
        # Each origin's spacing, last known: how long a request sent back at its turn may
        # take to ask for it before the next one goes (it may be crawled by another process).
        self.intervals: dict[Origin, float] = {}
        # Sent back, not yet taken: the origin, and whether it goes first (it was).
        self._sent_back: weakref.WeakKeyDictionary[Request, tuple[Origin, bool]] = (
            weakref.WeakKeyDictionary()
        )
        self._listening = False
        crawler.signals.connect(self._spider_idle, signals.spider_idle)

    def came_straight_back(self, request: Request) -> bool:
        """Whether *request* was sent back and comes back without having been scheduled
        (downloaded with ``engine.download_async()``, which never schedules)."""
        return self._sent_back.pop(request, None) is not None

    def queued(self, origin: Origin) -> bool:
        """Whether requests wait for *origin*'s turn in this process."""
        return origin in self._lines

    def set_aside(
        self, origin: Origin, request: Request, wait: float | None, first: bool = False
    ) -> Request:
        """The request to send back for *request* to wait in *origin*'s line (at its head
        when *first*: it was there); *wait*: how long the turn stays busy, when known."""
        sent_back = request.replace(dont_filter=True)  # the duplicate filter saw it already
        self._sent_back[sent_back] = (origin, first)
        self._lines.setdefault(origin, deque())
        if wait is not None:
            self.next_turn(origin, wait)
        if not self._listening:
            self.crawler.signals.connect(
                self._request_scheduled, signals.request_scheduled, weak=False
            )
            self._listening = True
        self.stats.inc_value(ROBOTSTXT_CRAWL_DELAY_SET_ASIDE)
        return sent_back

    def next_turn(self, origin: Origin, wait: float) -> None:
        """*origin*'s turn is free in *wait* seconds: its line's first request goes then."""
        if origin not in self._lines:
            return
        when = self.clock.seconds() + wait + _MARGIN
        timer = self._timers.get(origin)
        if timer is not None and timer.active():
            if timer.getTime() <= when:
                return
            timer.cancel()
        self._timers[origin] = self.clock.callLater(wait + _MARGIN, self._turn, origin)

    def _request_scheduled(self, request: Request, **kwargs: Any) -> None:
        sent = self._sent_back.pop(request, None)
        if sent is None or self.core.is_pending(sent[0]):
            # Not set aside, or its robots.txt expired meanwhile: the robots.txt part parks
            # it or lets it be scheduled, and it takes its turn once it comes out.
            return
        origin, first = sent
        line = self._lines.setdefault(origin, deque())
        if first:
            line.appendleft(request)
        else:
            line.append(request)
        if origin not in self._timers:
            self.next_turn(origin, 0.0)
        raise IgnoreRequest  # kept out of the scheduler, with no errback called

    def _turn(self, origin: Origin) -> None:
        self._timers.pop(origin, None)
        line = self._lines.get(origin)
        if not line:
            # Nobody waits: the next request asks for itself.
            self._lines.pop(origin, None)
            self.intervals.pop(origin, None)
            if not self._lines and not self._sent_back and self._listening:
                self.crawler.signals.disconnect(
                    self._request_scheduled, signals.request_scheduled, weak=False
                )
                self._listening = False
            return
        if not self.crawler.crawling:
            return  # stopping: what waits is counted at close
        request = line.popleft()
        request.meta[TURN_META_KEY] = True
        self.next_turn(origin, self.intervals.get(origin, 1.0))
        self.crawler.engine.crawl(request)

    def _spider_idle(self) -> None:
        if any(self._lines.values()) or self._sent_back:
            raise DontCloseSpider

    def close(self) -> int:
        """Let go of the requests set aside; return how many (they are lost)."""
        for timer in self._timers.values():
            if timer.active():
                timer.cancel()
        lost = sum(len(line) for line in self._lines.values())
        self._lines.clear()
        self.intervals.clear()
        return lost


def max_crawl_delay(value: Any) -> float | None:
    """``ROBOTSTXT_MAX_CRAWL_DELAY`` as seconds, or None for no bound; anything else stops
    the crawl's start with one line naming the setting."""
    if value is None or value == "":
        return None
    try:
        bound = float(value)
    except (TypeError, ValueError):
        bound = -1.0
    if not bound >= 0:  # NaN included
        refuse(
            f"ROBOTSTXT_MAX_CRAWL_DELAY must be a number of seconds (or None for no bound), "
            f"not {value!r}"
        )
    return bound


class CrawlDelay:
    """Which requests are spaced and by how much, and the turns they take."""

    def __init__(
        self, crawler: Crawler, core: RobotsTxtCore, storage: Storage, clock: Clock
    ) -> None:
        settings = PackageSettings(crawler.settings)
        assert crawler.stats is not None
        self.crawler, self.stats, self.storage, self.clock = crawler, crawler.stats, storage, clock
        self.obey = settings.getbool("ROBOTSTXT_OBEY_CRAWL_DELAY")
        self.fleet_download_delay = settings.getbool("ROBOTSTXT_FLEET_DOWNLOAD_DELAY")
        self.bound = max_crawl_delay(settings.get("ROBOTSTXT_MAX_CRAWL_DELAY"))
        self.download_delay = crawler.settings.getfloat("DOWNLOAD_DELAY")
        self.book: TurnBook[Origin] = TurnBook()
        self.line = TurnLine(crawler, core, clock)
        self._announced: set[Origin] = set()
        # Origin → its asks for a turn that the storage has not answered yet.
        self._asking: dict[Origin, int] = {}
        self._local_warned = False
        # Requests that took their turn, on their way to their download slot.
        self._timed: weakref.WeakSet[Request] = weakref.WeakSet()
        crawler.signals.connect(self._reached_downloader, signals.request_reached_downloader)

    @classmethod
    def if_wanted(
        cls, crawler: Crawler, core: RobotsTxtCore, storage: Storage, clock: Clock
    ) -> CrawlDelay | None:
        """One for the crawl if it obeys Crawl-delay or spaces its fleet's download delay."""
        settings = PackageSettings(crawler.settings)
        if settings.getbool("ROBOTSTXT_OBEY_CRAWL_DELAY") or settings.getbool(
            "ROBOTSTXT_FLEET_DOWNLOAD_DELAY"
        ):
            return cls(crawler, core, storage, clock)
        return None

    async def turn(
        self, request: Request, origin: Origin, rules: RobotsTxt | None, token: str
    ) -> Request | None:
        """Let *request*, allowed, go on if its origin is not spaced or its turn is free;
        otherwise the request to send back for it to wait for its turn."""
        due = bool(request.meta.pop(TURN_META_KEY, False))
        straight_back = self.line.came_straight_back(request)
        if not (due or straight_back) and self.line.queued(origin):
            return self.line.set_aside(origin, request, None)
        delay = rules.crawl_delay(token) if self.obey and rules is not None else None
        slot_wait = (
            self._slot_wait(request) if delay is not None or self.fleet_download_delay else 0
        )
        spaced = spacing(delay, self.bound, slot_wait)
        if spaced.interval <= 0:
            return None
        wait = await self._take(origin, spaced.interval)
        if straight_back:
            # Downloaded without the scheduler (engine.download_async()): it cannot be set
            # aside, so it waits for its turn here, inside the downloader.
            while wait > 0:
                waited: Deferred[None] = Deferred()
                self.clock.callLater(wait, waited.callback, None)
                await maybe_deferred_to_future(waited)
                wait = await self._take(origin, spaced.interval)
        if origin in self.line.intervals or wait > 0:
            self.line.intervals[origin] = spaced.interval
        if wait > 0:
            return self.line.set_aside(origin, request, wait, first=due)
        self.line.next_turn(origin, spaced.interval)
        self._timed.add(request)
        if spaced.crawl_delay is not None and origin not in self._announced:
            self._announce(origin, spaced)
        return None

    async def _take(self, origin: Origin, interval: float) -> float:
        self._asking[origin] = self._asking.get(origin, 0) + 1
        try:
            wait = await self.storage.take_turn(origin, interval)
        finally:
            if (asking := self._asking.pop(origin) - 1) > 0:
                self._asking[origin] = asking
        if wait is not None:
            # Should the storage fail, the book takes over from the turn it knew last.
            now = self.clock.seconds()
            self.book.hold(origin, now + (wait or interval), now)
            return wait
        if self.storage.shared:
            self._turn_taken_alone()
            if origin in self._asking:
                # Another ask of this origin is still out, and may have been granted: the
                # book cannot know yet, so this one waits a turn.
                return interval
        return self.book.take(origin, interval, self.clock.seconds())

    def _turn_taken_alone(self) -> None:
        self.stats.inc_value(ROBOTSTXT_CRAWL_DELAY_LOCAL_TURNS)
        if not self._local_warned:
            self._local_warned = True
            logger.warning(
                "The fleet's turns cannot be read while its storage fails: each process "
                "spaces its own requests by the delay until it answers again",
                extra={"spider": self.crawler.spider},
            )

    def _slot_wait(self, request: Request) -> float:
        """The wait Scrapy's download slot would give *request* (DOWNLOAD_DELAY, AutoThrottle,
        their random variation): a turn lasts at least that, and the slot adds none."""
        downloader = self.crawler.engine.downloader
        slot = downloader.slots.get(downloader.get_slot_key(request))
        return slot.download_delay() if slot is not None else self.download_delay

    def _reached_downloader(self, request: Request, spider: Any) -> None:
        if request in self._timed:
            self._timed.discard(request)
            slot = self.crawler.engine.downloader.slots.get(request.meta.get("download_slot", ""))
            if slot is not None:
                # The turn spaced it from the previous one already, by at least the slot's
                # own wait: the slot must not make it wait a second time, neither from its
                # last download nor by the wait it set after it (Slot.close() cancels that
                # and nothing else; it only empties latercall from Scrapy 2.19).
                slot.lastseen = 0
                if slot.latercall is not None:
                    slot.close()
                    slot.latercall = None

    def _announce(self, origin: Origin, spaced: Spacing) -> None:
        self._announced.add(origin)
        assert spaced.crawl_delay is not None
        self.stats.inc_value(ROBOTSTXT_CRAWL_DELAY_APPLIED)
        self.stats.max_value(ROBOTSTXT_CRAWL_DELAY_MAX, spaced.spacing)
        level, message = logging.DEBUG, "Crawl-delay of %(origin)s: %(delay)g s"
        if spaced.bounded:
            self.stats.inc_value(ROBOTSTXT_CRAWL_DELAY_BOUNDED)
            level = logging.WARNING
            message = (
                "Crawl-delay of %(origin)s is %(delay)g s, over ROBOTSTXT_MAX_CRAWL_DELAY: "
                "its requests go %(bound)g s apart instead"
            )
        elif spaced.long:
            level = logging.WARNING
            message = (
                "Crawl-delay of %(origin)s is %(delay)g s: its requests go that far apart "
                "(ROBOTSTXT_MAX_CRAWL_DELAY sets a bound)"
            )
        values = {"origin": origin, "delay": spaced.crawl_delay, "bound": self.bound}
        logger.log(level, message, values, extra={"spider": self.crawler.spider})

    def close(self) -> None:
        lost = self.line.close()
        if lost:
            self.stats.inc_value(ROBOTSTXT_DROPPED_ON_CLOSE, lost)
            logger.warning(
                "%(count)d request(s) dropped: the crawl closed while they waited for their "
                "origin's turn (Crawl-delay)",
                {"count": lost},
                extra={"spider": self.crawler.spider},
            )
