"""RobotsTxtMiddleware: Scrapy's robots.txt middleware, done as RFC 9309 says.

The data flows one way: a request's origin → that origin's state (:mod:`.robotstxt.state`)
→ a decision → the request goes on, waits, or is dropped with its reason logged and counted.
This module only wires the parts: the fetcher downloads robots.txt, the state machine says
what each answer means over time, and the storage keeps states and parked requests.

The first request of an origin finds it unknown in ``process_request``, which starts the
robots.txt fetch; requests that reach it while that fetch is in flight wait there for at most
``ROBOTSTXT_HOLD_TIME``, as Scrapy's built-in makes them wait: a robots.txt that answers within
it lets them go on at once, without a second trip through the scheduler. Past it, or once the
origin is found unavailable, they are sent back through ``engine.crawl()`` to be *parked*, so
that a slow or failing site holds none of the crawl's concurrency while it is retried. From the
first fetch until no origin is pending, a ``request_scheduled`` handler keeps the pending
origins' requests out of the scheduler, before its duplicate filter sees them, and puts them
back through ``engine.crawl()`` once the origin is settled. While every known origin is settled
the handler is disconnected: a crawl pays nothing per scheduled request for it.
"""

from __future__ import annotations

import logging
import weakref
from collections import Counter
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.misc import build_from_crawler, load_object
from twisted.internet.defer import Deferred

from scrapy_robotsmeta._compat import set_slot_jitter, slot_jitter
from scrapy_robotsmeta.defaults import PackageSettings
from scrapy_robotsmeta.fetcher import RobotsTxtFetcher
from scrapy_robotsmeta.reactor import Clock, Tasks, crawler_clock
from scrapy_robotsmeta.robotstxt.cache import OriginCache
from scrapy_robotsmeta.robotstxt.explanation import Explanation, Policy
from scrapy_robotsmeta.robotstxt.origin import Origin, origin_of
from scrapy_robotsmeta.robotstxt.policy import Kind
from scrapy_robotsmeta.robotstxt.state import Change, Decision, OriginState, Timing
from scrapy_robotsmeta.useragent import CrawlerToken

if TYPE_CHECKING:
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.base import DelayedCall

    from scrapy_robotsmeta.robotstxt import RobotsTxt
    from scrapy_robotsmeta.robotstxt.policy import Outcome
    from scrapy_robotsmeta.storage import Storage


logger = logging.getLogger(__name__)

_EXEMPT_SCHEMES = ("data:", "file:")
#: Request meta key that exempts a request from robots.txt (Scrapy's own).
DONT_OBEY = "dont_obey_robotstxt"
#: The request meta key that carries, to the response, the usage preferences its origin's
#: robots.txt stated for its URL when it was downloaded (a Preferences; absent when none).
USAGE_META_KEY = "robotstxt_usage"


