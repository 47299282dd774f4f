"""What a robots.txt fetch means (``robotstxt/policy.py``): RFC 9309 §2.3.1 status codes,
redirects, network errors and §2.4 cache control."""

from __future__ import annotations

import pytest

from scrapy_robotsmeta.robotstxt.policy import from_exception, from_response, max_age
from scrapy_robotsmeta.robotstxt.status import Status

DISALLOW_ALL = b"User-agent: *\nDisallow: /\n"


@pytest.mark.parametrize("status", [200, 203, 206, 299])
def test_2xx_parses_the_rules(status: int) -> None:
    """RFC 9309 §2.3.1.1: a successful download is followed."""
    outcome = from_response(status, DISALLOW_ALL)
    assert outcome.kind is Status.RULES
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
    assert outcome.kind is Status.ALLOW_ALL
    assert outcome.rules is not None
    assert outcome.rules.allowed("http://a/x", "bot")


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504, 599, 600, 100])
def test_5xx_429_and_unknown_codes_are_unavailable(status: int) -> None:
    """RFC 9309 §2.3.1.4: server errors mean complete disallow; Google treats 429 alike."""
    assert from_response(status, b"").kind is Status.UNAVAILABLE


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_3xx_with_location_is_a_redirect(status: int) -> None:
    """RFC 9309 §2.3.1.2: a redirect is followed; until its target answers, what robots.txt is
    stays unknown."""
    outcome = from_response(status, b"", location=b"/elsewhere")
    assert outcome.kind is Status.UNKNOWN
    assert outcome.location == "/elsewhere"


@pytest.mark.parametrize("status", [200, 301, 404, 503])
def test_only_a_redirect_says_where_the_fetch_goes_on(status: int) -> None:
    """RFC 9309 §2.3.1.2: any other answer, a 3xx without a Location included, ends the fetch."""
    assert from_response(status, DISALLOW_ALL).location is None


def test_3xx_without_location_is_like_404() -> None:
    assert from_response(301, DISALLOW_ALL).kind is Status.ALLOW_ALL


def test_truncated_body_is_unavailable() -> None:
    assert from_response(200, DISALLOW_ALL, truncated=True).kind is Status.UNAVAILABLE


def test_network_error_is_unavailable_with_its_reason() -> None:
    outcome = from_exception(ConnectionRefusedError("refused"))
    assert outcome.kind is Status.UNAVAILABLE
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
