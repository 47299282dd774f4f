"""The life of every origin's robots.txt in one process, owned in one place.

:class:`RobotsTxtCore` holds the origins (their states in an :class:`OriginCache`), which of
them requests wait on, when each must next be acted on (a retry, a give-up, the end of a hold),
and every transition between those. It knows nothing of Scrapy or Twisted: each method takes
the time as ``now`` and answers with values, so that tests drive it with plain floats, and its
caller (the downloader middleware) does the I/O it asks for — fetching robots.txt, waking,
parking and releasing requests — and keeps one timer for :meth:`RobotsTxtCore.next_due`.

A request of an origin gets a :class:`Check`:

- ``RULES``: robots.txt is known, and the state's rules decide it;
- ``DROP``: the origin was given up after an outage (its requests are dropped);
- ``WAIT``: robots.txt is not known yet (or expired); ``fetch`` says this check started the
  fetch the caller must run, ``held`` that a fetch is in flight that the request may wait for
  inside the downloader instead of being parked.

Once waited on, an origin asks for an :class:`Action` when its time comes (:meth:`due`), or
when its caller has news of it (:meth:`advance`): ``FETCH`` (a retry, or a refresh),
``RELEASE`` (its requests can be decided: put them back into the crawl), ``GIVE_UP`` (its
outage lasted too long: :meth:`RobotsTxtCore.give_up`, then release its requests, now to be
dropped) or ``END_HOLD`` (the requests held for its fetch waited long enough: park them).
"""

from __future__ import annotations

import enum
from collections import Counter
from typing import TYPE_CHECKING, NamedTuple

from scrapy_robotsmeta.robotstxt.cache import OriginCache, SecondTier
from scrapy_robotsmeta.robotstxt.explanation import Explanation
from scrapy_robotsmeta.robotstxt.origin import checked_origin
from scrapy_robotsmeta.robotstxt.schedule import Schedule
from scrapy_robotsmeta.robotstxt.state import (
    Change,
    Decision,
    OriginState,
    Published,
    Timing,
    same_snapshot,
)
from scrapy_robotsmeta.robotstxt.status import Status

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy_robotsmeta.robotstxt.origin import Origin
    from scrapy_robotsmeta.robotstxt.policy import Outcome

#: The changes after which an origin's waiting requests can be decided.
RELEASING = frozenset({Change.READY, Change.RECOVERED, Change.KEPT_CACHED_COPY})


class Check(NamedTuple):
    """What one request of an origin gets at one reading of the clock."""

    decision: Decision
    state: OriginState
    #: WAIT only: this check started a fetch, which the caller runs.
    fetch: bool = False
    #: WAIT only: a fetch is in flight and its hold is open.
    held: bool = False


class Action(enum.Enum):
    FETCH = "fetch"
    RELEASE = "release"
    GIVE_UP = "give_up"
    END_HOLD = "end_hold"


