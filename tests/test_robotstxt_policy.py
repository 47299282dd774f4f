"""Unit tests for the fetch policy, the origin scope and the origin cache."""

from __future__ import annotations

import pytest

from scrapy_robotsmeta.robotstxt.cache import OriginCache
from scrapy_robotsmeta.robotstxt.origin import Origin, origin_of
from scrapy_robotsmeta.robotstxt.policy import Kind, from_exception, from_response, max_age

DISALLOW_ALL = b"User-agent: *\nDisallow: /\n"


@pytest.mark.parametrize("status", [200, 203, 206, 299])
def test_2xx_parses_the_rules(status: int) -> None:
    """RFC 9309 §2.3.1.1: a successful download is followed."""
    outcome = from_response(status, DISALLOW_ALL)
    assert outcome.kind is Kind.RULES
    assert outcome.rules is not None
    assert not outcome.rules.allowed("http://a/x", "bot")


def test_2xx_html_body_keeps_only_rule_lines() -> None:
    body = b"<html><body>\nUser-agent: * <br>\nDisallow: /x\n</body></html>"
    outcome = from_response(200, body)
    assert outcome.rules is not None
    assert not outcome.rules.allowed("http://a/x", "bot")


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 451, 499])
def test_4xx_except_429_allows_all_and_ignores_the_body(status: int) -> None:
    """RFC 9309 §2.3.1.3: 4xx means the robots.txt is unavailable: crawl anything."""
    outcome = from_response(status, DISALLOW_ALL)
    assert outcome.kind is Kind.ALLOW_ALL
    assert outcome.rules is not None
    assert outcome.rules.allowed("http://a/x", "bot")


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504, 599, 600, 100])
def test_5xx_429_and_unknown_codes_are_unavailable(status: int) -> None:
    """RFC 9309 §2.3.1.4: server errors mean complete disallow; Google treats 429 alike."""
    assert from_response(status, b"").kind is Kind.UNAVAILABLE


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_3xx_with_location_is_a_redirect(status: int) -> None:
    outcome = from_response(status, b"", location=b"/elsewhere")
    assert outcome.kind is Kind.REDIRECT
    assert outcome.location == "/elsewhere"


def test_3xx_without_location_is_like_404() -> None:
    assert from_response(301, DISALLOW_ALL).kind is Kind.ALLOW_ALL


def test_truncated_body_is_unavailable() -> None:
    assert from_response(200, DISALLOW_ALL, truncated=True).kind is Kind.UNAVAILABLE


def test_network_error_is_unavailable_with_its_reason() -> None:
    outcome = from_exception(ConnectionRefusedError("refused"))
    assert outcome.kind is Kind.UNAVAILABLE
    assert outcome.reason == "ConnectionRefusedError: refused"


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (b"max-age=600", 600.0),
        (b"public, max-age=60, must-revalidate", 60.0),
        (b'max-age="30"', 30.0),
        (b"s-maxage=10", None),
        (b"no-cache", None),
        (b"max-age=banana", None),
        (None, None),
    ],
)
def test_cache_control_max_age(header: bytes | None, expected: float | None) -> None:
    """RFC 9309 §2.4 allows RFC 9111 cache control; only max-age is read."""
    assert max_age(header) == expected


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("http://Example.COM/a", Origin("http", "example.com", 80)),
        ("http://example.com:80/a", Origin("http", "example.com", 80)),
        ("https://example.com/a", Origin("https", "example.com", 443)),
        ("https://example.com:443/a", Origin("https", "example.com", 443)),
        ("http://example.com:8080/a", Origin("http", "example.com", 8080)),
        ("http://user:pw@example.com/a", Origin("http", "example.com", 80)),
        ("http://bücher.example/a", Origin("http", "xn--bcher-kva.example", 80)),
        ("http://[::1]:8000/a", Origin("http", "::1", 8000)),
    ],
)
def test_origin_is_scheme_host_and_port(url: str, origin: Origin) -> None:
    """RFC 9309 §2.3: robots.txt applies to its scheme, authority and port."""
    assert origin_of(url) == origin


def test_http_and_https_never_share() -> None:
    assert origin_of("http://example.com/") != origin_of("https://example.com/")


@pytest.mark.parametrize(
    ("url", "robots"),
    [
        ("http://example.com:80/a?b", "http://example.com/robots.txt"),
        ("https://example.com:8443/a", "https://example.com:8443/robots.txt"),
        ("http://[::1]:8000/a", "http://[::1]:8000/robots.txt"),
    ],
)
def test_robots_url_of_an_origin(url: str, robots: str) -> None:
    origin = origin_of(url)
    assert origin is not None
    assert origin.robots_url == robots


@pytest.mark.parametrize("url", ["http:///nohost", "http://example.com:99999/", "mailto:a@b"])
def test_urls_without_an_origin(url: str) -> None:
    assert origin_of(url) is None


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
