"""An origin's whole life in the core, driven by plain-float time: no crawler, no reactor.

Each test walks one path of the state diagram in ``robotstxt/state.py`` as the middleware
walks it: checks of requests, the fetch the core begins, its outcome, and what falls due.
"""

from __future__ import annotations

import pytest

from scrapy_robotsmeta.robotstxt.core import Action, RobotsTxtCore
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import from_response, unavailable
from scrapy_robotsmeta.robotstxt.state import Change, Decision, Timing
from scrapy_robotsmeta.robotstxt.status import Status

ORIGIN = Origin("http", "example.com", 80)
TIMING = Timing(expiration=3600.0, retry_delay=2.0, retry_max_delay=8.0, unavailable_timeout=30.0)
RULES = from_response(200, b"User-agent: *\nDisallow: /private\n")
DOWN = unavailable("HTTP 503")


def core(hold_time: float = 0.0) -> RobotsTxtCore:
    return RobotsTxtCore(TIMING, 10**8, hold_time)


def first_fetch(robots: RobotsTxtCore, now: float = 0.0) -> Change:
    """A first request begins the fetch; this process makes it, and it ends at once."""
    check = robots.check(ORIGIN, now)
    assert check.decision is Decision.WAIT
    assert check.fetch
    robots.fetch_claimed(check.state, now)
    return robots.settle(check.state, RULES, now)


def test_first_request_waits_and_begins_the_one_fetch() -> None:
    robots = core()
    first = robots.check(ORIGIN, 0.0)
    second = robots.check(ORIGIN, 0.1)
    assert (first.decision, first.fetch) == (Decision.WAIT, True)
    assert (second.decision, second.fetch) == (Decision.WAIT, False)
    assert robots.is_pending(ORIGIN)


def test_first_fetch_ready_releases_and_rules_decide() -> None:
    robots = core()
    assert first_fetch(robots) is Change.READY
    robots.released(ORIGIN)
    assert not robots.is_pending(ORIGIN)
    check = robots.check(ORIGIN, 1.0)
    assert check.decision is Decision.RULES
    assert check.state.rules is not None
    assert not check.state.rules.allowed("http://example.com/private/1", "bot")
    assert robots.next_due() is None


def test_refresh_after_expiry_waits_like_a_first_fetch() -> None:
    """RFC 9309 §2.4: a cached robots.txt is used for at most its lifetime."""
    robots = core()
    first_fetch(robots)
    robots.released(ORIGIN)
    check = robots.check(ORIGIN, TIMING.expiration)
    assert (check.decision, check.fetch) == (Decision.WAIT, True)
    timeout, fresh = robots.fetch_claimed(check.state, TIMING.expiration)
    assert fresh  # a refresh must reach the site, not an HTTP cache
    assert timeout == TIMING.unavailable_timeout  # no try outlasts the give-up time
    assert robots.settle(check.state, RULES, TIMING.expiration) is Change.READY


def test_outage_retries_when_due_then_recovers() -> None:
    """RFC 9309 §2.3.1.4: unreachable means complete disallow; the crawler may retry."""
    robots = core()
    check = robots.check(ORIGIN, 0.0)
    robots.fetch_claimed(check.state, 0.0)
    assert robots.settle(check.state, DOWN, 0.0) is Change.OUTAGE_STARTED
    assert robots.next_due() == TIMING.retry_delay
    assert robots.due(1.0) == []
    [(state, action)] = robots.due(TIMING.retry_delay)
    assert action is Action.FETCH
    assert state.fetching
    robots.fetch_claimed(state, 2.0)
    assert robots.settle(state, RULES, 2.0) is Change.RECOVERED
    assert robots.advance(state, 2.0) is Action.RELEASE


def test_outage_is_given_up_at_its_deadline() -> None:
    robots = core()
    state = robots.check(ORIGIN, 0.0).state
    now = 0.0
    while True:
        robots.fetch_claimed(state, now)
        robots.settle(state, DOWN, now)
        due = robots.next_due()
        assert due is not None
        now = due
        [(state, action)] = robots.due(now)
        if action is Action.GIVE_UP:
            break
        assert action is Action.FETCH
    assert now == TIMING.unavailable_timeout
    assert robots.give_up(state, now) == TIMING.unavailable_timeout  # as observed
    assert robots.check(ORIGIN, now).decision is Decision.DROP


