"""The evidence of the robots.txt in force (``robotstxt/evidence.py``): an origin's record of the
fetch whose answer applies, with the SHA-256 of the bytes its rules were read from, and an
item's reference to it with the group and the line (1-based, in the file as served) that
decided."""

from __future__ import annotations

import dataclasses
import hashlib
import re

from scrapy_robotsmeta.robotstxt import MAX_BYTES
from scrapy_robotsmeta.robotstxt.evidence import origin_record, record_id, reference
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import (
    Hop,
    Outcome,
    allow_all,
    from_response,
    stamped,
    unavailable,
)
from scrapy_robotsmeta.robotstxt.state import Change, OriginState, Timing

ORIGIN = Origin("https", "example.com", 443)
ROBOTS_URL = "https://example.com/robots.txt"
TIMING = Timing(expiration=100.0, retry_delay=1.0)
# 2026-11-25T12:00:00Z
AT = 1_795_608_000.0


def fetched(outcome: Outcome, status: int | None = 200, at: float = AT) -> Outcome:
    """*outcome* as the fetcher gives it with evidence on: its hops, then stamped."""
    hops = (Hop(ROBOTS_URL, status),)
    return stamped(dataclasses.replace(outcome, hops=hops), at)


def applied(outcome: Outcome, now: float = 0.0, state: OriginState | None = None) -> OriginState:
    state = state or OriginState(ORIGIN)
    state.start_fetch(now, TIMING)
    state.apply(outcome, now, TIMING)
    return state


def test_the_digest_is_of_the_decoded_bytes_the_rules_were_read_from() -> None:
    body = b"User-agent: *\nDisallow: /private\n"
    outcome = fetched(from_response(200, body))
    assert outcome.fetched is not None
    assert outcome.fetched.sha256 == hashlib.sha256(body).hexdigest()
    assert (outcome.fetched.at, outcome.fetched.url, outcome.fetched.status) == (
        AT,
        ROBOTS_URL,
        200,
    )


def test_the_digest_of_a_file_past_500_kib_covers_its_first_500_kib_only() -> None:
    """RFC 9309 §2.5: the rules are read from the first 500 KiB; the digest covers what was
    read."""
    body = b"User-agent: *\nDisallow: /a\n" + b"#" * (MAX_BYTES + 10)
    outcome = fetched(from_response(200, body))
    assert outcome.fetched is not None
    assert outcome.fetched.sha256 == hashlib.sha256(body[:MAX_BYTES]).hexdigest()
    assert outcome.fetched.sha256 != hashlib.sha256(body).hexdigest()


def test_an_allow_all_answer_is_recorded_with_its_status_and_no_digest() -> None:
    """RFC 9309 §2.3.1.3: a 4xx means no robots.txt; its body is never read."""
    state = applied(fetched(from_response(404, b"Disallow: /"), status=404))
    record = origin_record(state)
    assert record is not None
    assert (record["status"], record["policy"], record["sha256"]) == (404, "allow_all", None)


def test_an_unavailable_answer_puts_no_fetch_in_force() -> None:
    """RFC 9309 §2.3.1.4: an unreachable robots.txt means complete disallow: no item can
    come of it, and nothing is recorded."""
    assert fetched(unavailable("HTTP 503"), status=503).fetched is None
    state = applied(fetched(unavailable("HTTP 503"), status=503))
    assert origin_record(state) is None


def test_a_record_says_which_file_from_where_when_and_what_it_meant() -> None:
    body = b"User-agent: *\nAllow: /\n"
    state = applied(fetched(from_response(200, body)))
    record = origin_record(state)
    assert record == {
        "record": record_id(
            "robots.txt", "https://example.com", AT, hashlib.sha256(body).hexdigest()
        ),
        "file": "robots.txt",
        "origin": "https://example.com",
        "url": ROBOTS_URL,
        "fetched_at": "2026-11-25T12:00:00.000Z",
        "status": 200,
        "policy": "rules",
        "reason": "HTTP 200",
        "sha256": hashlib.sha256(body).hexdigest(),
    }


def test_a_redirected_fetch_is_recorded_at_the_url_that_answered() -> None:
    """RFC 9309 §2.3.1.2: the rules come from the redirect target."""
    outcome = from_response(200, b"User-agent: *\nAllow: /\n")
    hops = (Hop(ROBOTS_URL, 301), Hop("https://cdn.example.com/robots.txt", 200))
    state = applied(stamped(dataclasses.replace(outcome, hops=hops), AT))
    record = origin_record(state)
    assert record is not None
    assert (record["url"], record["status"]) == ("https://cdn.example.com/robots.txt", 200)


def test_a_failed_refresh_keeps_the_record_of_the_rules_it_keeps() -> None:
    """RFC 9309 §2.4: an unreachable robots.txt leaves the cached copy in force, and with it
    the record of the fetch that brought it."""
    state = applied(fetched(from_response(200, b"User-agent: *\nDisallow: /x\n")))
    before = origin_record(state)
    state.start_fetch(150.0, TIMING)
    change = state.apply(fetched(unavailable("HTTP 503"), 503, AT + 150), 150.0, TIMING)
    assert change is Change.KEPT_CACHED_COPY
    assert origin_record(state) == before


def test_a_new_fetch_gets_a_record_of_its_own_even_with_the_same_bytes() -> None:
    body = b"User-agent: *\nDisallow: /x\n"
    state = applied(fetched(from_response(200, body)))
    first = origin_record(state)
    applied(fetched(from_response(200, body), at=AT + 200), 200.0, state)
    second = origin_record(state)
    assert first is not None
    assert second is not None
    assert first["sha256"] == second["sha256"]
    assert first["record"] != second["record"]


def test_a_state_fetched_without_evidence_has_no_record() -> None:
    assert origin_record(applied(from_response(200, b"User-agent: *\nAllow: /\n"))) is None


def test_the_reference_names_the_deciding_rule_by_its_line_in_the_file_as_served() -> None:
    """RFC 9309 §2.2.2: the longest match decides. Lines are counted as served: a byte order
    mark, comments, CR LF and a lone CR (RFC 9309 §2.2: EOL is CR, LF or CR LF) included."""
    served = b"\xef\xbb\xbf# rules\r\nUser-agent: *\r\nDisallow: /a\rAllow: /a/b\n"
    state = applied(fetched(from_response(200, served)))
    assert state.rules is not None
    verdict = state.rules.explain("https://example.com/a/b/c", "bot")
    ref = reference("0123456789abcdef", verdict)
    assert ref == {
        "record": "0123456789abcdef",
        "group": "*",
        "line": 4,
        "rule": "Allow: /a/b",
    }
    lines = re.split(r"\r\n|\r|\n", served.decode("utf-8-sig"))
    assert lines[ref["line"] - 1] == ref["rule"]


def test_a_reference_without_a_matching_rule_names_the_group_and_no_line() -> None:
    """RFC 9309 §2.2.2: a URL no rule matches is allowed; the group still applied."""
    state = applied(
        fetched(from_response(200, b"User-agent: bot\nUser-agent: other\nDisallow: /x\n"))
    )
    assert state.rules is not None
    verdict = state.rules.explain("https://example.com/y", "bot")
    assert reference(None, verdict) == {
        "record": None,
        "group": "bot other",
        "line": None,
        "rule": None,
    }


def test_a_reference_under_allow_all_names_no_group() -> None:
    state = applied(fetched(allow_all("HTTP 404"), status=404))
    assert state.rules is not None
    assert reference("r", state.rules.explain("https://example.com/y", "bot"))["group"] is None
