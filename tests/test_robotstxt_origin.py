"""The origin a robots.txt applies to (``robotstxt/origin.py``): RFC 9309 §2.3."""

from __future__ import annotations

import pytest

from scrapy_robotsmeta.robotstxt.origin import Origin, origin_of


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
