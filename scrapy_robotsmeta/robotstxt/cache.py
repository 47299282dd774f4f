"""Origin → state, in this process's memory up to a bound in bytes, then in a second tier.

Memory holds an origin in one of two forms. Origins fetched or changed lately are live
states, their rules parsed and the crawler's group selected: kilobytes each, filling up to half
of the bound. The least recently used of them are packed into records (``record.py``: a few
hundred bytes for most files), which fill the rest; a packed origin met again is unpacked for
that look-up, which costs neither a parse nor a compile, and stays packed unless it changes.
Past the bound, the least recently packed records leave memory. With a second tier (the
SQLite :class:`~scrapy_robotsmeta.robotstxt.statefile.StateFile` in ``JOBDIR`` or a
temporary file), every record is written there as it is packed, and read back from there when
its origin is met again, so that no robots.txt is fetched twice in its lifetime however many
origins a crawl meets; without one, a record that leaves memory is forgotten.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.record import DamagedRecord, pack, unpack
from scrapy_robotsmeta.robotstxt.state import OriginState

logger = logging.getLogger(__name__)

#: What a live state costs in memory besides its rules and the record it was unpacked from if
#: any (the state and its origin, the cache's own entries, the requests of its last fetch), in
#: bytes: measured with tracemalloc, rounded up.
STATE_BYTES = 800
#: What a packed origin costs in memory besides its record's bytes (its origin, the cache's
#: entry, and what the allocator keeps as records and live states come and go): more than
#: tracemalloc sees, so that the process grows less than the bound at a million origins
#: (benchmarks/tiers.py; its figures in benchmarks/README.md).
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


def _selected(state: OriginState) -> int:
    return 0 if state.rules is None else state.rules.selected


class SecondTier(Protocol):
    #: Reads and writes that failed (each such origin is fetched again if met again).
    errors: int
    #: Whether it outlives the crawl: the live states are written to it at close.
    durable: bool

    def put(self, records: list[tuple[Origin, bytes]]) -> None: ...
    def get(self, origin: Origin) -> bytes | None: ...
    def close(self) -> None: ...


class OriginCache:
    """Origin → state, holding at most *max_bytes* (estimated) in memory, of which live states
    fill at most *live_share*, except the live states that *keep* holds on to.

    States that requests wait on stay live (packing them would lose the requests' state), and
    so does a state being fetched, so memory may exceed the bound by what those hold.

    A packed origin met again is read back for the moment of its use: until the next look-up
    of another origin, it is the origin *in use*, and its record stays where it was. Most such
    look-ups only decide a request, which changes nothing; an origin that did change by then
    (a fetch started, requests wait on it) becomes live, and one whose check selected a group
    gets a new record, so that the next reading has that group at hand.
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
        self._records: OrderedDict[Origin, bytes] = OrderedDict()
        # The origin in use, read back from its record: its state, with its change count and
        # selected groups when read.
        self._in_use: tuple[OriginState, int, int] | None = None
        #: Estimated bytes of the live states, and of everything in memory.
        self.live_bytes = 0
        self.bytes = 0
        #: Counters for the crawl's stats: look-ups answered by a live state (or the origin
        #: in use), by unpacking a record in memory, by one from the second tier; states
        #: packed; records that left memory for the second tier, and that were forgotten (no
        #: second tier).
        self.memory_hits = 0
        self.packed_hits = 0
        self.second_hits = 0
        self.packed = 0
        self.spilled = 0
        self.forgotten = 0
        self.damaged = 0

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
        in_use = self._in_use
        if in_use is not None and in_use[0].origin == origin:
            return in_use[0]
        record = self._records.get(origin)
        if record is None and self.second is not None:
            record = self.second.get(origin)
        return None if record is None else self._unpack(origin, record)

    def get_or_create(self, origin: Origin) -> OriginState:
        """The state of *origin*: live, else read back from its record, else a new one (live),
        marked as the most recently used. The same object until the next look-up of another
        origin, and for as long as it is live."""
        in_use = self._in_use
        if in_use is not None:
            if in_use[0].origin == origin:
                self.memory_hits += 1
                return in_use[0]
            self._put_back()
        states = self._states
        state = states.get(origin)
        if state is not None:
            states.move_to_end(origin)
            self.memory_hits += 1
        else:
            state = self._read_back(origin)
            if state is not None:
                if self.live_bytes > self._live_max:
                    self._evict(keep=origin)  # a state larger than its share used last
                return state
            state = states[origin] = OriginState(origin)
            self._sizes[origin] = 0
        self._measure(state)
        return state

    def close(self) -> None:
        """Close the second tier, if any; first, if it outlives the crawl, write to it every
        fetched live state and the origin in use if it changed (packed ones were written as
        they were packed), for the next run of the job.

        Not an origin in an outage: the time a job stands still is not time its site was
        watched, so the next run starts that outage again (tries at once, and gives it the
        whole give-up time); cache lifetimes stay wall-clock time."""
        self._put_back()
        second = self.second
        if second is None:
            return
        if second.durable:
            kept = [s for s in self._states.values() if s.fetched_before and s.down_since is None]
            second.put([(state.origin, pack(state)) for state in kept])
        second.close()

    def _measure(self, state: OriginState) -> None:
        # Measured at each use: a fetch changes a state's size after it was cached.
        origin = state.origin
        change = state_bytes(state) - self._sizes[origin]
        if change:
            self._sizes[origin] += change
            self.live_bytes += change
            self.bytes += change
            if self.live_bytes > self._live_max or self.bytes > self._max:
                self._evict(keep=origin)

    def _read_back(self, origin: Origin) -> OriginState | None:
        """The state of packed *origin*, now the origin in use; None if it has no record, or
        one that cannot be read."""
        records = self._records
        record = records.get(origin)
        in_memory = record is not None
        if record is None and self.second is not None:
            record = self.second.get(origin)
        if record is None:
            return None
        state = self._unpack(origin, record)
        if state is None:
            self._drop(origin)
            return None
        if in_memory:
            records.move_to_end(origin)
            self.packed_hits += 1
        else:
            self.second_hits += 1
            self._hold_record(origin, record)
        self._in_use = (state, state.changes, _selected(state))
        return state

    def _unpack(self, origin: Origin, record: bytes) -> OriginState | None:
        """The state *record* holds, or None (its origin unknown, so fetched again) for a
        record of another version or a damaged one (logged and counted: a disk that lost
        bytes must cost a fetch, never a verdict the file did not give)."""
        try:
            return unpack(origin, record)
        except DamagedRecord as exc:
            self.damaged += 1
            logger.warning("Damaged stored robots.txt state: %s; fetching it again", exc)
            return None

    def _put_back(self) -> None:
        """Done with the origin in use, if any: make it live if it changed, else leave its
        record (packed again if a check selected a group since it was read)."""
        if self._in_use is None:
            return
        (state, changes, selected), self._in_use = self._in_use, None
        origin = state.origin
        if state.changes != changes or state.fetching or self._keep(origin):
            self._drop(origin)  # its record no longer tells its state
            self._states[origin] = state
            self._sizes[origin] = 0
            self._measure(state)
        elif _selected(state) != selected:
            record = pack(state)
            self._drop(origin)
            self._hold_record(origin, record)
            if self.second is not None:
                self.second.put([(origin, record)])

    def _hold_record(self, origin: Origin, record: bytes) -> None:
        self._records[origin] = record
        self.bytes += record_bytes(record)
        self._trim()

    def _drop(self, origin: Origin) -> None:
        record = self._records.pop(origin, None)
        if record is not None:
            self.bytes -= record_bytes(record)

    def _evict(self, keep: Origin) -> None:
        if self.live_bytes > self._live_max:
            self._pack_oldest(keep)
        self._trim()

    def _pack_oldest(self, keep: Origin) -> None:
        # Once live states fill more than their share, the least recently used are packed
        # until they fill a fifth of it less: packed in batches, their records are written in
        # batches, each one transaction of the disk tier (the tiers benchmark's filling).
        # Packing at the share's edge instead, whenever records push memory over its bound,
        # would pack one or two at a time.
        excess = self.live_bytes - self._live_max + self._live_max // 5
        # Origins, not their states: each state is let go as soon as its record is made.
        victims: list[Origin] = []
        for origin, state in self._states.items():
            if excess <= 0:
                break
            if origin != keep and not state.fetching and not self._keep(origin):
                victims.append(origin)
                excess -= self._sizes[origin]
        writes = [write for write in map(self._pack, victims) if write is not None]
        if writes and self.second is not None:
            self.second.put(writes)

    def _trim(self) -> None:
        """Let the least recently packed records leave memory while the whole is over the
        bound."""
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

    def _pack(self, origin: Origin) -> tuple[Origin, bytes] | None:
        """Replace the live state of *origin* by its record; return the record to write to
        the second tier, or None for a state never fetched (dropped: nothing to find again)."""
        state = self._states.pop(origin)
        size = self._sizes.pop(origin)
        self.live_bytes -= size
        self.bytes -= size
        if not state.fetched_before:
            return None
        record = pack(state)
        self._records[origin] = record
        self.bytes += record_bytes(record)
        self.packed += 1
        return (origin, record)
