"""The origin state machine, driven by outcomes and plain-float time (no crawler, no reactor)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import (
    Fetch,
    Hop,
    Outcome,
    allow_all,
    from_response,
    unavailable,
)
from scrapy_robotsmeta.robotstxt.state import (
    _FIELD_CHECKS,
    MAX_TRIES,
    MIN_EXPIRATION,
    Change,
    Decision,
    OriginState,
    Snapshot,
    Timing,
    has_own_rules,
    same_snapshot,
    shift_times,
    unreadable,
)
from scrapy_robotsmeta.robotstxt.status import Status
from scrapy_robotsmeta.usage.tdmrep import parse_file
from scrapy_robotsmeta.usage.tdmrep import unreadable as tdm_unreadable

TIMING = Timing()
RULES = from_response(200, b"User-agent: *\nDisallow: /x\n")


def fresh() -> OriginState:
    return OriginState(Origin("http", "example.com", 80))


def fetched(outcome: object, now: float = 0.0, state: OriginState | None = None) -> OriginState:
    state = state or fresh()
    state.start_fetch(now, TIMING)
    state.apply(outcome, now, TIMING)  # type: ignore[arg-type]
    return state


def test_unknown_origin_waits_and_a_fetch_is_due() -> None:
    state = fresh()
    assert state.decide(0.0) is Decision.WAIT
    assert state.fetch_due(0.0)
    assert state.rules is None
    assert not state.fetching


def test_no_second_fetch_while_one_is_in_flight() -> None:
    state = fresh()
    state.start_fetch(0.0, TIMING)
    assert state.fetching
    assert not state.fetch_due(1.0)
    assert state.decide(1.0) is Decision.WAIT


def test_2xx_rules_decide_until_they_expire() -> None:
    """RFC 9309 §2.4: a cached robots.txt is used for at most 24 hours."""
    state = fetched(RULES, now=100.0)
    assert state.decide(100.0 + 86399) is Decision.RULES
    assert state.decide(100.0 + 86400) is Decision.WAIT
    assert state.fetch_due(100.0 + 86400)


def test_decision_reads_the_rules_at_the_same_instant() -> None:
    """One clock reading decides: at the instant the rules expire, the request waits rather
    than being judged by rules that are gone."""
    state = fetched(RULES)
    assert state.decide(TIMING.expiration - 1e-6) is Decision.RULES
    assert state.decide(TIMING.expiration) is Decision.WAIT


def test_max_age_shortens_the_lifetime_but_not_below_a_minute() -> None:
    """RFC 9309 §2.4: standard cache control may set a shorter lifetime."""
    short = from_response(200, b"", cache_control=b"max-age=5")
    state = fetched(short)
    assert state.expires_at == MIN_EXPIRATION
    longer = from_response(200, b"", cache_control=b"max-age=600")
    assert fetched(longer).expires_at == 600.0


def test_4xx_allows_everything() -> None:
    """RFC 9309 §2.3.1.3: an unavailable robots.txt (4xx) allows everything."""
    state = fetched(from_response(404, b""))
    assert state.decide(0.0) is Decision.RULES
    assert state.rules is not None
    assert state.rules.allowed("http://example.com/anything", "bot")


def test_status_is_unknown_until_the_first_fetch_ends() -> None:
    state = fresh()
    assert state.status is Status.UNKNOWN
    state.start_fetch(0.0, TIMING)
    assert state.status is Status.UNKNOWN


@pytest.mark.parametrize(
    ("outcome", "status"),
    [
        (RULES, Status.RULES),
        (from_response(404, b"User-agent: *\nDisallow: /\n"), Status.ALLOW_ALL),
        (unavailable("HTTP 503"), Status.UNAVAILABLE),
    ],
)
def test_status_is_what_the_fetch_answered(outcome: Outcome, status: Status) -> None:
    """RFC 9309 §2.3.1: a 2xx body's rules, allow-all after a 4xx, complete disallow while
    robots.txt is unreachable."""
    assert fetched(outcome).status is status


def test_expired_rules_keep_their_status_while_requests_wait() -> None:
    """RFC 9309 §2.4: expired rules decide nothing, yet are what robots.txt said until a
    refresh answers: the status and the decision are two questions."""
    state = fetched(RULES)
    assert state.decide(TIMING.expiration) is Decision.WAIT
    assert state.status is Status.RULES


def test_unavailable_both_while_retried_and_once_given_up() -> None:
    """RFC 9309 §2.3.1.4: complete disallow throughout; requests wait while the outage is
    retried, and are dropped once it is given up."""
    state = fetched(unavailable("HTTP 503"))
    assert (state.status, state.decide(1.0)) == (Status.UNAVAILABLE, Decision.WAIT)
    state.give_up(600.0, TIMING)
    assert (state.status, state.decide(600.0)) == (Status.UNAVAILABLE, Decision.DROP)


def test_unreachable_starts_an_outage_with_a_retry_and_a_deadline() -> None:
    """RFC 9309 §2.3.1.4: unreachable means complete disallow: requests wait."""
    state = fresh()
    state.start_fetch(10.0, TIMING)
    change = state.apply(unavailable("HTTP 503"), 10.0, TIMING)
    assert change is Change.OUTAGE_STARTED
    assert state.down_since == 10.0
    assert state.decide(10.0) is Decision.WAIT
    assert state.retry_at == 12.0
    assert state.give_up_at == 610.0
    assert not state.fetch_due(11.9)
    assert state.fetch_due(12.0)


def test_retries_back_off_exponentially_up_to_the_maximum() -> None:
    state = fresh()
    delays = []
    now = 0.0
    for _ in range(8):
        state.start_fetch(now, TIMING)
        state.apply(unavailable("HTTP 503"), now, TIMING)
        assert state.retry_at is not None
        delays.append(state.retry_at - now)
        now = state.retry_at
    assert delays == [2, 4, 8, 16, 32, 60, 60, 60]


def test_each_try_of_an_outage_ends_by_the_deadline() -> None:
    """No try outlasts the give-up deadline, so a hanging server cannot hold the crawl."""
    state = fresh()
    state.start_fetch(0.0, TIMING)
    state.apply(unavailable("timeout"), 0.0, TIMING)
    assert state.start_fetch(590.0, TIMING) == 10.0
    assert state.start_fetch(0.0, replace(TIMING, download_timeout=180.0)) == 180.0


def test_recovery_ends_the_outage() -> None:
    state = fresh()
    state.start_fetch(0.0, TIMING)
    state.apply(unavailable("HTTP 503"), 0.0, TIMING)
    state.start_fetch(2.0, TIMING)
    assert state.apply(RULES, 2.0, TIMING) is Change.RECOVERED
    assert state.down_since is None
    assert state.decide(2.0) is Decision.RULES
    assert state.give_up_at is None
    assert state.failures == 0


def answered(state: OriginState, status: int) -> Outcome:
    """The outcome of a one-request fetch of *state*'s robots.txt answered with *status*."""
    outcome = RULES if status == 200 else unavailable(f"HTTP {status}")
    return replace(outcome, hops=(Hop(state.origin.robots_url, status),))


