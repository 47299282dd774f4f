"""Time and background work for the robots.txt part: the reactor, or a clock a test drives."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from scrapy.utils.defer import deferred_from_coro

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.internet.base import DelayedCall
    from twisted.internet.defer import Deferred

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
    weak references to tasks, and one collected mid-way would never finish."""

    def __init__(self) -> None:
        self._running: set[Deferred[Any]] = set()

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        task = deferred_from_coro(coroutine)
        self._running.add(task)
        task.addBoth(lambda _: self._running.discard(task))
