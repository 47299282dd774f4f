"""The second tier of origin states (``storage/statefile.py``): a SQLite file that gives back
the records written, across a reopen (a resumed JOBDIR crawl), never one of another origin nor
of a file of another shape."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.storage.statefile import FILENAME, StateFile, _key

ORIGIN = Origin("https", "example.com", 443)
OTHER = Origin("https", "other.example", 443)


def test_a_record_comes_back_as_written(tmp_path: Path) -> None:
    state_file = StateFile(tmp_path)
    state_file.put([(ORIGIN, b"one"), (OTHER, b"two")])
    assert state_file.get(ORIGIN) == b"one"
    assert state_file.get(OTHER) == b"two"
    assert state_file.get(Origin("http", "example.com", 80)) is None


def test_a_record_written_again_replaces_the_last_one(tmp_path: Path) -> None:
    state_file = StateFile(tmp_path)
    state_file.put([(ORIGIN, b"old")])
    state_file.put([(ORIGIN, b"new")])
    assert state_file.get(ORIGIN) == b"new"
    assert len(state_file) == 1


def test_records_survive_a_reopen_in_the_same_directory(tmp_path: Path) -> None:
    first = StateFile(tmp_path)
    first.put([(ORIGIN, b"kept")])
    first.close()
    second = StateFile(tmp_path)
    assert len(second) == 1
    assert second.get(ORIGIN) == b"kept"


def test_a_row_of_another_origin_under_the_same_key_is_not_read(tmp_path: Path) -> None:
    """Two origins whose keys collide share a row: the other one reads nothing."""
    StateFile(tmp_path).close()
    db = sqlite3.connect(tmp_path / FILENAME)
    with db:
        db.execute("INSERT INTO states VALUES (?, ?, ?)", (_key(str(ORIGIN)), "x://y", b"r"))
    db.close()  # the file is a crawl's alone while it is open
    assert StateFile(tmp_path).get(ORIGIN) is None


def test_a_file_of_another_shape_is_emptied(tmp_path: Path) -> None:
    """An older JOBDIR's file: its states are dropped (those origins are fetched again)."""
    with sqlite3.connect(tmp_path / FILENAME) as db:
        db.execute("CREATE TABLE states (origin TEXT PRIMARY KEY, snapshot TEXT, rules BLOB)")
        db.execute("INSERT INTO states VALUES (?, '{}', NULL)", (str(ORIGIN),))
    state_file = StateFile(tmp_path)
    assert len(state_file) == 0
    state_file.put([(ORIGIN, b"new")])
    assert state_file.get(ORIGIN) == b"new"


def test_a_temporary_file_is_removed_at_close() -> None:
    state_file = StateFile(None)
    state_file.put([(ORIGIN, b"record")])
    assert state_file.path.exists()
    state_file.close()
    assert not state_file.path.parent.exists()


def test_a_file_that_fails_is_logged_once_and_counted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A disk tier that fails (disk full, file removed…) never fails the crawl: the origins
    are fetched again instead."""
    state_file = StateFile(tmp_path)
    state_file._db.close()
    with caplog.at_level(logging.WARNING):
        state_file.put([(ORIGIN, b"record")])
        assert state_file.get(ORIGIN) is None
    assert state_file.errors == 2
    assert len(caplog.records) == 1
