"""Per-origin robots.txt state, kept for a bounded number of origins (least recently used go)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from scrapy import Request
from twisted.internet.base import DelayedCall
from twisted.internet.defer import Deferred

from scrapy_robotsmeta.robotstxt import RobotsTxt
from scrapy_robotsmeta.robotstxt.origin import Origin


class Clock(Protocol):
    """The part of Twisted's IReactorTime used here: the reactor, or a task.Clock in tests."""

    def seconds(self) -> float: ...

    def callLater(
        self, delay: float, callable: Callable[..., Any], *args: Any, **kw: Any
    ) -> DelayedCall: ...


# Slots: a cache holds up to ROBOTSTXT_CACHE_SIZE of these, and a per-instance dict would be a
# good part of each one's size.
@dataclass(eq=False, slots=True)
class OriginState:
    """What is known of one origin's robots.txt, and who is waiting for it.

    An origin is *ready* while it has rules that have not expired, *given up* while a long
    outage says to drop its requests, and *pending* otherwise: its requests wait.
    """

    origin: Origin
    rules: RobotsTxt | None = None
    #: How the current rules (or the give-up) came about, for logs and `scrapy robots`.
    reason: str = ""
    #: Each hop of the last fetch: "URL STATUS", "URL failed" or "URL ignored".
    trail: list[str] = field(default_factory=list)
    expires_at: float = 0.0
    given_up: bool = False
    fetching: bool = False
    fetch_started: float = 0.0
    down_since: float | None = None
    failures: int = 0
    retry: DelayedCall | None = None
    #: When an outage without a cached copy is given up.
    deadline: DelayedCall | None = None
    #: Scheduled requests kept out of the scheduler until the origin is ready.
    parked: list[Request] = field(default_factory=list)
    #: Downloads waiting inside process_request (requests that never went through the scheduler).
    waiters: list[Deferred[None]] = field(default_factory=list)

    def ready(self, now: float) -> bool:
        return self.rules is not None and now < self.expires_at

    def dropping(self, now: float) -> bool:
        return self.given_up and now < self.expires_at

    def settled(self, now: float) -> bool:
        """Whether a request of this origin can be decided now, without waiting."""
        return now < self.expires_at and (self.rules is not None or self.given_up)

    def busy(self) -> bool:
        return bool(self.fetching or self.retry or self.parked or self.waiters)

    def stop_timers(self) -> None:
        for call in (self.retry, self.deadline):
            if call is not None and call.active():
                call.cancel()
        self.retry = self.deadline = None

    def wait(self) -> Deferred[None]:
        waiter: Deferred[None] = Deferred()
        self.waiters.append(waiter)
        return waiter

    def wake(self) -> list[Request]:
        """Wake whatever waits on this origin; return the parked requests to put back."""
        parked, self.parked = self.parked, []
        waiters, self.waiters = self.waiters, []
        for waiter in waiters:
            waiter.callback(None)
        return parked


class OriginCache:
    """Origin → state, holding at most *max_origins* idle states.

    A state with a fetch, a retry or waiting requests is never evicted: dropping it would lose
    those requests. The cache may exceed its bound by the number of such busy origins.
    """

    def __init__(self, max_origins: int) -> None:
        self._max = max_origins
        self._states: OrderedDict[Origin, OriginState] = OrderedDict()
        self.evicted = 0

    def __len__(self) -> int:
        return len(self._states)

    def __iter__(self) -> Iterator[OriginState]:
        return iter(list(self._states.values()))

    def peek(self, origin: Origin) -> OriginState | None:
        return self._states.get(origin)

    def get(self, origin: Origin) -> OriginState:
        """The state of *origin*, created when unknown, and marked as the most recently used."""
        states = self._states
        state = states.get(origin)
        if state is not None:
            states.move_to_end(origin)
            return state
        state = states[origin] = OriginState(origin)
        if len(states) > self._max:
            self._evict(keep=origin)
        return state

    def _evict(self, keep: Origin) -> None:
        excess = len(self._states) - self._max
        victims: list[Origin] = []
        for origin, state in self._states.items():  # least recently used first
            if len(victims) == excess:
                break
            if origin != keep and not state.busy():
                victims.append(origin)
        for origin in victims:
            del self._states[origin]
        self.evicted += len(victims)