class RobotsTxtMiddleware:
    """A drop-in replacement for ``scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware``."""

    def __init__(self, crawler: Crawler) -> None:
        settings = PackageSettings(crawler.settings)
        if not crawler.settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured
        if not crawler.settings.getbool("TWISTED_REACTOR_ENABLED", True):
            # Not NotConfigured: that would crawl without robots.txt, silently.
            raise RuntimeError(
                "scrapy_robotsmeta's RobotsTxtMiddleware needs the Twisted reactor (its timers "
                "and retries run on it); it cannot run with TWISTED_REACTOR_ENABLED = False"
            )
        self.crawler = crawler
        self.clock: Clock = crawler_clock(crawler)
        assert crawler.stats is not None
        self.stats: StatsCollector = crawler.stats
        self.token = CrawlerToken.from_settings(crawler.settings)
        self.hold_time = settings.getfloat("ROBOTSTXT_HOLD_TIME")
        self.timing = Timing(
            expiration=settings.getfloat("ROBOTSTXT_CACHE_EXPIRATION"),
            retry_delay=settings.getfloat("ROBOTSTXT_RETRY_DELAY"),
            retry_max_delay=settings.getfloat("ROBOTSTXT_RETRY_MAX_DELAY"),
            unavailable_timeout=settings.getfloat("ROBOTSTXT_UNAVAILABLE_TIMEOUT"),
            download_timeout=crawler.settings.getfloat("DOWNLOAD_TIMEOUT"),
        )
        #: Origins whose requests wait: parked, waiting in process_request, or being fetched.
        self._pending: set[Origin] = set()
        #: Origins with released requests not decided yet, and how many (see _keep_until_decided).
        self._undecided: Counter[Origin] = Counter()
        self._releases: weakref.WeakKeyDictionary[Request, weakref.finalize[Any, Any]] = (
            weakref.WeakKeyDictionary()
        )
        self.states = OriginCache(settings.getint("ROBOTSTXT_CACHE_MEMORY"), keep=self._kept)
        self.fetcher = RobotsTxtFetcher(
            crawler,
            self.stats,
            settings.getlist("ROBOTSTXT_REQUEST_META_KEYS"),
        )
        storage_cls = load_object(settings.get("ROBOTSTXT_STORAGE"))
        self.storage: Storage = build_from_crawler(storage_cls, crawler, self.states)
        # Requests this middleware sent back to be parked: one that comes straight back
        # (downloaded with engine.download_async(), which never schedules) waits inside
        # process_request instead. Weak: a parked or dropped request is forgotten.
        self._sent_back: weakref.WeakSet[Request] = weakref.WeakSet()
        #: The requests waiting in process_request, by origin.
        self._waiters: dict[Origin, list[tuple[Request, Deferred[None]]]] = {}
        #: Origins whose requests may wait in process_request for the fetch in flight, and
        #: the timer that ends that.
        self._holding: dict[Origin, DelayedCall] = {}
        self._timers: dict[Origin, DelayedCall] = {}
        self._tasks = Tasks()
        self._poller: DelayedCall | None = None
        self._closed = False
        self._parking = False
        crawler.signals.connect(self._spider_opened, signals.spider_opened)
        crawler.signals.connect(self._spider_idle, signals.spider_idle)
        crawler.signals.connect(self._spider_closed, signals.spider_closed)
        if settings.getbool("ROBOTSTXT_OBEY_CRAWL_DELAY"):
            crawler.signals.connect(
                self._request_reached_downloader, signals.request_reached_downloader
            )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RobotsTxtMiddleware:
        return cls(crawler)

    # -- the decision ----------------------------------------------------------------------

    def _origin(self, request: Request) -> Origin | None:
        """The request's origin, or None when the request is not checked."""
        if request.meta.get(DONT_OBEY) or request.url.startswith(_EXEMPT_SCHEMES):
            return None
        return origin_of(request.url)  # None without a host: the download fails on its own

    def _decide(self, state: OriginState, request: Request) -> Decision:
        """Decide *request* at one reading of the clock: let it go (RULES), raise
        IgnoreRequest, or say it must wait (WAIT), starting a fetch when one is due."""
        now = self.clock.seconds()
        decision = state.decide(now)
        if self._releases and decision is not Decision.WAIT:
            release = self._releases.pop(request, None)
            if release is not None:
                release()  # runs _decided once, and never again
        if decision is Decision.RULES:
            assert state.rules is not None
            token = self.token.for_request(request)
            if not state.rules.allowed(request.url, token):
                self._forbid(state, request, token)
            self._record_usage(state.rules, request, token)
        elif decision is Decision.DROP:
            self.stats.inc_value("robotstxt/unavailable_dropped")
            logger.debug(
                "Dropped %(request)s: robots.txt of %(origin)s unavailable (%(reason)s)",
                {"request": request, "origin": state.origin, "reason": state.reason},
                extra={"spider": self.crawler.spider},
            )
            raise IgnoreRequest(f"robots.txt of {state.origin} unavailable ({state.reason})")
        elif state.fetch_due(now) and not self._closed:
            self._start_fetch(state, request)
        return decision

    def _record_usage(self, rules: RobotsTxt, request: Request, token: str) -> None:
        """Put on the request, for its response, the preferences robots.txt states for it now:
        by the time an item is made of the response, the origin may have been refreshed or
        have left the cache."""
        reading = rules.read_usage(request.url, token)
        if reading.preferences.statements:
            request.meta[USAGE_META_KEY] = reading.preferences
        for reason in reading.ignored:
            self.stats.inc_value("robotstxt/usage_ignored")
            logger.debug(
                "Ignored part of a usage preference for %(request)s: %(reason)s",
                {"request": request, "reason": reason},
                extra={"spider": self.crawler.spider},
            )

    def _forbid(self, state: OriginState, request: Request, token: str) -> None:
        why = str(state.explain(request.url, token))
        logger.debug(
            "Forbidden by robots.txt: %(request)s, by %(why)s",
            {"request": request, "why": why},
            extra={"spider": self.crawler.spider},
        )
        self.stats.inc_value("robotstxt/forbidden")
        raise IgnoreRequest(f"Forbidden by robots.txt: {why}")

    # spider: passed by Scrapy < 2.14 only.
    async def process_request(self, request: Request, spider: Any = None) -> Request | None:
        # A redirect's request comes with a copy of its predecessor's meta: what robots.txt
        # said of the other URL is no statement about this one.
        request.meta.pop(USAGE_META_KEY, None)
        while True:
            origin = self._origin(request)
            if origin is None:
                return None
            state = self.states.get_or_create(origin)
            if self._decide(state, request) is not Decision.WAIT:
                return None
            if self._closed:
                self._count_lost(1)
                raise IgnoreRequest("crawl closed while robots.txt was pending")
            self._pending.add(origin)
            if origin in self._holding:
                self.stats.inc_value("robotstxt/held")
            elif request not in self._sent_back:
                # Waiting here any longer would hold a place of CONCURRENT_REQUESTS: send the
                # request back through the engine, to be parked by request_scheduled
                # (dont_filter: the duplicate filter saw it already).
                self._start_parking()
                self.stats.inc_value("robotstxt/reparked")
                sent_back = request.replace(dont_filter=True)
                self._sent_back.add(sent_back)
                return sent_back
            waiter: Deferred[None] = Deferred()
            self._waiters.setdefault(origin, []).append((request, waiter))
            await maybe_deferred_to_future(waiter)

    # **kwargs: pydispatch then passes the signal's arguments as they are, instead of building
    # a filtered copy of them for every request scheduled.
    def _request_scheduled(self, request: Request, **kwargs: Any) -> None:
        self._sent_back.discard(request)
        origin = self._origin(request)
        if origin not in self._pending:
            # Not checked, settled, not met yet, or its rules expired: process_request decides it,
            # reading the origin's state once (from the disk tier, for most origins of a broad
            # crawl), and sends it back here if it must wait.
            return
        state = self.states.get_or_create(origin)
        now = self.clock.seconds()
        if state.decide(now) is not Decision.WAIT:
            return
        if state.fetch_due(now) and not self._closed:
            self._start_fetch(state, request)
        self._pending.add(origin)
        self.storage.park(origin, request)
        self.stats.inc_value("robotstxt/parked")
        # The engine drops a request whose request_scheduled handler raises IgnoreRequest,
        # before the scheduler and its duplicate filter see it, and calls no errback.
        raise IgnoreRequest

    def _start_parking(self) -> None:
        if not self._parking:
            # Strongly referenced (the middleware lives as long as the crawler): a weak
            # reference is rebuilt into a bound method on every dispatch, and this handler
            # runs for every request scheduled, duplicates included.
            self.crawler.signals.connect(
                self._request_scheduled, signals.request_scheduled, weak=False
            )
            self._parking = True

    def _stop_parking(self) -> None:
        if self._parking:
            # weak=False as when connected: pydispatch silently keeps a receiver otherwise.
            self.crawler.signals.disconnect(
                self._request_scheduled, signals.request_scheduled, weak=False
            )
            self._parking = False

    # -- fetching --------------------------------------------------------------------------

    def _start_fetch(self, state: OriginState, context: Request | None = None) -> None:
        """Fetch the origin's robots.txt in the background; *context* is the request that
        needs it (its routing meta keys go with the fetch)."""
        self._pending.add(state.origin)
        self._start_parking()
        # Marked at once, so that the requests decided before the task runs start no other.
        state.fetching = True
        if self.hold_time > 0 and state.down_since is None and not self._closed:
            # Not during an outage: its tries fail, or hang until their timeout.
            origin = state.origin
            self._holding[origin] = self.clock.callLater(self.hold_time, self._end_hold, origin)
        self._tasks.run(self._fetch(state, context))

    async def _fetch(self, state: OriginState, context: Request | None) -> None:
        if not await self.storage.claim_fetch(state):
            # Another process of the crawl fetched it (its state is adopted now) or fetches
            # it (its outcome arrives through poll()).
            state.fetching = False
            self._end_hold(state.origin)
            now = self.clock.seconds()
            if state.decide(now) is not Decision.WAIT:
                await self._release(state)
                return
            state.defer_fetch(now + self.storage.poll_interval)
            self._set_timer(state)
            self._start_polling()
            return
        # A retry or a refresh must reach the site, not Scrapy's HTTP cache.
        fresh = state.fetched_before
        timeout = state.start_fetch(self.clock.seconds(), self.timing)
        outcome = await self.fetcher.fetch(state.origin, timeout, context, fresh)
        change = state.apply(outcome, self.clock.seconds(), self.timing)
        self.stats.inc_value(f"robotstxt/outcome/{outcome.kind.value}")
        self._log_change(state, change, outcome)
        await self.storage.publish(state, outcome)
        await self._settle(state, change)

    async def _settle(self, state: OriginState, change: Change) -> None:
        """Act on a change of *state*: release its requests, or wait for the next try."""
        if change in (Change.READY, Change.RECOVERED, Change.KEPT_CACHED_COPY):
            await self._release(state)
        elif change in (Change.OUTAGE_STARTED, Change.STILL_DOWN):
            if change is Change.OUTAGE_STARTED:
                self._end_hold(state.origin)  # the requests held for this fetch go to be parked
            self._set_timer(state)

    def _set_timer(self, state: OriginState) -> None:
        """Wake the origin when it next has something to do: a retry or its give-up."""
        _cancel(self._timers, state.origin)
        if self._closed:
            return
        now = self.clock.seconds()
        if self._wake_due(state, now):
            delay = 0.0
        else:
            later = [t for t in (state.retry_at, state.give_up_at) if t is not None and t > now]
            if not later:
                return
            delay = min(later) - now
        self._timers[state.origin] = self.clock.callLater(delay, self._wake, state)

    @staticmethod
    def _wake_due(state: OriginState, now: float) -> bool:
        return (state.deadline_passed(now) and not state.given_up) or state.fetch_due(now)

    def _wake(self, state: OriginState) -> None:
        self._timers.pop(state.origin, None)
        now = self.clock.seconds()
        if state.deadline_passed(now) and not state.given_up:
            self._log_give_up(state, now)
            state.give_up(now, self.timing)
            self._tasks.run(self._publish_and_release(state))
        else:
            self._advance(state)

    def _advance(self, state: OriginState) -> None:
        """Act on *state* as it stands now: release its requests once they can be decided,
        start a fetch that is due, or wait for the next retry or give-up."""
        now = self.clock.seconds()
        if state.decide(now) is not Decision.WAIT:
            self._tasks.run(self._release(state))
        elif state.fetch_due(now):
            self._start_fetch(state)
        else:
            self._set_timer(state)

    async def _publish_and_release(self, state: OriginState) -> None:
        await self.storage.publish(state, None)
        await self._release(state)

    def _log_change(self, state: OriginState, change: Change, outcome: Outcome) -> None:
        origin, reason = state.origin, outcome.reason
        if change is Change.KEPT_CACHED_COPY:
            # RFC 9309 §2.4: while robots.txt is unreachable, the cached copy may be used.
            self.stats.inc_value("robotstxt/kept_cached_copy")
            logger.info(
                "robots.txt of %s unavailable on refresh (%s); keeping the cached copy",
                origin,
                reason,
            )
        elif change is Change.OUTAGE_STARTED:
            logger.info(
                "robots.txt of %s unavailable (%s); its requests wait while it is retried",
                origin,
                reason,
            )
        elif change is Change.RECOVERED or (
            change is Change.READY and outcome.kind is Kind.ALLOW_ALL
        ):
            logger.info(
                "robots.txt of %s: %s; %s",
                origin,
                reason,
                "allowing everything" if outcome.kind is Kind.ALLOW_ALL else "rules apply",
            )

    def _log_give_up(self, state: OriginState, now: float) -> None:
        # How long it was down by this process's clock (another process's outage, adopted,
        # is moved to it), not the setting: a skewed clock would show there.
        down_since = now if state.down_since is None else state.down_since
        self.stats.inc_value("robotstxt/given_up")
        logger.warning(
            "robots.txt of %s unavailable for %.0f s (last: %s); giving up on this origin: "
            "its requests are dropped for the next %.0f s",
            state.origin,
            now - down_since,
            state.reason,
            self.timing.expiration,
            extra={"spider": self.crawler.spider},
        )

    async def _release(self, state: OriginState) -> None:
        """Put the requests that waited on *state*'s origin back into the crawl."""
        origin = state.origin
        _cancel(self._timers, origin)
        self._pending.discard(origin)
        if not self._pending:
            self._stop_parking()
        self._end_hold(origin)
        if self._closed:
            return  # what is still parked stays with the storage, which counts it at close
        async for request in self.storage.release(origin):
            self._keep_until_decided(origin, request)
            self.crawler.engine.crawl(request)

    def _end_hold(self, origin: Origin) -> None:
        """Wake the requests waiting in process_request on *origin*: each decides again, and
        goes on, waits for its release (a request that cannot be parked) or is parked."""
        _cancel(self._holding, origin)
        for request, waiter in self._waiters.pop(origin, []):
            self._keep_until_decided(origin, request)
            waiter.callback(None)

    def _kept(self, origin: Origin) -> bool:
        """Whether *origin*'s state must stay live in memory."""
        return origin in self._pending or origin in self._undecided

    def _keep_until_decided(self, origin: Origin, request: Request) -> None:
        """Keep *origin* live until *request*, released, is decided, or dropped on its way."""
        # Without a second tier, an origin that left memory before its released requests were
        # decided would be fetched again and those requests parked again, over and over.
        if self.states.second is not None or request in self._releases:
            return
        self._undecided[origin] += 1
        self._releases[request] = weakref.finalize(request, self._decided, origin)

    def _decided(self, origin: Origin) -> None:
        self._undecided[origin] -= 1
        if not self._undecided[origin]:
            del self._undecided[origin]

    def explain(self, url: str, request: Request | None = None) -> Explanation:
        """Why *url* is allowed, refused or waiting, as this crawl knows it now. *request*:
        a request of *url* whose User-Agent names the crawler (by default, the crawl's)."""
        origin = None if url.startswith(_EXEMPT_SCHEMES) else origin_of(url)
        if origin is None:
            return Explanation.not_checked(url, "no robots.txt for this URL")
        state = self.states.peek(origin)
        if state is None:
            return Explanation(url, origin, Policy.UNKNOWN, "not fetched yet")
        return state.explain(url, self.token.for_request(request))

    # -- a shared storage ------------------------------------------------------------------

    def _start_polling(self) -> None:
        if self._poller is None and not self._closed:
            self._poller = self.clock.callLater(self.storage.poll_interval, self._poll)

    def _poll(self) -> None:
        self._poller = None
        self._tasks.run(self._poll_once())

    async def _poll_once(self) -> None:
        for polled in await self.storage.poll(list(self._pending)):
            self._pending.add(polled.origin)
            self._start_parking()
            # Looked up again now that it is pending: the cache keeps an origin it read back
            # for one look-up only, unless it changed or requests wait on it.
            self._advance(self.states.get_or_create(polled.origin))
        if self._pending or self.storage.shared:
            self._start_polling()

    # -- crawl lifecycle -------------------------------------------------------------------

    async def _spider_opened(self) -> None:
        await self.storage.open()
        restored = self.storage.parked_origins()
        if restored:
            logger.info(
                "Found requests parked for the robots.txt of %d origin(s) by an earlier run",
                len(restored),
            )
        for origin in restored:
            self._pending.add(origin)
            self._start_parking()
            self._advance(self.states.get_or_create(origin))
        if self.storage.shared:
            self._start_polling()

    def _spider_idle(self) -> None:
        # Every origin with parked requests, not only those this process waits on: a shared
        # storage also holds requests that reached it after their origin's release here, or
        # that a stopped process left; the crawl stays open until they are decided.
        waiting = self.storage.parked_origins()
        for origin in waiting:
            if origin not in self._timers:
                # Nothing may wake these requests (a release that missed them, or a fault in
                # this middleware): act on their origin rather than keep the crawl open for
                # nothing.
                self._pending.add(origin)
                self._start_parking()
                self._advance(self.states.get_or_create(origin))
        if waiting:
            raise DontCloseSpider

    async def _spider_closed(self) -> None:
        self._closed = True
        self._record_cache_stats()
        for timer in (*self._timers.values(), *self._holding.values(), self._poller):
            if timer is not None and timer.active():
                timer.cancel()
        self._timers.clear()
        self._holding.clear()
        for waiters in self._waiters.values():
            self._count_lost(len(waiters))
            for _, waiter in waiters:
                waiter.callback(None)
        self._waiters.clear()
        self._pending.clear()
        self._stop_parking()
        self._count_lost(await self.storage.close())

    def _record_cache_stats(self) -> None:
        cache = self.states
        for name, value in (
            ("memory_hits", cache.memory_hits),
            ("packed_hits", cache.packed_hits),
            ("disk_hits", cache.second_hits),
            ("packed", cache.packed),
            ("spilled", cache.spilled),
            ("forgotten", cache.forgotten),
            ("disk_errors", cache.second.errors if cache.second is not None else 0),
        ):
            self.stats.set_value(f"robotstxt/cache/{name}", value)

    def _count_lost(self, count: int) -> None:
        if not count:
            return
        self.stats.inc_value("robotstxt/dropped_on_close", count)
        logger.warning(
            "%(count)d request(s) dropped: the crawl closed while their robots.txt was "
            "pending (with JOBDIR set, parked requests are kept for the next run)",
            {"count": count},
            extra={"spider": self.crawler.spider},
        )

    def _request_reached_downloader(self, request: Request, spider: Any) -> None:
        """Make the matched group's Crawl-delay a floor of the request's download slot."""
        origin = origin_of(request.url)
        if origin is None:
            return
        # peek, not get: a request that is not checked (robots.txt itself, dont_obey_robotstxt)
        # must not add an empty origin to the cache, nor push a real one out of it.
        state = self.states.peek(origin)
        if state is None or state.rules is None:
            return
        delay = state.rules.crawl_delay(self.token.for_request(request))
        slot = self.crawler.engine.downloader.slots.get(request.meta.get("download_slot", ""))
        if delay is not None and slot is not None and _raise_floor(slot, delay):
            self.stats.inc_value("robotstxt/crawl_delay_applied")


def _cancel(timers: dict[Origin, DelayedCall], origin: Origin) -> None:
    """Forget *origin*'s timer in *timers*, cancelling it if it has not run yet."""
    timer = timers.pop(origin, None)
    if timer is not None and timer.active():
        timer.cancel()


def _raise_floor(slot: Slot, floor: float) -> bool:
    """Make every wait of the slot at least ``floor``: its delay, and also the random variation
    Scrapy adds to it (RANDOMIZE_DOWNLOAD_DELAY, DOWNLOAD_DELAY_JITTER), which would otherwise
    take half of the waits under the Crawl-delay. True if the slot changed."""
    changed = slot.delay < floor
    if changed:
        slot.delay = floor
    if slot.delay * (1 - slot_jitter(slot)) < floor:
        set_slot_jitter(slot, 1 - floor / slot.delay)
        changed = True
    return changed
