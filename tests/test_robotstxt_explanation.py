"""Explanations (``robotstxt/explanation.py``): why a URL is allowed, refused or waiting, as
data and as the one line the debug log, ``scrapy robots`` and the demo print."""

from __future__ import annotations

from dataclasses import replace

from scrapy_robotsmeta.robotstxt import RobotsTxt
from scrapy_robotsmeta.robotstxt.explanation import Explanation
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import Hop, Outcome, allow_all, from_response, unavailable
from scrapy_robotsmeta.robotstxt.state import OriginState, Timing
from scrapy_robotsmeta.robotstxt.status import Status

TIMING = Timing()
RULES = from_response(200, b"User-agent: *\nDisallow: /x\n")


def fresh() -> OriginState:
    return OriginState(Origin("http", "example.com", 80))


def fetched(outcome: Outcome) -> OriginState:
    state = fresh()
    state.start_fetch(0.0, TIMING)
    state.apply(outcome, 0.0, TIMING)
    return state


def answered(state: OriginState, status: int) -> Outcome:
    """The outcome of a one-request fetch of *state*'s robots.txt answered with *status*."""
    outcome = RULES if status == 200 else unavailable(f"HTTP {status}")
    return replace(outcome, hops=(Hop(state.origin.robots_url, status),))


def test_explanation_of_rules_names_the_deciding_line_and_group() -> None:
    """RFC 9309 §2.2.2: the most specific match decides; the explanation cites it."""
    state = fetched(answered(fresh(), 200))
    explanation = state.explain("http://example.com/x/y", "bot")
    assert explanation.policy is Status.RULES
    assert explanation.reason == "HTTP 200"
    assert not explanation.allowed
    assert str(explanation) == "Disallow: /x (line 2, group *)"
    assert explanation.as_dict()["tries"] == [
        [{"url": "http://example.com/robots.txt", "status": 200, "error": None}]
    ]
    assert str(state.explain("http://example.com/ok", "bot")) == (
        "allowed: no rule matches (group *)"
    )


def test_explanation_of_4xx_is_allow_all() -> None:
    """RFC 9309 §2.3.1.3: an unavailable (4xx) robots.txt allows everything."""
    explanation = fetched(allow_all("HTTP 404")).explain("http://example.com/x", "bot")
    assert (explanation.policy, explanation.allowed) == (Status.ALLOW_ALL, True)
    assert str(explanation) == "allow all (HTTP 404)"


def test_explanation_of_an_outage_and_a_give_up_is_complete_disallow() -> None:
    """RFC 9309 §2.3.1.4: an unreachable robots.txt means complete disallow."""
    state = fetched(unavailable("HTTP 503"))
    explanation = state.explain("http://example.com/", "bot")
    assert (explanation.policy, explanation.allowed) == (Status.UNAVAILABLE, False)
    state.give_up(600.0, TIMING)
    assert str(state.explain("http://example.com/", "bot")) == (
        "unavailable, complete disallow (gave up after HTTP 503)"
    )


def test_explanation_before_any_fetch_says_requests_wait() -> None:
    state = fresh()
    assert state.explain("http://example.com/", "bot").policy is Status.UNKNOWN
    state.start_fetch(0.0, TIMING)
    explanation = state.explain("http://example.com/", "bot")
    assert (explanation.reason, explanation.allowed) == ("being fetched", False)


def test_verdict_renders_the_rule_its_line_and_group() -> None:
    """RFC 9309 §2.2.2: the longest match decides; the verdict names it as written."""
    rules = RobotsTxt.parse(b"User-agent: a\nUser-agent: b\nAllow: /x/ok\nDisallow: /x\n")
    assert str(rules.explain("http://h/x/y", "a")) == "Disallow: /x (line 4, group a b)"
    assert str(rules.explain("http://h/x/ok", "b")) == "Allow: /x/ok (line 3, group a b)"
    assert str(rules.explain("http://h/x", "c")) == "allowed: no group applies"


def test_a_url_robots_txt_does_not_apply_to_is_not_checked() -> None:
    explanation = Explanation.not_checked("data:,x", "no robots.txt for this URL")
    assert explanation.allowed
    assert str(explanation) == "not checked (no robots.txt for this URL)"
    assert explanation.as_dict()["origin"] is None


def test_a_failed_request_names_its_error() -> None:
    """A network error stands for the answer (RFC 9309 §2.3.1.4: unreachable)."""
    hop = Hop("http://example.com/robots.txt", error="ConnectionRefusedError: refused")
    assert str(hop) == "http://example.com/robots.txt failed (ConnectionRefusedError: refused)"
    assert Hop("http://example.com/robots.txt", error="ignored").answer == "ignored"