def test_tries_keep_every_try_of_an_outage_until_the_next_episode() -> None:
    state = fresh()
    for now, status in ((0.0, 503), (2.0, 503), (6.0, 200)):
        state.start_fetch(now, TIMING)
        state.apply(answered(state, status), now, TIMING)
    answers = [[hop.answer for hop in hops] for hops in state.tries]
    assert answers == [["503"], ["503"], ["200"]]
    # A refresh after the recovery is a new episode: its story starts afresh.
    state.start_fetch(6.0 + TIMING.expiration, TIMING)
    assert state.tries == []


def test_tries_of_a_long_outage_keep_the_latest() -> None:
    state = fresh()
    for now in range(MAX_TRIES * 2):
        state.start_fetch(float(now), TIMING)
        state.apply(answered(state, 500 + now), float(now), TIMING)
    state.start_fetch(float(MAX_TRIES * 2), TIMING)
    assert len(state.tries) == MAX_TRIES - 1  # room for the try that starts
    assert state.tries[-1][0].status == 500 + MAX_TRIES * 2 - 1


def test_try_cut_short_by_the_deadline_keeps_the_reason_before_it() -> None:
    state = fresh()
    state.start_fetch(0.0, TIMING)
    state.apply(unavailable("ConnectionRefusedError"), 0.0, TIMING)
    state.start_fetch(599.95, TIMING)
    state.apply(unavailable("DownloadTimeoutError"), 600.05, TIMING)
    state.give_up(600.05, TIMING)
    assert state.reason == "gave up after ConnectionRefusedError"


