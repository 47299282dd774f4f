"""Origin → state, in this process's memory up to a bound in bytes, then in a second tier.

Memory holds an origin in one of two forms. The origins in use are live states, their rules
parsed and the crawler's group compiled: kilobytes each, filling up to half of the bound. The
least recently used of them are packed into records (``record.py``: a few hundred bytes for
most files), which fill the rest; a packed origin met again is unpacked, which costs neither a
parse nor a compile. Past the bound, the least recently packed records leave memory. With a
second tier (the SQLite :class:`~scrapy_robotsmeta.storage.statefile.StateFile` of the default
storage), every record is written there as it is packed, and read back from there when its
origin is met again, so that no robots.txt is fetched twice in its lifetime however many
origins a crawl meets; without one, a record that leaves memory is forgotten.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.record import pack, unpack
from scrapy_robotsmeta.robotstxt.state import OriginState

#: What a live state costs in memory besides its rules and the record it was unpacked from if
#: any (the state and its origin, the cache's own entries, the requests of its last fetch), in
#: bytes: measured with tracemalloc, rounded up.
STATE_BYTES = 800
#: What a packed origin costs in memory besides its record's bytes (its origin, the cache's
#: entry, and what the allocator keeps as records and live states come and go): tracemalloc
#: sees about 200 bytes, but with 500 the process grew 68 MB for a 64 MB bound at 1,000,000
#: origins (benchmarks/tiers.py), and with 800 and the records of fixed Huffman codes, 62.5.
RECORD_BYTES = 900
#: The share of the bound that live states may fill; packed ones have the rest.
LIVE_SHARE = 0.5


def state_bytes(state: OriginState) -> int:
    """An estimate of the memory *state* holds, in bytes (benchmarks/tiers.py checks it)."""
    rules = state.rules
    return STATE_BYTES if rules is None else STATE_BYTES + rules.size_hint


def record_bytes(record: bytes) -> int:
    """An estimate of the memory a packed origin holds, in bytes."""
    return RECORD_BYTES + len(record)


def _compiled(state: OriginState) -> int:
    return 0 if state.rules is None else state.rules.compiled


class SecondTier(Protocol):
    #: Reads and writes that failed (each such origin is fetched again if met again).
    errors: int

    def put(self, records: list[tuple[Origin, bytes]]) -> None: ...
    def get(self, origin: Origin) -> bytes | None: ...


class OriginCache:
    """Origin → state, holding at most *max_bytes* (estimated) in memory, of which live states
    fill at most *live_share*, except the live states that *keep* holds on to.

    States that requests wait on stay live (packing them would lose the requests' state), and
    so does a state being fetched, so memory may exceed the bound by what those hold.
    """

    def __init__(
        self,
        max_bytes: int,
        keep: Callable[[Origin], bool] = lambda origin: False,
        second: SecondTier | None = None,
        live_share: float = LIVE_SHARE,
    ) -> None:
        self._max = max_bytes
        self._live_max = int(max_bytes * live_share)
        self._keep = keep
        self.second = second
        self._states: OrderedDict[Origin, OriginState] = OrderedDict()
        self._sizes: dict[Origin, int] = {}
        # Live states unpacked from a record, with their change count and compiled groups
        # then: one that has changed in neither packs into that same record, which the second
        # tier has already (a group compiled since is worth a new record: unpacking it again
        # would compile it again).
        self._sources: dict[Origin, tuple[int, int, bytes]] = {}
        self._records: OrderedDict[Origin, bytes] = OrderedDict()
        #: Estimated bytes of the live states, and of everything in memory.
        self.live_bytes = 0
        self.bytes = 0
        #: Counters for the crawl's stats: look-ups answered by a live state, by unpacking a
        #: record in memory, by one from the second tier; states packed; records that left
        #: memory for the second tier, and that were forgotten (no second tier).
        self.memory_hits = 0
        self.packed_hits = 0
        self.second_hits = 0
        self.packed = 0
        self.spilled = 0
        self.forgotten = 0

    def __len__(self) -> int:
        """The origins in memory, live or packed."""
        return len(self._states) + len(self._records)

    def __contains__(self, origin: Origin) -> bool:
        """Whether *origin* is in memory, live or packed."""
        return origin in self._states or origin in self._records

    @property
    def live(self) -> int:
        """How many origins are live."""
        return len(self._states)

    def peek(self, origin: Origin) -> OriginState | None:
        """The state of *origin* if known (in memory, else in the second tier), without
        marking it as used nor bringing it into memory. A packed one comes back as a copy:
        changing it changes nothing in the cache."""
        state = self._states.get(origin)
        if state is not None:
            return state
        record = self._records.get(origin)
        if record is None and self.second is not None:
            record = self.second.get(origin)
        return None if record is None else unpack(origin, record)

    def get_or_create(self, origin: Origin) -> OriginState:
        """The live state of *origin* (in memory, else unpacked from its record, else a new
        one), marked as the most recently used."""
        states = self._states
        state = states.get(origin)
        if state is not None:
            states.move_to_end(origin)
            self.memory_hits += 1
        else:
            state = self._unpack(origin) or OriginState(origin)
            states[origin] = state
            self._sizes[origin] = 0
        # Measured at each use: a fetch changes a state's size after it was cached.
        change = state_bytes(state) - self._sizes[origin]
        if change:
            self._sizes[origin] += change
            self.live_bytes += change
            self.bytes += change
            if self.live_bytes > self._live_max or self.bytes > self._max:
                self._evict(keep=origin)
        return state

    def flush(self) -> None:
        """Write every live state the second tier does not have (a crawl closing with
        JOBDIR; packed ones were written as they were packed)."""
        if self.second is not None:
            changed = [
                state
                for state in self._states.values()
                if state.fetched_before and self._record_of(state) is None
            ]
            self.second.put([(state.origin, pack(state)) for state in changed])

    def _unpack(self, origin: Origin) -> OriginState | None:
        record = self._records.pop(origin, None)
        in_memory = record is not None
        if record is not None:
            self.bytes -= record_bytes(record)
        elif self.second is not None:
            record = self.second.get(origin)
        if record is None:
            return None
        state = unpack(origin, record)
        if state is None:
            return None
        if in_memory:
            self.packed_hits += 1
        else:
            self.second_hits += 1
        self._sources[origin] = (state.changes, _compiled(state), record)
        # The record stays in memory beside its live state until the state is packed again.
        self.live_bytes += len(record)
        self.bytes += len(record)
        return state

    def _record_of(self, state: OriginState) -> bytes | None:
        """The record *state* was unpacked from, if it has not changed since; else None."""
        source = self._sources.get(state.origin)
        if source is not None and source[:2] == (state.changes, _compiled(state)):
            return source[2]
        return None

    def _evict(self, keep: Origin) -> None:
        # Pack the least recently used live states while they fill more than their share,
        # and a tenth of it more: packed in batches, their records are written in batches.
        excess = self.live_bytes - self._live_max + self._live_max // 10
        victims: list[OriginState] = []
        for origin, state in self._states.items():
            if excess <= 0:
                break
            if origin != keep and not state.fetching and not self._keep(origin):
                victims.append(state)
                source = self._sources.get(origin)
                excess -= self._sizes[origin] + (len(source[2]) if source is not None else 0)
        writes = [write for write in map(self._pack, victims) if write is not None]
        if writes and self.second is not None:
            self.second.put(writes)
        # ...then let the least recently packed leave memory while the whole is over the bound.
        records = self._records
        # Live states the sweep could not pack (in use, waited on, being fetched) may hold more
        # than their share: making room for them would empty memory of records for nothing
        # when one of them is larger than the whole bound.
        overflow = max(0, self.live_bytes - self._live_max)
        while self.bytes - overflow > self._max and records:
            _, record = records.popitem(last=False)
            self.bytes -= record_bytes(record)
            if self.second is not None:
                self.spilled += 1
            else:
                self.forgotten += 1

    def _pack(self, state: OriginState) -> tuple[Origin, bytes] | None:
        """Replace live *state* by its record; return it if the second tier lacks it."""
        origin = state.origin
        del self._states[origin]
        size = self._sizes.pop(origin)
        self.live_bytes -= size
        self.bytes -= size
        record = self._record_of(state)
        source = self._sources.pop(origin, None)
        if source is not None:
            self.live_bytes -= len(source[2])
            self.bytes -= len(source[2])
        if not state.fetched_before:
            return None  # nothing that a fetch would have to find again
        write = None
        if record is None:
            record = pack(state)
            write = (origin, record)
        self._records[origin] = record
        self.bytes += record_bytes(record)
        self.packed += 1
        return write
