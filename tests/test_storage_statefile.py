"""The second tier of origin states (``storage/statefile.py``): a SQLite file that gives back
what was written, across a reopen (a resumed JOBDIR crawl) and never from another version."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest

from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import (
    ALLOW_ALL_RULES,
    allow_all,
    from_response,
    unavailable,
)
from scrapy_robotsmeta.robotstxt.state import Decision, OriginState, Timing
from scrapy_robotsmeta.storage.statefile import FILENAME, StateFile

ORIGIN = Origin("https", "example.com", 443)
TIMING = Timing()


def fetched(outcome: object) -> OriginState:
    state = OriginState(ORIGIN)
    state.start_fetch(0.0, TIMING)
    state.apply(outcome, 0.0, TIMING)  # type: ignore[arg-type]
    return state


def test_rules_come_back_as_written_with_their_line_numbers(tmp_path: Path) -> None:
    state = fetched(from_response(200, b"User-agent: *\nAllow: /a\nDisallow: /\n"))
    assert state.rules is not None
    state.rules.allowed("https://example.com/x", "bot")  # compiled before it is written
    with_file = StateFile(tmp_path)
    with_file.put([state])
    back = with_file.get(ORIGIN)
    assert back is not None
    assert back.snapshot() == state.snapshot()
    assert back.decide(1.0) is Decision.RULES
    assert str(back.explain("https://example.com/x", "bot")) == "Disallow: / (line 3, group *)"
    assert back.explain("https://example.com/a", "bot").allowed


def test_allow_all_comes_back_as_the_shared_rules(tmp_path: Path) -> None:
    state_file = StateFile(tmp_path)
    state_file.put([fetched(allow_all("HTTP 404"))])
    back = state_file.get(ORIGIN)
    assert back is not None
    assert back.rules is ALLOW_ALL_RULES


def test_a_given_up_origin_comes_back_given_up(tmp_path: Path) -> None:
    """RFC 9309 §2.3.1.4: the give-up lasts its lifetime, wherever the state is kept."""
    state = fetched(unavailable("HTTP 503"))
    state.give_up(600.0, TIMING)
    state_file = StateFile(tmp_path)
    state_file.put([state])
    back = state_file.get(ORIGIN)
    assert back is not None
    assert back.decide(601.0) is Decision.DROP


def test_states_survive_a_reopen_in_the_same_directory(tmp_path: Path) -> None:
    first = StateFile(tmp_path)
    first.put([fetched(from_response(200, b"User-agent: *\nDisallow: /x\n"))])
    first.close()
    second = StateFile(tmp_path)
    assert len(second) == 1
    assert second.get(ORIGIN) is not None
    assert second.get(Origin("https", "other.example", 443)) is None


def test_a_temporary_file_is_removed_at_close() -> None:
    state_file = StateFile(None)
    state_file.put([fetched(allow_all("HTTP 404"))])
    assert state_file.path.exists()
    state_file.close()
    assert not state_file.path.parent.exists()


def test_a_state_written_by_another_version_is_not_read(tmp_path: Path) -> None:
    StateFile(tmp_path).close()
    with sqlite3.connect(tmp_path / FILENAME) as db:
        db.execute(
            "INSERT INTO states VALUES (?, ?, NULL)",
            (str(ORIGIN), json.dumps({"version": 1, "has_rules": False})),
        )
    assert StateFile(tmp_path).get(ORIGIN) is None


def test_unreadable_rules_are_logged_and_fetched_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    state_file = StateFile(tmp_path)
    state_file.put([fetched(from_response(200, b"User-agent: *\nDisallow: /x\n"))])
    with sqlite3.connect(tmp_path / FILENAME) as db:
        db.execute("UPDATE states SET rules = ?", (b"not a pickle",))
    with caplog.at_level(logging.WARNING):
        assert state_file.get(ORIGIN) is None
    assert "fetching it again" in caplog.text


def test_a_file_that_fails_is_logged_once_and_counted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A disk tier that fails (disk full, file removed…) never fails the crawl: the origins
    are fetched again instead."""
    state_file = StateFile(tmp_path)
    state_file._db.close()
    with caplog.at_level(logging.WARNING):
        state_file.put([fetched(allow_all("HTTP 404"))])
        assert state_file.get(ORIGIN) is None
    assert state_file.errors == 2
    assert len(caplog.records) == 1
