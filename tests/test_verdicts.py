"""What a decided request gets (``verdicts.py``): it goes on with the usage preferences of its
group recorded, or is refused with the reason, logged and counted."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from scrapy_robotsmeta.evidence import EvidenceLog
from scrapy_robotsmeta.keys import EVIDENCE_META_KEY, USAGE_META_KEY
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import from_response, unavailable
from scrapy_robotsmeta.robotstxt.state import Decision, OriginState, Timing
from scrapy_robotsmeta.verdicts import Verdicts

ORIGIN = Origin("https", "example.com", 443)
ROBOTS = b"User-agent: *\nDisallow: /private\nContent-Usage: train-ai=n\n"


def verdicts() -> tuple[Verdicts, MemoryStatsCollector]:
    stats = MemoryStatsCollector(get_crawler())
    return Verdicts(stats, None), stats


def ready(body: bytes = ROBOTS) -> OriginState:
    state = OriginState(ORIGIN)
    state.start_fetch(0.0, Timing())
    state.apply(from_response(200, body), 0.0, Timing())
    return state


def test_an_allowed_request_goes_on_with_its_usage_preferences() -> None:
    apply, stats = verdicts()
    request = Request("https://example.com/page")
    apply.apply(Decision.RULES, ready(), request, "bot")
    assert USAGE_META_KEY in request.meta
    assert stats.get_value("robotstxt/forbidden") is None


def test_a_disallowed_request_is_refused_with_its_rule(caplog: pytest.LogCaptureFixture) -> None:
    """RFC 9309 §2.2.2: the matching rule decides; the refusal names it."""
    apply, stats = verdicts()
    request = Request("https://example.com/private/1")
    with caplog.at_level(logging.DEBUG), pytest.raises(IgnoreRequest, match="Disallow: /private"):
        apply.apply(Decision.RULES, ready(), request, "bot")
    assert stats.get_value("robotstxt/forbidden") == 1
    assert "Forbidden by robots.txt: <GET https://example.com/private/1>" in caplog.text


def test_a_request_of_a_given_up_origin_is_dropped_with_the_reason() -> None:
    apply, stats = verdicts()
    state = OriginState(ORIGIN)
    state.start_fetch(0.0, Timing())
    state.apply(unavailable("HTTP 503"), 0.0, Timing())
    state.give_up(600.0, Timing())
    with pytest.raises(IgnoreRequest, match="unavailable \\(gave up after HTTP 503\\)"):
        apply.apply(Decision.DROP, state, Request("https://example.com/"), "bot")
    assert stats.get_value("robotstxt/unavailable_dropped") == 1


def test_with_evidence_an_allowed_request_carries_the_rule_that_let_it_through(
    tmp_path: Path,
) -> None:
    """RFC 9309 §2.2.2: the matching rule decides; with evidence kept, the request carries it
    (and a refused one is refused as without)."""
    stats = MemoryStatsCollector(get_crawler())
    apply = Verdicts(stats, None, EvidenceLog(str(tmp_path / "evidence.jsonl"), stats))
    state = ready(b"User-agent: *\nDisallow: /private\nAllow: /private/open\n")
    request = Request("https://example.com/private/open/1")
    apply.apply(Decision.RULES, state, request, "bot")
    assert request.meta[EVIDENCE_META_KEY]["robots.txt"] == {
        "record": None,  # this state was fetched without evidence
        "group": "*",
        "line": 3,
        "rule": "Allow: /private/open",
    }
    refused = Request("https://example.com/private/1")
    with pytest.raises(IgnoreRequest, match="Disallow: /private"):
        apply.apply(Decision.RULES, state, refused, "bot")
    assert EVIDENCE_META_KEY not in refused.meta
