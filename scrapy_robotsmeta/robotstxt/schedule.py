"""When each origin must next be acted on: its retry or give-up, and the end of the hold of its
fetch in flight; one heap for both, so that a caller keeps one timer for the nearest."""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy_robotsmeta.robotstxt.origin import Origin


class Schedule:
    """Two times per origin at most: *hold* (the end of its hold) and not (its next retry or
    give-up). Setting a time again replaces it; an entry of the heap counts only while its
    time is still the one set (replaced and cleared ones are skipped when met)."""

    def __init__(self) -> None:
        self._times: tuple[dict[Origin, float], dict[Origin, float]] = ({}, {})
        # (time, order, origin, hold): the order keeps origins (whose port may be None) out
        # of comparisons.
        self._heap: list[tuple[float, int, Origin, bool]] = []
        self._order = 0

    def set(self, origin: Origin, when: float, *, hold: bool = False) -> None:
        self._times[hold][origin] = when
        self._order += 1
        heapq.heappush(self._heap, (when, self._order, origin, hold))

    def clear(self, origin: Origin, *, hold: bool = False) -> None:
        self._times[hold].pop(origin, None)

    def has(self, origin: Origin, *, hold: bool = False) -> bool:
        return origin in self._times[hold]

    def next(self) -> float | None:
        """The nearest time set; None when none is."""
        heap = self._heap
        while heap:
            when, _, origin, hold = heap[0]
            if self._times[hold].get(origin) == when:
                return when
            heapq.heappop(heap)
        return None

    def pop_due(self, now: float) -> list[tuple[Origin, bool]]:
        """The (origin, hold) of every time up to *now*, nearest first, each cleared."""
        due = []
        heap = self._heap
        while heap and heap[0][0] <= now:
            when, _, origin, hold = heapq.heappop(heap)
            if self._times[hold].get(origin) == when:
                del self._times[hold][origin]
                due.append((origin, hold))
        return due

    def reset(self) -> None:
        for times in self._times:
            times.clear()
        self._heap.clear()