def test_give_up_drops_requests_for_one_lifetime() -> None:
    state = fresh()
    state.start_fetch(0.0, TIMING)
    state.apply(unavailable("HTTP 503"), 0.0, TIMING)
    assert state.deadline_passed(600.0)
    state.give_up(600.0, TIMING)
    assert state.decide(600.0) is Decision.DROP
    assert state.reason == "gave up after HTTP 503"
    assert state.decide(600.0 + TIMING.expiration) is Decision.WAIT


def test_a_try_that_ends_after_the_give_up_changes_nothing() -> None:
    state = fresh()
    state.start_fetch(0.0, TIMING)
    state.apply(unavailable("HTTP 503"), 0.0, TIMING)
    state.start_fetch(590.0, TIMING)
    state.give_up(600.0, TIMING)
    assert state.apply(unavailable("timeout"), 601.0, TIMING) is Change.IGNORED
    assert state.decide(601.0) is Decision.DROP


def test_unreachable_on_refresh_keeps_the_cached_copy() -> None:
    """RFC 9309 §2.4: while robots.txt is unreachable, the cached copy may still be used."""
    state = fetched(RULES)
    expired = TIMING.expiration + 1
    state.start_fetch(expired, TIMING)
    assert state.apply(unavailable("HTTP 503"), expired, TIMING) is Change.KEPT_CACHED_COPY
    assert state.decide(expired) is Decision.RULES
    assert state.status is Status.RULES
    assert state.decide(expired + TIMING.retry_delay) is Decision.WAIT


@pytest.mark.parametrize("outcome", [RULES, allow_all("HTTP 404"), unavailable("HTTP 503")])
def test_a_snapshot_carries_the_state_to_another_process(outcome: object) -> None:
    """What a shared storage publishes is enough for another process to decide the same."""
    source = fetched(outcome, now=5.0)
    copy = fresh()
    body = b"User-agent: *\nDisallow: /x\n" if source.kind is Status.RULES else None
    copy.adopt(source.snapshot(), body)
    for now in (5.0, 7.0, 700.0, 90000.0):
        assert copy.decide(now) is source.decide(now)
        assert copy.fetch_due(now) is source.fetch_due(now)
    assert copy.snapshot() == source.snapshot()
    assert copy.status is source.status
    assert copy.explain("http://example.com/x", "bot") == source.explain(
        "http://example.com/x", "bot"
    )


def test_restoring_a_snapshot_puts_each_field_back_where_it_was() -> None:
    """Each field of a snapshot comes back as itself, whatever its neighbours hold: restored
    from a snapshot whose fields all differ, a state gives the same snapshot back."""
    values = Snapshot(
        version=fresh().values().version,
        kind=Status.RULES.value,
        reason="HTTP 200",
        tries=[[["http://example.com/robots.txt", 301, None], ["http://b/robots.txt", 200, "e"]]],
        expires_at=11.0,
        given_up=True,
        down_since=12.0,
        failures=3,
        retry_at=13.0,
        give_up_at=14.0,
        fetched=[15.0, "http://b/robots.txt", 200, "0" * 64],
        tdmrep=TDM_FILE.to_plain(),
    )
    assert unreadable(values._asdict()) is None
    state = fresh()
    state.restore(tuple(values), RULES.rules)
    assert state.values() == values
    assert state.tries[0][1] == Hop("http://b/robots.txt", 200, "e")
    assert state.fetched == Fetch(15.0, "http://b/robots.txt", 200, "0" * 64)


