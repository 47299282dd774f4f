"""The origin cache (``robotstxt/cache.py``): memory bounded in bytes, least recently used idle
origins leaving first, never one that requests wait on or that is being fetched; with a second
tier, what leaves memory is written there and read back instead of being fetched again."""

from __future__ import annotations

from scrapy_robotsmeta.robotstxt.cache import STATE_BYTES, OriginCache, state_bytes
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import from_response
from scrapy_robotsmeta.robotstxt.state import OriginState, Timing

RULES = b"User-agent: *\nDisallow: /private\n"


def origin(name: str) -> Origin:
    return Origin("http", name, 80)


def fetch(cache: OriginCache, name: str, body: bytes = RULES) -> OriginState:
    """The state of *name* after a fetch answered 200 with *body*, used once since."""
    state = cache.get_or_create(origin(name))
    state.start_fetch(0.0, Timing())
    state.apply(from_response(200, body), 0.0, Timing())
    return cache.get_or_create(origin(name))


class Shelf:
    """A second tier in a dict: what the cache writes, it reads back."""

    def __init__(self) -> None:
        self.states: dict[Origin, OriginState] = {}
        self.errors = 0

    def put(self, states: list[OriginState]) -> None:
        self.states.update((state.origin, state) for state in states)

    def get(self, origin: Origin) -> OriginState | None:
        return self.states.get(origin)


def test_cache_evicts_the_least_recently_used_idle_origin() -> None:
    cache = OriginCache(max_bytes=2 * STATE_BYTES)
    a, b, c = (origin(host) for host in "abc")
    cache.get_or_create(a)
    cache.get_or_create(b)
    cache.get_or_create(a)  # a is now more recent than b
    cache.get_or_create(c)
    assert cache.peek(b) is None
    assert cache.peek(a) is not None
    assert cache.peek(c) is not None


def test_cache_never_evicts_an_origin_that_requests_wait_on() -> None:
    a, b = origin("a"), origin("b")
    cache = OriginCache(max_bytes=STATE_BYTES, keep={a}.__contains__)
    state = cache.get_or_create(a)
    cache.get_or_create(b)
    assert cache.peek(a) is state
    assert len(cache) == 2


def test_cache_never_evicts_an_origin_being_fetched() -> None:
    cache = OriginCache(max_bytes=STATE_BYTES)
    cache.get_or_create(origin("a")).fetching = True
    cache.get_or_create(origin("b"))
    assert cache.peek(origin("a")) is not None


def test_cache_stays_within_its_bound_in_bytes_over_many_origins() -> None:
    cache = OriginCache(max_bytes=100 * STATE_BYTES)
    for i in range(5000):
        fetch(cache, f"host{i}", RULES * (i % 7))
        assert cache.bytes <= 100 * STATE_BYTES
    assert 10 < len(cache) < 100  # states with rules cost more than empty ones


def test_a_state_is_measured_again_when_a_fetch_gave_it_rules() -> None:
    cache = OriginCache(max_bytes=10**9)
    state = cache.get_or_create(origin("a"))
    assert cache.bytes == STATE_BYTES
    fetch(cache, "a", RULES * 100)
    assert cache.bytes == state_bytes(state) > STATE_BYTES + len(RULES) * 100


def test_without_a_second_tier_an_evicted_origin_is_forgotten() -> None:
    cache = OriginCache(max_bytes=STATE_BYTES + 1)
    fetch(cache, "a", b"")
    fetch(cache, "b", b"")
    assert cache.peek(origin("a")) is None
    assert cache.get_or_create(origin("a")).rules is None  # to be fetched again
    assert cache.forgotten >= 1


def test_an_evicted_origin_is_read_back_from_the_second_tier() -> None:
    shelf = Shelf()
    cache = OriginCache(max_bytes=STATE_BYTES + 1, second=shelf)
    first = fetch(cache, "a")
    fetch(cache, "b")
    assert origin("a") in shelf.states
    assert cache.peek(origin("a")) is first  # peek reads the second tier too
    assert origin("a") not in {state.origin for state in cache}
    again = cache.get_or_create(origin("a"))
    assert again.rules is first.rules
    assert (cache.spilled, cache.second_hits) == (2, 1)


def test_a_state_never_fetched_is_not_written_to_the_second_tier() -> None:
    shelf = Shelf()
    cache = OriginCache(max_bytes=STATE_BYTES, second=shelf)
    cache.get_or_create(origin("a"))
    cache.get_or_create(origin("b"))
    assert shelf.states == {}


def test_flush_writes_every_fetched_state() -> None:
    shelf = Shelf()
    cache = OriginCache(max_bytes=10**9, second=shelf)
    fetch(cache, "a")
    cache.get_or_create(origin("b"))
    cache.flush()
    assert list(shelf.states) == [origin("a")]
