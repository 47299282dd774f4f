"""The origin cache (``robotstxt/cache.py``): least recently used idle origins go first, never
one that requests wait on or that is being fetched, and it never grows past its bound."""

from __future__ import annotations

from scrapy_robotsmeta.robotstxt.cache import OriginCache
from scrapy_robotsmeta.robotstxt.origin import Origin


def test_cache_evicts_the_least_recently_used_idle_origin() -> None:
    cache = OriginCache(max_origins=2)
    a, b, c = (Origin("http", host, 80) for host in "abc")
    cache.get_or_create(a)
    cache.get_or_create(b)
    cache.get_or_create(a)  # a is now more recent than b
    cache.get_or_create(c)
    assert cache.peek(b) is None
    assert cache.peek(a) is not None
    assert cache.peek(c) is not None
    assert cache.evicted == 1


def test_cache_never_evicts_an_origin_that_requests_wait_on() -> None:
    a, b = Origin("http", "a", 80), Origin("http", "b", 80)
    cache = OriginCache(max_origins=1, keep={a}.__contains__)
    state = cache.get_or_create(a)
    cache.get_or_create(b)
    assert cache.peek(a) is state
    assert len(cache) == 2


def test_cache_never_evicts_an_origin_being_fetched() -> None:
    cache = OriginCache(max_origins=1)
    a, b = Origin("http", "a", 80), Origin("http", "b", 80)
    cache.get_or_create(a).fetching = True
    cache.get_or_create(b)
    assert cache.peek(a) is not None


def test_cache_stays_within_its_bound_over_many_origins() -> None:
    cache = OriginCache(max_origins=100)
    for i in range(5000):
        cache.get_or_create(Origin("http", f"host{i}", 80))
    assert len(cache) == 100
    assert cache.evicted == 4900
