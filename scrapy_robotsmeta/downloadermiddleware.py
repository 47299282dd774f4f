"""RobotsTxtMiddleware: Scrapy's robots.txt middleware, done as RFC 9309 says.

The data flows one way: a request's origin → that origin's state in the cache (fetched once,
with redirects and retries handled here) → a verdict → the request goes on, waits, or is
dropped with its reason logged and counted.

Requests of an origin whose robots.txt is not known yet are *parked*, so that they hold no
download slot while they wait; only the robots.txt download holds one. The first request of an
origin finds it unknown in ``process_request`` and is sent back through ``engine.crawl()``;
from then until no origin is pending, a ``request_scheduled`` handler keeps that origin's
requests out of the scheduler, before its duplicate filter sees them, and puts them back
through ``engine.crawl()`` once the origin is ready. While every known origin is settled the
handler is disconnected: a crawl pays nothing per scheduled request for it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest, NotConfigured
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet.defer import Deferred
from w3lib.url import safe_url_string

from scrapy_robotsmeta.robotstxt import MAX_BYTES, policy
from scrapy_robotsmeta.robotstxt.cache import Clock, OriginCache, OriginState
from scrapy_robotsmeta.robotstxt.origin import Origin, origin_of
from scrapy_robotsmeta.robotstxt.policy import Kind, Outcome
from scrapy_robotsmeta.useragent import CrawlerToken

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

# A server that asks for a robots.txt fetch before every request would make every request
# wait; below this many seconds, Cache-Control: max-age is raised to it.
MIN_EXPIRATION = 60.0

_EXEMPT_SCHEMES = ("data:", "file:")
#: Request meta key set on a request this middleware sent back to be parked.
REPARKED = "robotstxt_reparked"


class RobotsTxtMiddleware:
    """A drop-in replacement for ``scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware``."""

    DOWNLOAD_PRIORITY = 1000

    def __init__(self, crawler: Crawler, clock: Clock | None = None) -> None:
        settings = crawler.settings
        if not settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured
        if clock is None:
            from twisted.internet import reactor  # noqa: PLC0415 (the installed reactor)

            clock = reactor
        self.crawler = crawler
        self.clock: Clock = clock
        assert crawler.stats is not None
        self.stats: StatsCollector = crawler.stats
        self.token = CrawlerToken.from_settings(settings)
        self.expiration = settings.getfloat("ROBOTSTXT_CACHE_EXPIRATION", 86400.0)
        self.retry_delay = settings.getfloat("ROBOTSTXT_RETRY_DELAY", 2.0)
        self.retry_max_delay = settings.getfloat("ROBOTSTXT_RETRY_MAX_DELAY", 60.0)
        self.unavailable_timeout = settings.getfloat("ROBOTSTXT_UNAVAILABLE_TIMEOUT", 600.0)
        self.download_timeout = settings.getfloat("DOWNLOAD_TIMEOUT")
        self.obey_crawl_delay = settings.getbool("ROBOTSTXT_OBEY_CRAWL_DELAY", False)
        self.cache = OriginCache(settings.getint("ROBOTSTXT_CACHE_SIZE", 10_000))
        self._pending: set[OriginState] = set()
        self._tasks: set[Deferred[None]] = set()
        self._closed = False
        self._parking = False
        crawler.signals.connect(self._spider_idle, signals.spider_idle)
        crawler.signals.connect(self._spider_closed, signals.spider_closed)
        if self.obey_crawl_delay:
            crawler.signals.connect(
                self._request_reached_downloader, signals.request_reached_downloader
            )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RobotsTxtMiddleware:
        return cls(crawler)

    # -- the verdict -----------------------------------------------------------------------

    def _state(self, request: Request) -> OriginState | None:
        """The state of the request's origin, or None when the request is not checked."""
        if request.meta.get("dont_obey_robotstxt") or request.url.startswith(_EXEMPT_SCHEMES):
            return None
        origin = origin_of(request.url)
        if origin is None:
            return None  # no host to ask: the download fails on its own
        return self.cache.get(origin)

    def _settled(self, state: OriginState) -> bool:
        """Whether a request of this origin can be decided now; starts a fetch when one is
        due."""
        if state.settled(self.clock.seconds()):
            return True
        if not (state.fetching or state.retry or self._closed):
            self._fetch(state)
        return False

    def _check(self, state: OriginState, request: Request) -> None:
        now = self.clock.seconds()
        if state.ready(now):
            assert state.rules is not None
            token = self.token.for_request(request)
            if state.rules.allowed(request.url, token):
                return
            verdict = state.rules.explain(request.url, token)
            assert verdict.rule is not None
            assert verdict.agents is not None
            why = (
                f"Disallow: {verdict.rule.path} (line {verdict.rule.line}, "
                f"group {' '.join(verdict.agents)})"
            )
            logger.debug(
                "Forbidden by robots.txt: %(request)s, by %(why)s",
                {"request": request, "why": why},
                extra={"spider": self.crawler.spider},
            )
            self.stats.inc_value("robotstxt/forbidden")
            raise IgnoreRequest(f"Forbidden by robots.txt: {why}")
        self.stats.inc_value("robotstxt/unavailable_dropped")
        logger.debug(
            "Dropped %(request)s: robots.txt of %(origin)s unavailable (%(reason)s)",
            {"request": request, "origin": state.origin, "reason": state.reason},
            extra={"spider": self.crawler.spider},
        )
        raise IgnoreRequest(f"robots.txt of {state.origin} unavailable ({state.reason})")

    async def process_request(self, request: Request) -> Request | None:
        while True:
            state = self._state(request)
            if state is None:
                return None
            if self._settled(state):
                self._check(state, request)
                return None
            if self._closed:
                self._count_lost([request])
                raise IgnoreRequest("crawl closed while robots.txt was pending")
            if not request.meta.get(REPARKED):
                # Waiting here would hold a download slot: send the request back through the
                # engine, to be parked by request_scheduled, which is listened to while an
                # origin is pending (dont_filter: the duplicate filter saw it already). A
                # request that comes straight back (downloaded with engine.download_async(),
                # which never schedules) waits here instead.
                self.stats.inc_value("robotstxt/reparked")
                return request.replace(dont_filter=True, meta={**request.meta, REPARKED: True})
            await maybe_deferred_to_future(state.wait())

    # **kwargs: pydispatch then passes the signal's arguments as they are, instead of building
    # a filtered copy of them for every request scheduled.
    def _request_scheduled(self, request: Request, **kwargs: Any) -> None:
        state = self._state(request)
        if state is None:
            return
        if self._settled(state):
            return
        state.parked.append(request)
        self._pending.add(state)
        self.stats.inc_value("robotstxt/parked")
        # The engine drops a request whose request_scheduled handler raises IgnoreRequest,
        # before the scheduler and its duplicate filter see it, and calls no errback.
        raise IgnoreRequest

    # -- fetching --------------------------------------------------------------------------

    def _fetch(self, state: OriginState) -> None:
        self._pending.add(state)
        if not self._parking:
            # Strongly referenced (the middleware lives as long as the crawler): a weak
            # reference is rebuilt into a bound method on every dispatch, and this handler
            # runs for every request scheduled, duplicates included.
            self.crawler.signals.connect(
                self._request_scheduled, signals.request_scheduled, weak=False
            )
            self._parking = True
        state.fetching = True
        state.fetch_started = self.clock.seconds()
        task = deferred_from_coro(self._fetch_and_apply(state))
        # The event loop keeps only weak references to tasks: hold this one until it ends.
        self._tasks.add(task)
        task.addBoth(lambda _: self._tasks.discard(task))

    async def _fetch_and_apply(self, state: OriginState) -> None:
        state.trail = []
        # In an outage, no try may outlast the deadline: a hanging server would keep the crawl
        # open (the download is in flight) after the origin was given up.
        outage_start = state.fetch_started if state.down_since is None else state.down_since
        deadline = outage_start + self.unavailable_timeout
        timeout = min(self.download_timeout, max(deadline - state.fetch_started, 0.1))
        try:
            outcome = await self._download(state.origin, state.trail, timeout)
        except Exception as exc:  # a fault here must not leave the origin waiting forever
            logger.exception("Error while fetching robots.txt of %s", state.origin)
            outcome = policy.from_exception(exc)
        state.fetching = False
        self._apply(state, outcome)

    def _robots_request(self, url: str, timeout: float) -> Request:
        return Request(
            url,
            priority=self.DOWNLOAD_PRIORITY,
            callback=NO_CALLBACK,
            dont_filter=True,
            meta={
                "dont_obey_robotstxt": True,
                # Redirects and retries are this middleware's job, with the spec's limits.
                "dont_redirect": True,
                "dont_retry": True,
                "allow_offsite": True,
                "download_timeout": timeout,
            },
        )

    async def _download(self, origin: Origin, trail: list[str], timeout: float) -> Outcome:
        """Fetch robots.txt of *origin*, following redirects; *trail* records each hop."""
        url = origin.robots_url
        seen = {url}
        for _ in range(policy.MAX_REDIRECTS + 1):
            request = self._robots_request(url, timeout)
            self.stats.inc_value("robotstxt/request_count")
            try:
                response = await self.crawler.engine.download_async(request)
            except IgnoreRequest as exc:
                trail.append(f"{url} ignored")
                # Another middleware refused the fetch: not the site's answer. Like Scrapy's
                # built-in, treat robots.txt as missing.
                return policy.allow_all(f"robots.txt request ignored: {exc}")
            except Exception as exc:
                trail.append(f"{url} failed")
                self.stats.inc_value(f"robotstxt/exception_count/{type(exc)}")
                return policy.from_exception(exc)
            trail.append(f"{url} {response.status}")
            outcome = self._outcome(response)
            if outcome.kind is not Kind.REDIRECT:
                if outcome.kind is Kind.RULES:
                    await self.crawler.signals.send_catch_log_async(
                        signal=signals.robots_parsed, robotparser=outcome.rules, request=request
                    )
                return outcome
            assert outcome.location is not None
            url = safe_url_string(response.urljoin(outcome.location))
            if url in seen:
                self.stats.inc_value("robotstxt/redirect_loop")
                return policy.allow_all(f"redirect loop at {url}")
            seen.add(url)
        self.stats.inc_value("robotstxt/redirect_limit")
        return policy.allow_all(f"more than {policy.MAX_REDIRECTS} redirects")

    def _outcome(self, response: Response) -> Outcome:
        self.stats.inc_value("robotstxt/response_count")
        self.stats.inc_value(f"robotstxt/response_status_count/{response.status}")
        outcome = policy.from_response(
            response.status,
            response.body,
            location=response.headers.get(b"Location"),
            cache_control=response.headers.get(b"Cache-Control"),
            truncated="dataloss" in response.flags,
        )
        if outcome.rules is not None and outcome.rules.truncated:
            self.stats.inc_value("robotstxt/truncated")
            logger.info(
                "robots.txt at %s is larger than %d bytes; the rest is ignored",
                response.url,
                MAX_BYTES,
            )
        return outcome

    # -- outcomes --------------------------------------------------------------------------

    def _apply(self, state: OriginState, outcome: Outcome) -> None:
        now = self.clock.seconds()
        self.stats.inc_value(f"robotstxt/outcome/{outcome.kind.value}")
        if outcome.kind is Kind.UNAVAILABLE:
            self._unavailable(state, outcome.reason, now)
            return
        if outcome.kind is Kind.ALLOW_ALL or state.down_since is not None:
            logger.info(
                "robots.txt of %s: %s; %s",
                state.origin,
                outcome.reason,
                "allowing everything" if outcome.kind is Kind.ALLOW_ALL else "rules apply",
            )
        lifetime = self.expiration
        if outcome.max_age is not None:
            lifetime = min(lifetime, max(outcome.max_age, MIN_EXPIRATION))
        state.stop_timers()
        state.rules, state.reason = outcome.rules, outcome.reason
        state.expires_at, state.given_up = now + lifetime, False
        state.down_since, state.failures = None, 0
        self._release(state)

    def _unavailable(self, state: OriginState, reason: str, now: float) -> None:
        """RFC 9309 §2.3.1.4: an unreachable robots.txt means complete disallow, for now."""
        if state.dropping(now):
            return  # a try that ended after the origin was given up changes nothing
        delay = min(self.retry_delay * 2**state.failures, self.retry_max_delay)
        state.failures += 1
        if state.rules is not None:
            # RFC 9309 §2.4: while robots.txt is unreachable, the cached copy may be used.
            self.stats.inc_value("robotstxt/kept_cached_copy")
            logger.info(
                "robots.txt of %s unavailable on refresh (%s); keeping the cached copy",
                state.origin,
                reason,
            )
            state.expires_at = now + delay
            self._release(state)
            return
        state.reason = reason
        if state.down_since is None:
            state.down_since = now
            logger.info(
                "robots.txt of %s unavailable (%s); its requests wait while it is retried",
                state.origin,
                reason,
            )
            # The deadline does not wait for a try in flight: a hanging server must not
            # keep the crawl open past ROBOTSTXT_UNAVAILABLE_TIMEOUT.
            state.deadline = self.clock.callLater(self.unavailable_timeout, self._give_up, state)
        state.retry = self.clock.callLater(delay, self._retry, state)

    def _retry(self, state: OriginState) -> None:
        state.retry = None
        if not self._closed:
            self._fetch(state)

    def _give_up(self, state: OriginState) -> None:
        state.deadline = None
        state.stop_timers()
        now = self.clock.seconds()
        self.stats.inc_value("robotstxt/given_up")
        logger.warning(
            "robots.txt of %s unavailable for %.0f s (last: %s); giving up on this origin: "
            "its requests are dropped for the next %.0f s",
            state.origin,
            now - (state.down_since or now),
            state.reason,
            self.expiration,
            extra={"spider": self.crawler.spider},
        )
        state.given_up, state.reason = True, f"gave up after {state.reason}"
        state.expires_at = now + self.expiration
        state.down_since, state.failures = None, 0
        self._release(state)

    def _release(self, state: OriginState) -> None:
        self._pending.discard(state)
        if not self._pending:
            self._stop_parking()
        parked = state.wake()
        if self._closed:
            self._count_lost(parked)
            return
        for request in parked:
            self.crawler.engine.crawl(request)

    def state_of(self, url: str) -> OriginState | None:
        """What is known of the robots.txt that applies to *url* (for `scrapy robots`)."""
        origin = origin_of(url)
        return self.cache.peek(origin) if origin is not None else None

    # -- crawl lifecycle -------------------------------------------------------------------

    def _spider_idle(self) -> None:
        waiting = [state for state in self._pending if state.parked]
        for state in waiting:
            if not (state.fetching or state.retry):
                # Nothing would ever wake these requests (a fault in this middleware):
                # fetch again rather than keep the crawl open for nothing.
                self._fetch(state)
        if waiting:
            raise DontCloseSpider

    def _spider_closed(self) -> None:
        self._closed = True
        for state in self.cache:
            state.stop_timers()
            self._count_lost(state.wake())
        self._pending.clear()
        self._stop_parking()

    def _stop_parking(self) -> None:
        if self._parking:
            # weak=False as when connected: pydispatch silently keeps a receiver otherwise.
            self.crawler.signals.disconnect(
                self._request_scheduled, signals.request_scheduled, weak=False
            )
            self._parking = False

    def _count_lost(self, requests: list[Request]) -> None:
        if not requests:
            return
        self.stats.inc_value("robotstxt/dropped_on_close", len(requests))
        for request in requests:
            logger.info(
                "Dropped %(request)s: the crawl closed while its robots.txt was pending",
                {"request": request},
                extra={"spider": self.crawler.spider},
            )

    def _request_reached_downloader(self, request: Request, spider: Any) -> None:
        """Make the matched group's Crawl-delay a floor of the request's download slot."""
        origin = origin_of(request.url)
        if origin is None:
            return
        # peek, not get: a request that is not checked (robots.txt itself, dont_obey_robotstxt)
        # must not add an empty origin to the cache, nor push a real one out of it.
        state = self.cache.peek(origin)
        if state is None or state.rules is None:
            return
        delay = state.rules.crawl_delay(self.token.for_request(request))
        slot = self.crawler.engine.downloader.slots.get(request.meta.get("download_slot", ""))
        if delay is not None and slot is not None and slot.delay < delay:
            slot.delay = delay
            self.stats.inc_value("robotstxt/crawl_delay_applied")
