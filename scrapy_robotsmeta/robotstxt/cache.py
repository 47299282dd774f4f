"""Origin → state, in this process, for a bounded number of origins (least recently used go)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator

from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.state import OriginState


class OriginCache:
    """Origin → state, holding at most *max_origins* states that *keep* does not hold on to.

    States that requests wait on are kept (dropping them would forget those requests), so the
    cache may exceed its bound by the number of such origins.
    """

    def __init__(
        self, max_origins: int, keep: Callable[[Origin], bool] = lambda origin: False
    ) -> None:
        self._max = max_origins
        self._keep = keep
        self._states: OrderedDict[Origin, OriginState] = OrderedDict()
        self.evicted = 0

    def __len__(self) -> int:
        return len(self._states)

    def __iter__(self) -> Iterator[OriginState]:
        return iter(list(self._states.values()))

    def peek(self, origin: Origin) -> OriginState | None:
        """The state of *origin* if known, without marking it as used."""
        return self._states.get(origin)

    def get_or_create(self, origin: Origin) -> OriginState:
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
            if origin != keep and not state.fetching and not self._keep(origin):
                victims.append(origin)
        for origin in victims:
            del self._states[origin]
        self.evicted += len(victims)
