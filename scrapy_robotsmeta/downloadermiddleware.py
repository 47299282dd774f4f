"""RobotsTxtMiddleware: Scrapy's robots.txt middleware, done as RFC 9309 says.

The data flows one way: a request's origin → the core's check of it
(:mod:`.robotstxt.core`) → the request goes on, waits, or is dropped with its reason logged and
counted. The core owns every origin's life and answers in values; this module is the adapter
that does what it asks, the way Scrapy's ``retry.py`` wraps ``get_retry_request``: it runs the
fetches (:mod:`.fetcher`), keeps one timer for the core's next due time, hands waiting
requests to :mod:`.waiting` (held, then parked) and trades states with a shared storage
(:mod:`.sharing`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest, NotConfigured
from scrapy.utils.job import job_dir
from scrapy.utils.misc import build_from_crawler, load_object

from scrapy_robotsmeta import reporting
from scrapy_robotsmeta.crawldelay import CrawlDelay
from scrapy_robotsmeta.defaults import PackageSettings
from scrapy_robotsmeta.evidence import EvidenceLog
from scrapy_robotsmeta.fetcher import RobotsTxtFetcher
from scrapy_robotsmeta.keys import PER_URL_META_KEYS
from scrapy_robotsmeta.reactor import Alarm, Clock, Tasks, crawler_clock
from scrapy_robotsmeta.robotstxt.core import RELEASING, Action, RobotsTxtCore
from scrapy_robotsmeta.robotstxt.explanation import Explanation
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import unavailable
from scrapy_robotsmeta.robotstxt.state import Change, Decision, OriginState, Timing
from scrapy_robotsmeta.robotstxt.statefile import open_state_file
from scrapy_robotsmeta.robotstxt_responses import RobotsTxtResponses
from scrapy_robotsmeta.sharing import Sharing
from scrapy_robotsmeta.startup import check_start, reported_refusals
from scrapy_robotsmeta.useragent import CrawlerToken
from scrapy_robotsmeta.verdicts import Verdicts
from scrapy_robotsmeta.waiting import WaitingRequests, request_origin

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from scrapy_robotsmeta.storage import Storage


class RobotsTxtMiddleware:
    """A drop-in replacement for ``scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware``."""

    def __init__(self, crawler: Crawler) -> None:
        check_start(crawler)
        if not crawler.settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured
        settings = PackageSettings(crawler.settings)
        self.crawler = crawler
        self.clock: Clock = crawler_clock(crawler)
        assert crawler.stats is not None
        self.stats: StatsCollector = crawler.stats
        self.token = CrawlerToken.from_settings(crawler.settings)
        storage_cls = load_object(settings.get("ROBOTSTXT_STORAGE"))
        self.storage: Storage = build_from_crawler(storage_cls, crawler)
        spill = self.storage.disk_tier and settings.getbool("ROBOTSTXT_CACHE_SPILL")
        self.core = RobotsTxtCore(
            Timing.from_settings(settings, crawler.settings.getfloat("DOWNLOAD_TIMEOUT")),
            settings.getint("ROBOTSTXT_CACHE_MEMORY"),
            settings.getfloat("ROBOTSTXT_HOLD_TIME"),
            open_state_file(job_dir(crawler.settings)) if spill else None,
        )
        self.responses = RobotsTxtResponses.from_settings(self.stats, settings, self.clock)
        evidence = EvidenceLog.from_settings(settings, self.stats)
        self.fetcher = RobotsTxtFetcher.from_settings(crawler, settings, self.responses, evidence)
        self.waiting = WaitingRequests(
            crawler, self.core, self.storage, self.clock, start_fetch=self._start_fetch
        )
        self.verdicts = Verdicts(self.stats, crawler.spider, evidence)
        self._alarm = Alarm(self.clock, self._on_due)
        self._tasks = Tasks(self.stats)
        self.sharing = Sharing(
            self.core, self.storage, self.clock, self.stats, self._tasks, on_news=self._waiting
        )
        crawler.signals.connect(self._spider_opened, signals.spider_opened)
        crawler.signals.connect(self._spider_idle, signals.spider_idle)
        crawler.signals.connect(self._spider_closed, signals.spider_closed)
        self.delay = CrawlDelay.if_wanted(crawler, self.core, self.storage, self.clock)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RobotsTxtMiddleware:
        with reported_refusals():
            return cls(crawler)

    # -- the decision ----------------------------------------------------------------------

    # spider: passed by Scrapy < 2.14 only.
    async def process_request(
        self, request: Request, spider: Any = None
    ) -> Request | Response | None:
        for key in PER_URL_META_KEYS:  # copied from another request, of another URL
            request.meta.pop(key, None)
        while (origin := request_origin(request)) is not None:
            check = self.core.check(origin, self.clock.seconds())
            if check.decision is not Decision.WAIT:
                self.waiting.decided(request)
                if (response := self.responses.answer(request, origin)) is not None:
                    return response
                token = self.token.for_request(request)
                self.verdicts.apply(check.decision, check.state, request, token)
                if self.delay is not None:
                    return await self.delay.turn(request, origin, check.state.rules, token)
                return None
            if check.fetch:
                self._start_fetch(check.state, request)
            if self.core.closed:
                reporting.lost(self.stats, 1, self.crawler.spider)
                raise IgnoreRequest("crawl closed while robots.txt was pending")
            sent_back = await self.waiting.wait(origin, request, check.held)
            if sent_back is not None:
                return sent_back
        return None

    def explain(self, url: str, request: Request | None = None) -> Explanation:
        """Why *url* is allowed, refused or waiting, as this crawl knows it now. *request*:
        a request of *url* whose User-Agent names the crawler (by default, the crawl's)."""
        return self.core.explain(url, self.token.for_request(request))

    # -- acting on the core's answers -------------------------------------------------------

    def _act(self, state: OriginState, action: Action | None) -> None:
        if action is Action.FETCH:
            self._start_fetch(state)
        elif action is Action.RELEASE:
            self._start_release(state)
        elif action is Action.GIVE_UP:
            last = state.reason
            down_for = self.core.give_up(state, self.clock.seconds())
            reporting.give_up(self.stats, state.origin, last, down_for, self.core.timing)
            self._run(self._publish_and_release(state), f"Giving up on {state.origin}", state)
        elif action is Action.END_HOLD:
            self.waiting.wake(state.origin)
        self._rearm()

    def _rearm(self) -> None:
        """Keep the one timer of the robots.txt part set for the core's next due time."""
        self._alarm.set(self.core.next_due())

    def _on_due(self) -> None:
        for state, action in self.core.due(self.clock.seconds()):
            self._act(state, action)
        self._rearm()

    def _waiting(self, origin: Origin) -> None:
        """Requests of *origin* wait (parked earlier, elsewhere, or left by a failure)."""
        self.waiting.start_parking()
        self._act(*self.core.waiting(origin, self.clock.seconds()))

    def _run(self, coroutine: Any, what: str, state: OriginState) -> None:
        """Background work on *state*'s origin; a failure leaves its requests to the idle check."""
        self._tasks.run(coroutine, what, lambda _: self._release_failed(state.origin))

    # -- fetching and releasing ------------------------------------------------------------

    def _start_fetch(self, state: OriginState, context: Request | None = None) -> None:
        """Run the fetch the core began, with the routing meta keys of *context* if any."""
        self.waiting.start_parking()
        self._rearm()  # the fetch's hold
        self._tasks.run(
            self._fetch(state, context),
            f"The robots.txt fetch of {state.origin}",
            lambda exc: self._fetch_failed(state, exc),
        )

    async def _fetch(self, state: OriginState, context: Request | None) -> None:
        if not await self.storage.claim_fetch(state.origin, self.sharing.settles(state)):
            # Another process of the crawl fetched it (its state is adopted now) or fetches
            # it (its outcome arrives through poll()).
            now = self.clock.seconds()
            release = self.core.fetch_left(state, now, now + self.storage.poll_interval)
            self.waiting.wake(state.origin)
            if release:
                self._start_release(state)
            else:
                self._rearm()
                self.sharing.start()
            return
        timeout, fresh = self.core.fetch_claimed(state, self.clock.seconds())
        outcome = await self.fetcher.fetch(state.origin, timeout, context, fresh)
        change = self.core.settle(state, outcome, self.clock.seconds())
        reporting.change(self.stats, state, change, outcome)
        if change is Change.OUTAGE_STARTED:
            self.waiting.wake(state.origin)
        self._rearm()
        body = outcome.body if outcome.rules is not None else None
        await self.storage.publish(state.origin, state.snapshot(), body, fetched=True)
        if change in RELEASING:
            self._start_release(state)

    def _fetch_failed(self, state: OriginState, exc: BaseException) -> None:
        """A fetch whose bookkeeping failed (its storage raised) would leave its origin being
        fetched for ever: count it as a failed try, whose retry follows."""
        if state.fetching:
            reason = f"internal error: {type(exc).__name__}: {exc}".rstrip(": ")
            now = self.clock.seconds()
            if self.core.settle(state, unavailable(reason), now) is Change.OUTAGE_STARTED:
                self.waiting.wake(state.origin)
        self._waiting(state.origin)

    async def _publish_and_release(self, state: OriginState) -> None:
        await self.storage.publish(state.origin, state.snapshot(), None, fetched=False)
        self._start_release(state)

    def _start_release(self, state: OriginState) -> None:
        origin = state.origin
        self._run(self.waiting.release(origin), f"Releasing the requests of {origin}", state)

    def _release_failed(self, origin: Origin) -> None:
        """What a failed release left in the storage is released again when the crawl is idle."""
        self.core.release_failed(origin)
        self.waiting.start_parking()

    # -- crawl lifecycle -------------------------------------------------------------------

    async def _spider_opened(self) -> None:
        await self.storage.open()
        restored = self.storage.parked_origins()
        reporting.restored(len(restored))
        for origin in restored:
            self._waiting(origin)
        if self.storage.shared:
            self.sharing.start()

    def _spider_idle(self) -> None:
        # Every origin with parked requests, not only those this process waits on (a shared
        # storage holds other processes' too): the crawl stays open until they are decided.
        parked = self.storage.parked_origins()
        for origin in self.core.unattended(parked):
            self._waiting(origin)
        if parked:
            raise DontCloseSpider

    async def _spider_closed(self) -> None:
        self.core.close()
        reporting.cache(self.stats, self.core.cache)
        self.sharing.close()
        self._alarm.cancel()
        lost = self.waiting.close()
        if self.delay is not None:
            self.delay.close()
        reporting.lost(self.stats, lost + await self.storage.close(), self.crawler.spider)
        self.core.cache.close()  # last: with JOBDIR, what is live goes to the disk tier
