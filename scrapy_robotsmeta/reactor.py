"""Time and background work for the robots.txt part: the reactor, or a clock a test drives."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.log import failure_to_exc_info

from scrapy_robotsmeta.keys import ROBOTSTXT_TASK_ERRORS

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.base import DelayedCall
    from twisted.internet.defer import Deferred
    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

#: Crawler attribute a test (or an embedding application) sets to drive time itself.
CLOCK_ATTRIBUTE = "robotstxt_clock"


class Clock(Protocol):
    """The part of Twisted's IReactorTime used here: the reactor, or a task.Clock in tests."""

    def seconds(self) -> float: ...

    def callLater(
        self, delay: float, callable: Callable[..., Any], *args: Any, **kw: Any
    ) -> DelayedCall: ...


def crawler_clock(crawler: Crawler) -> Clock:
    clock: Clock | None = getattr(crawler, CLOCK_ATTRIBUTE, None)
    if clock is None:
        from twisted.internet import reactor  # noqa: PLC0415 (the installed reactor)

        clock = reactor
    assert clock is not None
    return clock


class Tasks:
    """Coroutines run in the background, each held until it ends: the event loop keeps only
    weak references to tasks, and one collected mid-way would never finish.

    Nobody awaits a background task, so nobody would see it fail: a failure is logged with
    what the task was doing, counted in ``robotstxt/task_errors``, and handed to the task's
    *recover* callback, which puts its origin back on a path that ends (a retry, a release)."""

    def __init__(self, stats: StatsCollector) -> None:
        self._stats = stats
        self._running: set[Deferred[Any]] = set()

    def run(
        self,
        coroutine: Coroutine[Any, Any, Any],
        what: str,
        recover: Callable[[BaseException], None] | None = None,
    ) -> None:
        """Run *coroutine*; *what* names its work in the log line of a failure."""
        task = deferred_from_coro(coroutine)
        self._running.add(task)
        task.addErrback(self._failed, what, recover)
        task.addBoth(lambda _: self._running.discard(task))

    def _failed(
        self, failure: Failure, what: str, recover: Callable[[BaseException], None] | None
    ) -> None:
        self._stats.inc_value(ROBOTSTXT_TASK_ERRORS)
        logger.error(
            "%s failed: %s", what, failure.getErrorMessage(), exc_info=failure_to_exc_info(failure)
        )
        if recover is not None and failure.value is not None:
            try:
                recover(failure.value)
            except Exception:  # the recovery's own fault must not go unseen either
                logger.exception("Recovering from the failure of %s failed", what)


class Alarm:
    """One timer, kept set for a time that changes (the nearest of many), calling *ring* then."""

    def __init__(self, clock: Clock, ring: Callable[[], None]) -> None:
        self._clock, self._ring = clock, ring
        self._timer: DelayedCall | None = None
        # The time the timer was set for: the timer's own (now + delay) may differ from it by
        # a rounding error, and most calls ask again for the time already set.
        self._when: float | None = None

    def set(self, when: float | None) -> None:
        """Ring at *when* (None: never), instead of any time set before."""
        timer = self._timer
        if timer is not None and timer.active():
            if when == self._when:
                return
            timer.cancel()
        self._timer = self._when = None
        if when is not None:
            delay = max(0.0, when - self._clock.seconds())
            self._timer = self._clock.callLater(delay, self._rang)
            self._when = when

    def _rang(self) -> None:
        self._timer = self._when = None
        self._ring()

    def cancel(self) -> None:
        self.set(None)
