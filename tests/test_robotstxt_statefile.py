"""The second tier of origin states (``robotstxt/statefile.py``): a SQLite file that gives back
the records written, across a reopen (a resumed JOBDIR crawl), never one of another origin nor
of a file of another shape."""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

import pytest

from scrapy_robotsmeta.robotstxt.cache import OriginCache
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import from_response
from scrapy_robotsmeta.robotstxt.record import unpack
from scrapy_robotsmeta.robotstxt.state import Timing
from scrapy_robotsmeta.robotstxt.statefile import FILENAME, StateFile, _key, open_state_file

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


def records(prefix: str, count: int) -> list[tuple[Origin, bytes]]:
    """*count* records of 500 bytes, each of its own origin."""
    return [(Origin("https", f"{prefix}{i}.example", 443), bytes(500)) for i in range(count)]


def assert_resumed_with(directory: Path, kept: list[tuple[Origin, bytes]]) -> None:
    """The next run of the job opens the file, finds *kept*, and writes again."""
    resumed = StateFile(directory)
    assert all(resumed.get(origin) == record for origin, record in kept)
    resumed.put(records("later", 3))
    assert resumed.errors == 0
    assert len(resumed) == len(kept) + 3


def test_a_disk_full_at_close_keeps_what_was_written_before(tmp_path: Path) -> None:
    """The states written at close (a JOBDIR crawl's live ones) fill the disk: that write
    fails whole, logged and counted, and the next run reads the file as it was."""
    before = records("before", 50)
    state_file = StateFile(tmp_path)
    state_file.put(before)
    (pages,) = state_file._db.execute("PRAGMA page_count").fetchone()
    state_file._db.execute(f"PRAGMA max_page_count = {pages + 2}")  # a full disk, to SQLite
    state_file.put(records("at-close", 1000))
    assert state_file.errors == 1
    state_file.close()
    assert_resumed_with(tmp_path, before)


def test_a_folder_unwritable_at_close_leaves_a_file_the_next_run_reads(tmp_path: Path) -> None:
    """The log the close could not fold into the file and remove is read by the next open."""
    if os.geteuid() == 0:
        pytest.skip("chmod does not deny root")
    written = records("written", 50)
    state_file = StateFile(tmp_path)
    tmp_path.chmod(0o500)
    try:
        state_file.put(written)
        state_file.close()
    finally:
        tmp_path.chmod(0o700)
    assert_resumed_with(tmp_path, written)


def test_a_damaged_file_is_replaced_by_an_empty_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A cache: its origins are fetched again, and the job keeps a disk tier."""
    (tmp_path / FILENAME).write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 8)
    with caplog.at_level(logging.WARNING):
        assert_resumed_with(tmp_path, [])
    assert "Damaged robots.txt states" in caplog.text


def test_a_durable_file_gets_what_is_live_in_memory_at_close(tmp_path: Path) -> None:
    """With JOBDIR, the next run of the job reads every robots.txt fetched before the pause,
    those still live in memory at close included."""
    state_file = open_state_file(tmp_path)
    assert state_file is not None
    assert state_file.durable
    cache = OriginCache(10**9, second=state_file)
    state = cache.get_or_create(ORIGIN)
    state.start_fetch(0.0, Timing())
    state.apply(from_response(200, b"User-agent: *\nDisallow: /x\n"), 0.0, Timing())
    cache.close()
    record = StateFile(tmp_path).get(ORIGIN)
    assert record is not None
    again = unpack(ORIGIN, record)
    assert again is not None
    assert again.rules is not None
    assert not again.rules.allowed("https://example.com/x", "bot")


def test_a_folder_that_cannot_hold_the_file_leaves_the_crawl_without_a_disk_tier(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "job").write_bytes(b"")
    with caplog.at_level(logging.WARNING):
        assert open_state_file(tmp_path / "job") is None
    assert "Cannot keep robots.txt states on disk" in caplog.text
