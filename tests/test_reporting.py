"""The robots.txt part's log lines and stats, as a user reads them."""

from __future__ import annotations

import logging

import pytest
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from scrapy_robotsmeta import reporting
from scrapy_robotsmeta.robotstxt.cache import OriginCache
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import from_response, unavailable
from scrapy_robotsmeta.robotstxt.state import Change, OriginState

ORIGIN = Origin("https", "example.com", 443)


def stats() -> MemoryStatsCollector:
    return MemoryStatsCollector(get_crawler())


@pytest.mark.parametrize(
    ("change", "outcome", "line"),
    [
        (
            Change.KEPT_CACHED_COPY,
            unavailable("HTTP 503"),
            "robots.txt of https://example.com unavailable on refresh (HTTP 503); keeping the "
            "cached copy",
        ),
        (
            Change.OUTAGE_STARTED,
            unavailable("HTTP 503"),
            "robots.txt of https://example.com unavailable (HTTP 503); its requests wait while "
            "it is retried",
        ),
        (
            Change.READY,
            from_response(404, b""),
            "robots.txt of https://example.com: HTTP 404; allowing everything",
        ),
        (
            Change.RECOVERED,
            from_response(200, b""),
            "robots.txt of https://example.com: HTTP 200; rules apply",
        ),
    ],
)
def test_a_change_worth_a_line_is_logged_and_its_outcome_counted(
    caplog: pytest.LogCaptureFixture, change: Change, outcome: object, line: str
) -> None:
    collector = stats()
    with caplog.at_level(logging.INFO):
        reporting.change(collector, OriginState(ORIGIN), change, outcome)  # type: ignore[arg-type]
    assert caplog.messages == [line]
    kind = outcome.kind.value  # type: ignore[attr-defined]
    assert collector.get_value(f"robotstxt/outcome/{kind}") == 1
    kept = collector.get_value("robotstxt/kept_cached_copy")
    assert kept == (1 if change is Change.KEPT_CACHED_COPY else None)


def test_rules_fetched_as_expected_are_counted_but_not_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    collector = stats()
    with caplog.at_level(logging.INFO):
        reporting.change(collector, OriginState(ORIGIN), Change.READY, from_response(200, b""))
    assert caplog.messages == []
    assert collector.get_value("robotstxt/outcome/rules") == 1


def test_requests_lost_at_close_are_one_line_and_none_is_no_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    collector = stats()
    reporting.lost(collector, 0, None)
    reporting.lost(collector, 12, None)
    assert len(caplog.records) == 1
    assert caplog.messages[0].startswith("12 request(s) dropped: the crawl closed")
    assert collector.get_value("robotstxt/dropped_on_close") == 12


def test_cache_counters_are_set_at_close() -> None:
    collector = stats()
    cache = OriginCache(10**6)
    cache.get_or_create(ORIGIN)
    cache.get_or_create(ORIGIN)
    reporting.cache(collector, cache)
    assert collector.get_value("robotstxt/cache/memory_hits") == 1
    assert collector.get_value("robotstxt/cache/disk_errors") == 0
