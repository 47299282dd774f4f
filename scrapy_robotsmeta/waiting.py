"""Requests whose origin has no verdict yet: held, parked, and put back into the crawl.

A request that meets a fetch in flight waits for it inside the downloader while the fetch's
hold lasts (``ROBOTSTXT_HOLD_TIME``), as Scrapy's built-in makes it wait: a robots.txt that
answers within it lets the request go on at once. Past it, or once the origin is found
unavailable, the request is sent back through ``engine.crawl()`` to be *parked*, so that a slow
or failing site holds none of the crawl's concurrency while it is retried. From the first
fetch until no origin is pending, a ``request_scheduled`` handler keeps the pending origins'
requests out of the scheduler, before its duplicate filter sees them, and hands them to the
storage; released, they go back through ``engine.crawl()``. While every known origin is settled
the handler is disconnected: a crawl pays nothing per scheduled request for it.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from scrapy_robotsmeta.keys import (
    DONT_OBEY_ROBOTSTXT,
    ROBOTSTXT_HELD,
    ROBOTSTXT_PARKED,
    ROBOTSTXT_REPARKED,
)
from scrapy_robotsmeta.robotstxt.origin import checked_origin
from scrapy_robotsmeta.robotstxt.state import Decision

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler

    from scrapy_robotsmeta.reactor import Clock
    from scrapy_robotsmeta.robotstxt.core import RobotsTxtCore
    from scrapy_robotsmeta.robotstxt.origin import Origin
    from scrapy_robotsmeta.robotstxt.state import OriginState
    from scrapy_robotsmeta.storage import Storage


def request_origin(request: Request) -> Origin | None:
    """The origin whose robots.txt *request* waits for; None when it is not checked."""
    return None if request.meta.get(DONT_OBEY_ROBOTSTXT) else checked_origin(request.url)


class WaitingRequests:
    """The Request objects of pending origins, for the core that knows which origins those are.

    *start_fetch*: runs the fetch that a check of a scheduled request began.
    """

    def __init__(
        self,
        crawler: Crawler,
        core: RobotsTxtCore,
        storage: Storage,
        clock: Clock,
        *,
        start_fetch: Callable[[OriginState, Request], None],
    ) -> None:
        assert crawler.stats is not None
        self.crawler, self.stats = crawler, crawler.stats
        self.core, self.storage, self.clock = core, storage, clock
        self._start_fetch = start_fetch
        # Released requests not decided yet, each with what tells the core once it is.
        self._releases: weakref.WeakKeyDictionary[Request, weakref.finalize[Any, Any]] = (
            weakref.WeakKeyDictionary()
        )
        # Requests sent back to be parked: one that comes straight back (downloaded with
        # engine.download_async(), which never schedules) waits in the downloader instead.
        # Weak: a parked or dropped request is forgotten.
        self._sent_back: weakref.WeakSet[Request] = weakref.WeakSet()
        #: The requests waiting inside the downloader, by origin.
        self._waiters: dict[Origin, list[tuple[Request, Deferred[None]]]] = {}
        self._parking = False

    async def wait(self, origin: Origin, request: Request, held: bool) -> Request | None:
        """Make *request* wait for *origin*: inside the downloader while the fetch's hold
        lasts (*held*) or when it cannot be scheduled; else send it back to be parked (the
        request to return from process_request)."""
        if held:
            self.stats.inc_value(ROBOTSTXT_HELD)
        elif request not in self._sent_back:
            # Waiting here any longer would hold a place of CONCURRENT_REQUESTS
            # (dont_filter: the duplicate filter saw it already).
            self.start_parking()
            self.stats.inc_value(ROBOTSTXT_REPARKED)
            sent_back = request.replace(dont_filter=True)
            self._sent_back.add(sent_back)
            return sent_back
        waiter: Deferred[None] = Deferred()
        self._waiters.setdefault(origin, []).append((request, waiter))
        await maybe_deferred_to_future(waiter)
        return None

    def decided(self, request: Request) -> None:
        """A released request got its verdict: its origin need not stay live for it."""
        if self._releases:
            release = self._releases.pop(request, None)
            if release is not None:
                release()  # tells the core once, and never again

    # **kwargs: pydispatch then passes the signal's arguments as they are, instead of building
    # a filtered copy of them for every request scheduled.
    def _request_scheduled(self, request: Request, **kwargs: Any) -> None:
        self._sent_back.discard(request)
        origin = request_origin(request)
        if origin is None or not self.core.is_pending(origin):
            # Not checked, settled, not met yet, or its rules expired: process_request decides
            # it, reading the origin's state once, and sends it back here if it must wait.
            return
        check = self.core.check(origin, self.clock.seconds())
        if check.decision is not Decision.WAIT:
            return
        if check.fetch:
            self._start_fetch(check.state, request)
        self.storage.park(origin, request)
        self.stats.inc_value(ROBOTSTXT_PARKED)
        # The engine drops a request whose request_scheduled handler raises IgnoreRequest,
        # before the scheduler and its duplicate filter see it, and calls no errback.
        raise IgnoreRequest

    def start_parking(self) -> None:
        if not self._parking:
            # Strongly referenced (this object lives as long as the crawler): a weak reference
            # is rebuilt into a bound method on every dispatch, and this handler runs for every
            # request scheduled, duplicates included.
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

    async def release(self, origin: Origin) -> None:
        """Put the requests that waited on *origin* back into the crawl."""
        self.core.released(origin)
        if not self.core.any_pending:
            self._stop_parking()
        self.wake(origin)
        if self.core.closed:
            return  # what is still parked stays with the storage, which counts it at close
        async for request in self.storage.release(origin):
            self._keep_until_decided(origin, request)
            self.crawler.engine.crawl(request)

    def wake(self, origin: Origin) -> None:
        """Wake the requests waiting in the downloader on *origin*: each decides again, and
        goes on, waits for its release (a request that cannot be parked) or is parked."""
        self.core.end_hold(origin)
        for request, waiter in self._waiters.pop(origin, []):
            self._keep_until_decided(origin, request)
            waiter.callback(None)

    def _keep_until_decided(self, origin: Origin, request: Request) -> None:
        if request not in self._releases and self.core.keep_until_decided(origin):
            self._releases[request] = weakref.finalize(request, self.core.decided, origin)

    def close(self) -> int:
        """Let go of the requests waiting in the downloader; return how many (they are lost)."""
        lost = 0
        for waiters in self._waiters.values():
            lost += len(waiters)
            for _, waiter in waiters:
                waiter.callback(None)
        self._waiters.clear()
        self._stop_parking()
        return lost
