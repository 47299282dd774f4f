"""The origin cache (``robotstxt/cache.py``): memory bounded in bytes; the least recently used
idle origins packed into records first, never one that requests wait on or that is being
fetched; past the bound the oldest records leave memory, for the second tier when there is one
(written as they are packed, read back instead of being fetched again)."""

from __future__ import annotations

import logging
import tracemalloc

import pytest

from scrapy_robotsmeta.robotstxt import RobotsTxt
from scrapy_robotsmeta.robotstxt.cache import (
    LIVE_SHARE,
    STATE_BYTES,
    OriginCache,
    record_bytes,
    state_bytes,
)
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import from_response
from scrapy_robotsmeta.robotstxt.record import pack
from scrapy_robotsmeta.robotstxt.state import Decision, OriginState, Timing

RULES = b"User-agent: *\nDisallow: /private\n"


def origin(name: str) -> Origin:
    return Origin("http", name, 80)


def fetch(cache: OriginCache, name: str, body: bytes = RULES, now: float = 0.0) -> OriginState:
    """The state of *name* after a fetch answered 200 with *body*, used once since."""
    state = cache.get_or_create(origin(name))
    state.start_fetch(now, Timing())
    state.apply(from_response(200, body), now, Timing())
    return cache.get_or_create(origin(name))


def size_of_fetched() -> int:
    return state_bytes(fetch(OriginCache(10**9), "x"))


class Shelf:
    """A second tier in a dict: what the cache writes, it reads back; writes are counted."""

    def __init__(self, durable: bool = False) -> None:
        self.records: dict[Origin, bytes] = {}
        self.writes: list[Origin] = []
        self.batches: list[int] = []
        self.errors = 0
        self.durable = durable
        self.closed = False

    def put(self, records: list[tuple[Origin, bytes]]) -> None:
        self.records.update(records)
        self.writes += [origin for origin, _ in records]
        self.batches.append(len(records))

    def get(self, origin: Origin) -> bytes | None:
        return self.records.get(origin)

    def close(self) -> None:
        self.closed = True


def test_the_least_recently_used_idle_origin_is_packed_first() -> None:
    cache = OriginCache(max_bytes=int(2 * size_of_fetched() / LIVE_SHARE))
    a = fetch(cache, "a")
    b = fetch(cache, "b")
    cache.get_or_create(origin("a"))  # a is now more recent than b
    fetch(cache, "c")
    assert (cache.live, len(cache), cache.packed) == (2, 3, 1)
    assert cache.peek(origin("a")) is a
    packed = cache.peek(origin("b"))
    assert packed is not b  # a copy, unpacked from its record
    assert packed is not None
    assert packed.snapshot() == b.snapshot()


def test_a_packed_origin_is_unpacked_from_memory_when_met_again() -> None:
    cache = OriginCache(max_bytes=int(2 * size_of_fetched() / LIVE_SHARE))
    for name in "abc":
        fetch(cache, name)
    state = cache.get_or_create(origin("a"))
    assert cache.packed_hits == 1
    assert state.rules is not None
    assert not state.rules.allowed("http://a/private", "bot")


def test_a_state_never_fetched_is_dropped_not_packed() -> None:
    cache = OriginCache(max_bytes=int(STATE_BYTES / LIVE_SHARE))
    cache.get_or_create(origin("a"))
    cache.get_or_create(origin("b"))
    assert origin("a") not in cache
    assert (cache.packed, cache.forgotten) == (0, 0)


def test_cache_never_packs_an_origin_that_requests_wait_on() -> None:
    a, b = origin("a"), origin("b")
    cache = OriginCache(max_bytes=STATE_BYTES, keep={a}.__contains__)
    state = cache.get_or_create(a)
    cache.get_or_create(b)
    assert cache.peek(a) is state
    assert cache.live == 2


def test_cache_never_packs_an_origin_being_fetched() -> None:
    cache = OriginCache(max_bytes=STATE_BYTES)
    state = cache.get_or_create(origin("a"))
    state.start_fetch(0.0, Timing())
    cache.get_or_create(origin("b"))
    assert cache.peek(origin("a")) is state


def test_cache_stays_within_its_bound_in_bytes_over_many_origins() -> None:
    bound = 100 * STATE_BYTES
    cache = OriginCache(max_bytes=bound)
    for i in range(5000):
        fetch(cache, f"host{i}", RULES * (i % 7))
        assert cache.bytes <= bound
        assert cache.live_bytes <= bound * LIVE_SHARE
    # Packed origins cost a fraction of live ones: most of those in memory are packed.
    assert cache.live < len(cache) / 2
    assert cache.forgotten == 5000 - len(cache)