def test_outage_begins_when_its_first_try_began() -> None:
    """The give-up deadline counts from the start of the first failed try: a try that hangs
    for its whole timeout spends the outage's time, not time before it."""
    timing = Timing(unavailable_timeout=30.0, download_timeout=180.0)
    state = fresh()
    state.mark_fetching(100.0)
    assert state.start_fetch(100.0, timing) == 30.0  # the first try is cut to the give-up time
    state.apply(unavailable("timeout"), 130.0, timing)
    assert state.down_since == 100.0
    assert state.give_up_at == 130.0
    assert state.deadline_passed(130.0)


def outage() -> OriginState:
    return fetched(unavailable("HTTP 503"), now=1000.0)


def test_a_snapshot_moved_to_another_clock_and_back_is_the_same_state() -> None:
    """A shared storage publishes times in its own clock: moved there and back, a snapshot
    says the same, and its times moved by exactly the difference between the clocks."""
    snapshot = outage().snapshot()
    there = shift_times(snapshot, 1.7e9 + 0.123)
    assert there["down_since"] == pytest.approx(1000.0 + 1.7e9 + 0.123)
    assert there["give_up_at"] - there["down_since"] == pytest.approx(TIMING.unavailable_timeout)
    assert there["expires_at"] == 0.0  # never decided: not a time
    assert same_snapshot(shift_times(there, -1.7e9 - 0.123), snapshot)
    assert not same_snapshot(shift_times(snapshot, 0.5), snapshot)


def test_a_snapshot_of_this_version_is_readable() -> None:
    assert unreadable(outage().snapshot()) is None
    assert unreadable(fetched(RULES).snapshot()) is None


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"version": 3}, "version 3"),
        ({"tries": [["http://x/robots.txt", "503", None]]}, "'tries'"),
        ({"retry_at": "soon"}, "'retry_at'"),
        ({"given_up": 0}, "'given_up'"),
        ({"kind": "maybe"}, "'kind'"),
        # Statuses no rules come from: a state's rules are RULES or ALLOW_ALL.
        ({"kind": "unavailable"}, "'kind'"),
        ({"kind": "unknown"}, "'kind'"),
        ({"kind": "redirect"}, "'kind'"),
        ({"expires_at": float("nan")}, "'expires_at'"),
        ({"version": 4}, "version 4"),  # a state of before the fetch in force was kept
        ({"fetched": [1.7e9, "http://x/robots.txt", 200]}, "'fetched'"),
        ({"fetched": [1.7e9, "http://x/robots.txt", 200, "not a digest"]}, "'fetched'"),
        ({"fetched": ["now", "http://x/robots.txt", 200, None]}, "'fetched'"),
    ],
)
def test_a_snapshot_this_version_cannot_read_says_why(change: dict[str, object], why: str) -> None:
    snapshot = {**outage().snapshot(), **change}
    reason = unreadable(snapshot)
    assert reason is not None
    assert why in reason


def test_a_snapshot_missing_a_field_or_not_an_object_is_unreadable() -> None:
    snapshot = outage().snapshot()
    del snapshot["give_up_at"]
    assert unreadable(snapshot) == "no 'give_up_at'"
    assert unreadable([1, 2]) == "not a JSON object"


def test_every_field_of_a_snapshot_is_checked_when_read_from_elsewhere() -> None:
    """The fields are declared once (Snapshot); what a snapshot from another process must hold
    is said for each of them, the version aside (checked first)."""
    assert set(_FIELD_CHECKS) == set(Snapshot._fields) - {"version"}


def test_the_fetch_in_force_survives_a_snapshot_and_keeps_its_wall_clock_time() -> None:
    """Another process adopting the state gets the same evidence: the fetch's time is the
    wall clock's, not moved between processes' clocks as the state's own times are."""
    sha256 = "ab" * 32
    outcome = replace(RULES, fetched=Fetch(1.7e9, "http://example.com/robots.txt", 200, sha256))
    state = fetched(outcome)
    snapshot = state.snapshot()
    assert snapshot["fetched"] == [1.7e9, "http://example.com/robots.txt", 200, sha256]
    assert unreadable(snapshot) is None
    assert shift_times(snapshot, 50.0)["fetched"] == snapshot["fetched"]
    other = fresh()
    other.adopt(snapshot, b"User-agent: *\nDisallow: /x\n")
    assert other.fetched == state.fetched


