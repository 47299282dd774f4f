"""Origin → state, in this process's memory up to a bound in bytes, then in a second tier.

The least recently used origins leave memory first. With a second tier (the SQLite
:class:`~scrapy_robotsmeta.storage.statefile.StateFile` of the default storage) they are written
to it as they leave, and read back from it when met again, so that no robots.txt is fetched
twice in its lifetime however many origins a crawl meets; without one they are forgotten.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Protocol

from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.state import OriginState

#: What a state costs in memory besides its rules (the state and its origin, the cache's own
#: entries, the last fetch's record), in bytes: measured with tracemalloc, rounded up.
STATE_BYTES = 800


def state_bytes(state: OriginState) -> int:
    """An estimate of the memory *state* holds, in bytes (benchmarks/tiers.py checks it)."""
    rules = state.rules
    return STATE_BYTES if rules is None else STATE_BYTES + rules.size_hint


class SecondTier(Protocol):
    #: Reads and writes that failed (each such origin is fetched again if met again).
    errors: int

    def put(self, states: list[OriginState]) -> None: ...
    def get(self, origin: Origin) -> OriginState | None: ...


class OriginCache:
    """Origin → state, holding states of at most *max_bytes* (estimated) in memory, except
    those that *keep* holds on to.

    States that requests wait on are kept (dropping them would forget those requests), and so
    is a state being fetched, so memory may exceed the bound by what those hold.
    """

    def __init__(
        self,
        max_bytes: int,
        keep: Callable[[Origin], bool] = lambda origin: False,
        second: SecondTier | None = None,
    ) -> None:
        self._max = max_bytes
        self._keep = keep
        self.second = second
        self._states: OrderedDict[Origin, OriginState] = OrderedDict()
        self._sizes: dict[Origin, int] = {}
        # The expiry of each state in memory as the second tier has it: a state that still
        # has it did not change (every transition moves it) and need not be written again.
        self._stored: dict[Origin, float] = {}
        self.bytes = 0
        #: Counters for the crawl's stats: look-ups answered from memory, from the second
        #: tier; states written to it, and states forgotten (no second tier).
        self.memory_hits = 0
        self.second_hits = 0
        self.spilled = 0
        self.forgotten = 0

    def __len__(self) -> int:
        return len(self._states)

    def __contains__(self, origin: Origin) -> bool:
        """Whether *origin*'s state is in memory."""
        return origin in self._states

    def __iter__(self) -> Iterator[OriginState]:
        return iter(list(self._states.values()))

    def peek(self, origin: Origin) -> OriginState | None:
        """The state of *origin* if known (in memory, else in the second tier), without
        marking it as used nor bringing it into memory."""
        state = self._states.get(origin)
        if state is None and self.second is not None:
            state = self.second.get(origin)
        return state

    def get_or_create(self, origin: Origin) -> OriginState:
        """The state of *origin* (from memory, else from the second tier, else a new one),
        marked as the most recently used."""
        states = self._states
        state = states.get(origin)
        if state is not None:
            states.move_to_end(origin)
            self.memory_hits += 1
        else:
            state = self.second.get(origin) if self.second is not None else None
            if state is None:
                state = OriginState(origin)
            else:
                self.second_hits += 1
                self._stored[origin] = state.expires_at
            states[origin] = state
            self._sizes[origin] = 0
        # Measured at each use: a fetch changes a state's size after it was cached.
        size = state_bytes(state)
        self.bytes += size - self._sizes[origin]
        self._sizes[origin] = size
        if self.bytes > self._max:
            self._evict(keep=origin)
        return state

    def flush(self) -> None:
        """Write every state in memory to the second tier (a crawl closing with JOBDIR)."""
        if self.second is not None:
            self.second.put([s for s in self._states.values() if self._changed(s)])

    def _evict(self, keep: Origin) -> None:
        victims: list[OriginState] = []
        excess = self.bytes - self._max
        for origin, state in self._states.items():  # least recently used first
            if excess <= 0:
                break
            if origin != keep and not state.fetching and not self._keep(origin):
                victims.append(state)
                excess -= self._sizes[origin]
        if self.second is not None:
            self.second.put([state for state in victims if self._changed(state)])
        # A state never fetched holds nothing that a fetch would have to find again.
        fetched = sum(state.fetched_before for state in victims)
        if self.second is not None:
            self.spilled += fetched
        else:
            self.forgotten += fetched
        for state in victims:
            del self._states[state.origin]
            self.bytes -= self._sizes.pop(state.origin)
            self._stored.pop(state.origin, None)

    def _changed(self, state: OriginState) -> bool:
        """Whether *state* holds something the second tier does not have (a state never
        fetched holds nothing worth keeping)."""
        return state.fetched_before and self._stored.get(state.origin) != state.expires_at