def test_live_states_are_packed_a_fifth_of_their_share_at_a_time() -> None:
    """Records filling memory up to its bound pack no live state; live states over their share
    are packed until a fifth of it is free, so that the second tier gets them in batches (one
    transaction each) rather than one or two at every new origin."""
    share = 100  # live states of one fetch that fill the live share
    shelf = Shelf()
    cache = OriginCache(max_bytes=int(share * size_of_fetched() / LIVE_SHARE), second=shelf)
    for i in range(20 * share):
        fetch(cache, f"host{i}")
    assert cache.spilled > 0  # records went over the bound, many times
    assert len(shelf.batches) <= 20 * share / (share // 5)
    assert min(shelf.batches) >= share // 5 - 1


def test_an_origin_larger_than_the_bound_leaves_the_records_in_memory() -> None:
    """While it is in use, a state larger than the whole bound holds memory that no record
    leaving would give back; the records stay, and it is packed when another origin is used."""
    bound = 20 * record_bytes(pack(fetch(OriginCache(10**9), "x")))
    cache = OriginCache(max_bytes=bound, second=Shelf())
    for i in range(10):
        fetch(cache, f"small{i}")
    small = len(cache)
    assert small > cache.live
    huge = fetch(cache, "huge", b"User-agent: *\n" + b"Disallow: /private\n" * 5000)
    assert state_bytes(huge) > bound
    assert cache.spilled == 0
    assert len(cache) == small + 1
    cache.get_or_create(origin("small0"))
    assert cache.live_bytes <= bound * LIVE_SHARE


def test_a_state_is_measured_again_when_a_fetch_gave_it_rules() -> None:
    cache = OriginCache(max_bytes=10**9)
    state = cache.get_or_create(origin("a"))
    assert cache.bytes == STATE_BYTES
    fetch(cache, "a", RULES * 100)
    assert cache.bytes == state_bytes(state) > STATE_BYTES + len(RULES) * 100


def test_without_a_second_tier_a_record_that_leaves_memory_is_forgotten() -> None:
    cache = OriginCache(max_bytes=STATE_BYTES + 1)
    fetch(cache, "a", b"")
    fetch(cache, "b", b"")
    assert cache.peek(origin("a")) is None
    assert cache.get_or_create(origin("a")).rules is None  # to be fetched again
    assert cache.forgotten >= 1


def test_a_record_that_left_memory_is_read_back_from_the_second_tier() -> None:
    shelf = Shelf()
    cache = OriginCache(max_bytes=STATE_BYTES + 1, second=shelf)
    first = fetch(cache, "a")
    fetch(cache, "b")
    assert origin("a") in shelf.records
    assert origin("a") not in cache
    peeked = cache.peek(origin("a"))  # peek reads the second tier too
    assert peeked is not None
    assert peeked.snapshot() == first.snapshot()
    assert origin("a") not in cache
    again = cache.get_or_create(origin("a"))
    assert again.rules is not None
    assert not again.rules.allowed("http://a/private", "bot")
    assert (cache.packed, cache.spilled, cache.second_hits) == (2, 3, 1)


def test_a_damaged_record_is_logged_counted_and_its_origin_fetched_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A record the disk damaged costs its origin a fetch: none of it is read."""
    shelf = Shelf()
    cache = OriginCache(max_bytes=STATE_BYTES + 1, second=shelf)
    fetch(cache, "a")
    fetch(cache, "b")  # a leaves memory, for the second tier
    record = bytearray(shelf.records[origin("a")])
    record[-1] ^= 0xFF
    shelf.records[origin("a")] = bytes(record)
    with caplog.at_level(logging.WARNING):
        assert cache.peek(origin("a")) is None
        state = cache.get_or_create(origin("a"))
    assert state.rules is None
    assert state.decide(0.0) is Decision.WAIT  # to be fetched again
    assert cache.damaged == 2
    assert caplog.text.count("fails its checksum") == 2


def test_an_origin_read_back_stays_packed_unless_it_changes() -> None:
    """Deciding a request changes nothing: the origin read back for it is not made live. One
    that a refresh starts on becomes live, so that the fetch's outcome lands on the state the
    next look-up finds."""
    cache = OriginCache(max_bytes=STATE_BYTES + 1, second=Shelf())
    fetch(cache, "a")
    cache.get_or_create(origin("b"))
    state = cache.get_or_create(origin("a"))
    assert cache.second_hits == 1
    assert cache.get_or_create(origin("a")) is state  # the same object while in use
    cache.get_or_create(origin("b"))
    assert origin("a") not in cache._states
    state = cache.get_or_create(origin("a"))
    state.start_fetch(10.0, Timing())
    cache.get_or_create(origin("b"))
    assert cache.peek(origin("a")) is state
    assert cache.get_or_create(origin("a")) is state


def test_a_record_is_written_once_while_its_state_does_not_change() -> None:
    shelf = Shelf()
    cache = OriginCache(max_bytes=STATE_BYTES + 1, second=shelf)
    fetch(cache, "a")
    for _ in range(3):  # a and b take turns in memory, each read back unchanged
        cache.get_or_create(origin("b"))
        cache.get_or_create(origin("a"))
    assert shelf.writes.count(origin("a")) == 1
    fetch(cache, "a", b"User-agent: *\nDisallow: /\n", now=10.0)  # a refresh changes it
    cache.get_or_create(origin("b"))
    assert shelf.writes.count(origin("a")) == 2
    again = cache.get_or_create(origin("a"))
    assert again.rules is not None
    assert not again.rules.allowed("http://a/public", "bot")


def test_a_state_never_fetched_is_not_written_to_the_second_tier() -> None:
    shelf = Shelf()
    cache = OriginCache(max_bytes=STATE_BYTES, second=shelf)
    cache.get_or_create(origin("a"))
    cache.get_or_create(origin("b"))
    assert shelf.records == {}


@pytest.mark.parametrize("durable", [True, False])
def test_close_writes_every_fetched_live_state_to_a_durable_second_tier(durable: bool) -> None:
    """A JOBDIR's file gets what is live at close, for the next run of the job; a temporary
    one is closed as it is (nobody reads it again)."""
    shelf = Shelf(durable)
    cache = OriginCache(max_bytes=10**9, second=shelf)
    fetch(cache, "a")
    cache.get_or_create(origin("b"))  # never fetched: nothing to write
    cache.close()
    assert shelf.writes == ([origin("a")] if durable else [])
    assert shelf.closed


def test_a_packed_origin_counts_its_record_not_its_live_state() -> None:
    cache = OriginCache(max_bytes=int(size_of_fetched() / LIVE_SHARE))
    a = fetch(cache, "a")
    fetch(cache, "b")
    assert cache.bytes == state_bytes(cache.get_or_create(origin("b"))) + record_bytes(pack(a))


def test_a_group_selected_since_unpacking_is_packed_again_with_it() -> None:
    """A record made before the crawler's group was selected (an origin packed between its
    fetch and its first check) would have it selected again at each unpacking, its rules
    read from the part of the record kept apart."""
    shelf = Shelf()
    cache = OriginCache(max_bytes=STATE_BYTES + 1, second=shelf)
    fetch(cache, "a")
    cache.get_or_create(origin("b"))  # a is packed before any check
    state = cache.get_or_create(origin("a"))
    assert state.rules is not None
    assert state.rules.selected == 0
    assert not state.rules.allowed("http://a/private", "bot")  # selects the group
    cache.get_or_create(origin("b"))
    assert shelf.writes.count(origin("a")) == 2
    again = cache.get_or_create(origin("a"))
    assert again.rules is not None
    assert again.rules.selected == 1


def merged_groups_file() -> bytes:
    """RFC 9309 §2.2.1 at its most costly: thousands of groups, each naming an agent of its
    own and the crawler's, so that every rule is in two groups once they are merged."""
    return b"".join(
        b"User-agent: %s\nUser-agent: bot\nDisallow: /%d\n"
        % (bytes(97 + int(digit) for digit in str(i)), i)
        for i in range(10_000)
    )


def test_the_estimate_of_a_file_of_merged_groups_is_what_it_holds() -> None:
    """The cache's bound counts the estimate: it must not be a fraction of the real size."""
    body = merged_groups_file()
    RobotsTxt.parse(body).allowed("https://example.com/", "bot")  # caches filled beforehand
    tracemalloc.start()
    try:
        rules = RobotsTxt.parse(body)
        rules.allowed("https://example.com/", "bot")
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert 0.75 * held <= rules.size_hint <= 1.5 * held