class RobotsTxtCore:
    """Every origin of a crawl, from its first request to its last.

    *hold_time*: how long requests may wait for a fetch in flight (0: never). *second*: the
    cache's tier on disk, if any.
    """

    def __init__(
        self,
        timing: Timing,
        memory: int,
        hold_time: float = 0.0,
        second: SecondTier | None = None,
    ) -> None:
        self.timing = timing
        self.hold_time = hold_time
        self.cache = OriginCache(memory, keep=self._kept, second=second)
        #: Origins whose requests wait: parked, held, or being fetched.
        self._pending: set[Origin] = set()
        #: Origins whose released requests are not decided yet, and how many of them.
        self._undecided: Counter[Origin] = Counter()
        self._schedule = Schedule()
        self.closed = False

    # -- requests ----------------------------------------------------------------------------

    def check(self, origin: Origin, now: float) -> Check:
        """Decide a request of *origin* at *now*, starting a fetch if one is due."""
        state = self.cache.get_or_create(origin)
        decision = state.decide(now)
        if decision is not Decision.WAIT:
            return Check(decision, state)
        self._pending.add(origin)
        fetch = not self.closed and state.fetch_due(now)
        if fetch:
            self._begin_fetch(state, now)
        return Check(decision, state, fetch, self._schedule.has(origin, hold=True))

    def keep_until_decided(self, origin: Origin) -> bool:
        """Keep *origin* live in memory until a released request of it is decided (see
        :meth:`decided`); False when that is not needed.

        Without a second tier, an origin that left memory before its released requests were
        decided would be fetched again and those requests parked again, over and over.
        """
        if self.cache.second is not None:
            return False
        self._undecided[origin] += 1
        return True

    def decided(self, origin: Origin) -> None:
        self._undecided[origin] -= 1
        if not self._undecided[origin]:
            del self._undecided[origin]

    def explain(self, url: str, token: str) -> Explanation:
        """Why *url* is allowed, refused or waiting for the crawler *token*, as known now."""
        origin = checked_origin(url)
        if origin is None:
            return Explanation.not_checked(url, "no robots.txt for this URL")
        state = self.cache.peek(origin)
        if state is None:
            return Explanation(url, origin, Status.UNKNOWN, "not fetched yet")
        return state.explain(url, token)

    def peek(self, origin: Origin) -> OriginState | None:
        """The state of *origin* if known, without marking it used."""
        return self.cache.peek(origin)

    # -- fetches -----------------------------------------------------------------------------

    def fetch_claimed(self, state: OriginState, now: float) -> tuple[float, bool]:
        """This process makes the fetch it began: the timeout of each of its tries, and
        whether it must reach the site rather than an HTTP cache (a retry, a refresh)."""
        fresh = state.fetched_before
        return state.start_fetch(now, self.timing), fresh

    def fetch_left(self, state: OriginState, now: float, until: float) -> bool:
        """Another process fetches (or fetched) the origin: start no fetch before *until*,
        end the hold, and say whether its requests can be decided now."""
        self._schedule.clear(state.origin, hold=True)
        if state.decide(now) is not Decision.WAIT:
            state.defer_fetch(None)
            return True
        state.defer_fetch(until)
        self._plan(state, now)
        return False

    def settle(self, state: OriginState, outcome: Outcome, now: float) -> Change:
        """Apply the outcome of the fetch that :meth:`fetch_claimed` started."""
        change = state.apply(outcome, now, self.timing)
        if change is Change.OUTAGE_STARTED:
            # Its tries fail or hang: the requests held for this one go to be parked.
            self._schedule.clear(state.origin, hold=True)
        if change not in RELEASING:
            self._plan(state, now)
        return change

    # -- time --------------------------------------------------------------------------------

    def next_due(self) -> float | None:
        """When :meth:`due` next has something to do; None: nothing is scheduled."""
        return self._schedule.next()

    def due(self, now: float) -> list[tuple[OriginState, Action]]:
        """What is due at *now*, in order."""
        actions = []
        for origin, hold in self._schedule.pop_due(now):
            state = self.cache.get_or_create(origin)
            if hold:
                actions.append((state, Action.END_HOLD))
            elif state.deadline_passed(now) and not state.given_up:
                actions.append((state, Action.GIVE_UP))
            elif (action := self.advance(state, now)) is not None:
                actions.append((state, action))
        return actions

    def give_up(self, state: OriginState, now: float) -> float:
        """End the outage of *state*, which :meth:`due` found past its deadline: its requests
        are dropped for one cache lifetime. Return how long it was down, as observed."""
        down_since = now if state.down_since is None else state.down_since
        state.give_up(now, self.timing)
        return now - down_since

    def adopt(self, origin: Origin, published: Published) -> bool:
        """Take the state of *origin* another process published; False when this process has
        it already."""
        state = self.cache.get_or_create(origin)
        if same_snapshot(published.snapshot, state.snapshot()):
            return False
        state.adopt(*published)
        return True

    def adopt_if_settling(self, state: OriginState, published: Published, now: float) -> bool:
        """Take the state another process published if it makes the fetch *state* began
        needless: it lets requests be decided now, or puts the next fetch off until later.

        The second case is an outage: every process wakes at the fleet's retry time, one
        takes the fetch, and a process that asks a moment after that fetch ended finds it free
        again; the published retry time, now in the future, tells it that the try it meant to
        make was made."""
        snapshot = published.snapshot
        retry_later = snapshot["retry_at"] is not None and snapshot["retry_at"] > now
        if snapshot["expires_at"] <= now and not retry_later:
            return False
        if not same_snapshot(snapshot, state.snapshot()):
            state.adopt(*published)
        return retry_later or state.decide(now) is not Decision.WAIT

    def advance(self, state: OriginState, now: float) -> Action | None:
        """Act on *state* as it stands: RELEASE its requests once they can be decided, FETCH
        when a fetch is due (begun here), else nothing until its next retry or give-up."""
        if state.decide(now) is not Decision.WAIT:
            return Action.RELEASE
        if not self.closed and state.fetch_due(now):
            self._begin_fetch(state, now)
            return Action.FETCH
        self._plan(state, now)
        return None

    def waiting(self, origin: Origin, now: float) -> tuple[OriginState, Action | None]:
        """Requests of *origin* wait (parked by an earlier run, or by another process): look
        it up as a pending origin, which the cache keeps live, and :meth:`advance` it."""
        self._pending.add(origin)
        state = self.cache.get_or_create(origin)
        return state, self.advance(state, now)

    def unattended(self, origins: Iterable[Origin]) -> list[Origin]:
        """Those of *origins* (with requests parked) that nothing is scheduled for: nothing
        may wake their requests (a release that missed them, requests another process left, a
        fault somewhere); a caller :meth:`waiting` them again."""
        return [origin for origin in origins if not self._schedule.has(origin)]

    # -- releases ----------------------------------------------------------------------------

    def released(self, origin: Origin) -> None:
        """*origin*'s requests are being put back into the crawl: it no longer waits."""
        self._pending.discard(origin)
        self._schedule.clear(origin)
        self._schedule.clear(origin, hold=True)

    def end_hold(self, origin: Origin) -> None:
        self._schedule.clear(origin, hold=True)

    def release_failed(self, origin: Origin) -> None:
        """Requests a failed release left behind still wait."""
        self._pending.add(origin)

    @property
    def pending(self) -> list[Origin]:
        """The origins requests wait on."""
        return list(self._pending)

    @property
    def any_pending(self) -> bool:
        return bool(self._pending)

    def is_pending(self, origin: Origin | None) -> bool:
        return origin in self._pending

    def close(self) -> None:
        """The crawl closes: nothing is scheduled any more, and no fetch starts."""
        self.closed = True
        self._pending.clear()
        self._schedule.reset()

    # -- internals ---------------------------------------------------------------------------

    def _kept(self, origin: Origin) -> bool:
        """Whether *origin*'s state must stay live in memory."""
        return origin in self._pending or origin in self._undecided

    def _begin_fetch(self, state: OriginState, now: float) -> None:
        # Marked at once, so that the requests decided before the fetch runs start no other.
        state.mark_fetching(now)
        self._pending.add(state.origin)
        if self.hold_time > 0 and state.down_since is None:
            # Not during an outage: its tries fail, or hang until their timeout.
            self._schedule.set(state.origin, now + self.hold_time, hold=True)

    def _plan(self, state: OriginState, now: float) -> None:
        """Be due when the origin next has something to do: a retry or its give-up."""
        origin = state.origin
        if self.closed:
            return
        if (state.deadline_passed(now) and not state.given_up) or state.fetch_due(now):
            self._schedule.set(origin, now)
            return
        later = [t for t in (state.retry_at, state.give_up_at) if t is not None and t > now]
        if later:
            self._schedule.set(origin, min(later))
        else:
            self._schedule.clear(origin)
