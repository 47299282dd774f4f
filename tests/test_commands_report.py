"""What ``scrapy robots`` prints (``commands/report.py``), from explanations built by hand: the
rows of each check, the tries of an outage, and the exit status each verdict gives."""

from __future__ import annotations

import json
from dataclasses import replace

from scrapy_robotsmeta.commands.report import (
    EXIT_ALLOWED,
    EXIT_DISALLOWED,
    EXIT_ERROR,
    Page,
    Report,
    check_lines,
)
from scrapy_robotsmeta.robotstxt.explanation import Explanation
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import Hop, Outcome, from_response, unavailable
from scrapy_robotsmeta.robotstxt.state import OriginState, Timing

ORIGIN = Origin("http", "example.com", 80)
ROBOTS_URL = "http://example.com/robots.txt"
TIMING = Timing()


def state_after(*outcomes: Outcome) -> OriginState:
    state = OriginState(ORIGIN)
    for now, outcome in enumerate(outcomes):
        state.start_fetch(float(now), TIMING)
        state.apply(outcome, float(now), TIMING)
    return state


def answer(status: int, body: bytes = b"") -> Outcome:
    outcome = from_response(status, body) if status < 500 else unavailable(f"HTTP {status}")
    return replace(outcome, hops=(Hop(ROBOTS_URL, status),))


def report(*checks: Explanation, error: str | None = None) -> Report:
    return Report("http://example.com/x", "Bot/1.0", "bot", "bot", checks, None, error)


def test_a_rule_check_shows_the_fetch_the_group_and_the_rule() -> None:
    state = state_after(answer(200, b"User-agent: bot\nDisallow: /x\n"))
    lines = check_lines(state.explain("http://example.com/x", "bot"), "bot")
    assert lines == [
        "http://example.com/x",
        "  origin        http://example.com",
        f"  robots.txt    {ROBOTS_URL} 200",
        "  policy        rules (HTTP 200)",
        "  group         bot",
        "  rule          Disallow: /x (line 2)",
        "  verdict       disallowed",
    ]


def test_no_group_for_the_token_is_said_so() -> None:
    """RFC 9309 §2.2.1: with no group for the crawler and no ``*`` group, everything is
    allowed."""
    state = state_after(answer(200, b"User-agent: other\nDisallow: /\n"))
    lines = check_lines(state.explain("http://example.com/x", "bot"), "bot")
    assert "  group         none (no group for bot and no * group)" in lines
    assert "  rule          none matches" in lines
    assert lines[-1] == "  verdict       allowed"


def test_an_outage_lists_identical_tries_once_with_their_count() -> None:
    state = state_after(answer(503), answer(503), answer(200, b"User-agent: *\nAllow: /\n"))
    lines = check_lines(state.explain("http://example.com/x", "bot"), "bot")
    assert f"  robots.txt    {ROBOTS_URL} 503  (2 identical tries)" in lines
    assert f"                {ROBOTS_URL} 200" in lines
    assert "  tries         3: 503 x2, 200" in lines


def test_exit_status_follows_the_verdict() -> None:
    allowed = state_after(answer(404)).explain("http://example.com/x", "bot")
    refused = state_after(answer(200, b"User-agent: *\nDisallow: /\n")).explain(
        "http://example.com/x", "bot"
    )
    down = state_after(answer(503)).explain("http://example.com/x", "bot")
    page = Page("http://example.com/x", 200, (), (), None)
    assert replace(report(allowed), page=page).exit_status == EXIT_ALLOWED
    assert report(allowed, error="timeout").exit_status == EXIT_ERROR  # no page arrived
    assert report(refused, error="Forbidden").exit_status == EXIT_DISALLOWED
    assert report(down, error="unavailable").exit_status == EXIT_ERROR
    assert not report().allowed  # nothing was checked


def test_json_holds_each_check_as_its_explanation() -> None:
    explanation = state_after(answer(404)).explain("http://example.com/x", "bot")
    data = json.loads(report(explanation, error="x").as_json())
    assert data["checks"] == [explanation.as_dict()]
    assert data["checks"][0]["policy"] == "allow_all"
    assert data["checks"][0]["tries"] == [[{"url": ROBOTS_URL, "status": 404, "error": None}]]