# -- TDMRep: the origin's tdmrep.json, fetched with robots.txt ---------------------------------

TDM_FILE = parse_file(b'[{"location": "/x", "tdm-reservation": 1, "tdm-policy": "https://p/"}]')


def test_the_tdmrep_file_is_kept_with_the_rules_and_shared_in_a_snapshot() -> None:
    """A snapshot carries the origin's tdmrep.json as JSON data: another process adopting it
    reads the same rule for a URL; an origin fetched without TDMRep says it was not consulted
    (None), which is not an empty file."""
    source = fetched(replace(RULES, tdmrep=TDM_FILE), now=5.0)
    assert source.tdmrep == TDM_FILE
    snapshot = json.loads(json.dumps(source.snapshot()))
    assert unreadable(snapshot) is None
    copy = fresh()
    copy.adopt(snapshot, b"User-agent: *\nDisallow: /x\n")
    assert copy.tdmrep is not None
    assert copy.tdmrep.rule_for("http://example.com/x/1") == TDM_FILE.rules[0]
    assert same_snapshot(copy.snapshot(), source.snapshot())
    assert fetched(RULES).snapshot()["tdmrep"] is None
    assert not same_snapshot(
        fetched(RULES).snapshot(), fetched(replace(RULES, tdmrep=TDM_FILE)).snapshot()
    )


def test_a_tdmrep_failure_leaves_robots_txt_ready() -> None:
    """An unreadable tdmrep.json is no robots.txt outage: the rules apply at once. It is
    fetched again within ROBOTSTXT_UNAVAILABLE_TIMEOUT rather than the cache's lifetime, its
    pages' reservation being unknown meanwhile."""
    state = fresh()
    state.start_fetch(0.0, TIMING)
    change = state.apply(replace(RULES, tdmrep=tdm_unreadable("HTTP 503")), 0.0, TIMING)
    assert change is Change.READY
    assert state.decide(1.0) is Decision.RULES
    assert state.expires_at == TIMING.unavailable_timeout
    assert fetched(replace(RULES, tdmrep=TDM_FILE)).expires_at == TIMING.expiration


def test_a_robots_txt_outage_keeps_the_tdmrep_file_of_the_cached_copy() -> None:
    """RFC 9309 §2.4's cached copy while robots.txt is unreachable: its tdmrep.json with it."""
    state = fetched(replace(RULES, tdmrep=TDM_FILE))
    expired = TIMING.expiration + 1
    state.start_fetch(expired, TIMING)
    state.apply(
        replace(unavailable("HTTP 503"), tdmrep=tdm_unreadable("HTTP 503")), expired, TIMING
    )
    assert state.tdmrep == TDM_FILE


@pytest.mark.parametrize(
    "damaged", [["read", "", [[1, "/", 2, None]]], ["lost", "", []], "read", [None, "", []]]
)
def test_a_damaged_tdmrep_file_in_a_snapshot_is_unreadable(damaged: object) -> None:
    snapshot = {**fetched(replace(RULES, tdmrep=TDM_FILE)).snapshot(), "tdmrep": damaged}
    assert unreadable(snapshot) == f"'tdmrep' is {damaged!r}"


@pytest.mark.parametrize("kind", [Status.RULES, "rules"])
def test_only_rules_from_a_body_are_the_states_own(kind: Status | str) -> None:
    """RFC 9309 §2.3.1.1: a 2xx body's rules are the origin's own, carried by its record and
    its shared state; allow-all (§2.3.1.3) is the same for every origin, rebuilt from the kind."""
    assert has_own_rules(kind)


@pytest.mark.parametrize("kind", [Status.ALLOW_ALL, "allow_all", Status.UNAVAILABLE, None])
def test_allow_all_and_no_answer_have_no_rules_of_their_own(kind: Status | str | None) -> None:
    assert not has_own_rules(kind)