def test_cached_copy_serves_through_an_outage_of_its_refresh() -> None:
    """RFC 9309 §2.4: while robots.txt is unreachable, the cached copy may be used."""
    robots = core()
    first_fetch(robots)
    robots.released(ORIGIN)
    now = TIMING.expiration
    check = robots.check(ORIGIN, now)
    robots.fetch_claimed(check.state, now)
    assert robots.settle(check.state, DOWN, now) is Change.KEPT_CACHED_COPY
    assert robots.check(ORIGIN, now + 1).decision is Decision.RULES


def test_fleet_claim_lost_waits_for_the_poll() -> None:
    """Another process holds the fetch: no fetch here before the poll interval."""
    robots = core(hold_time=5.0)
    check = robots.check(ORIGIN, 0.0)
    assert robots.next_due() == 5.0  # the hold
    assert not robots.fetch_left(check.state, 0.0, until=1.0)
    assert not check.state.fetching
    assert robots.next_due() == 1.0  # the hold ended with the claim
    [(_, action)] = robots.due(1.0)
    assert action is Action.FETCH  # nothing came meanwhile: try to claim again


def test_fleet_claim_lost_to_a_published_state_releases() -> None:
    robots = core()
    check = robots.check(ORIGIN, 0.0)
    # What the storage adopts when another process published rules meanwhile.
    check.state.apply(RULES, 0.0, TIMING)
    assert robots.fetch_left(check.state, 0.0, until=1.0)


def test_fleet_claim_won_fetches_here() -> None:
    robots = core()
    check = robots.check(ORIGIN, 0.0)
    timeout, fresh = robots.fetch_claimed(check.state, 0.0)
    assert timeout == TIMING.unavailable_timeout
    assert not fresh


@pytest.mark.parametrize(("hold", "held"), [(5.0, True), (0.0, False)])
def test_requests_may_wait_for_a_fetch_in_flight_until_the_hold_ends(
    hold: float, held: bool
) -> None:
    robots = core(hold_time=hold)
    robots.check(ORIGIN, 0.0)
    assert robots.check(ORIGIN, 1.0).held is held
    if held:
        [(_, action)] = robots.due(hold)
        assert action is Action.END_HOLD
        assert not robots.check(ORIGIN, hold).held


def test_no_hold_during_an_outage() -> None:
    """An outage's tries fail or hang: requests are parked rather than held for them."""
    robots = core(hold_time=5.0)
    check = robots.check(ORIGIN, 0.0)
    robots.fetch_claimed(check.state, 0.0)
    robots.settle(check.state, DOWN, 0.0)
    [(_, action)] = robots.due(TIMING.retry_delay)
    assert action is Action.FETCH
    assert not robots.check(ORIGIN, TIMING.retry_delay).held


def test_closed_core_begins_no_fetch_and_schedules_nothing() -> None:
    robots = core()
    robots.close()
    check = robots.check(ORIGIN, 0.0)
    assert (check.decision, check.fetch) == (Decision.WAIT, False)
    assert robots.next_due() is None


def test_unattended_origins_are_those_nothing_is_scheduled_for() -> None:
    """Requests parked for an origin must not wait on nothing: one with no retry or give-up
    scheduled (a fetch in flight, or none known here) is looked at again when idle."""
    robots = core()
    robots.check(ORIGIN, 0.0)
    other = Origin("http", "other.example", 80)
    assert robots.unattended([ORIGIN, other]) == [ORIGIN, other]
    state = robots.check(ORIGIN, 0.0).state
    robots.fetch_claimed(state, 0.0)
    robots.settle(state, DOWN, 0.0)
    assert robots.unattended([ORIGIN, other]) == [other]  # its retry is due later


def test_explain_says_not_checked_unknown_or_the_deciding_rule() -> None:
    robots = core()
    assert robots.explain("data:text/plain,hi", "bot").policy is Status.NOT_CHECKED
    assert robots.explain("http://example.com/private", "bot").policy is Status.UNKNOWN
    first_fetch(robots)
    explanation = robots.explain("http://example.com/private", "bot")
    assert explanation.policy is Status.RULES
    assert "Disallow: /private" in str(explanation)
