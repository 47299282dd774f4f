"""The default storage (``storage/memory.py``): where the origin states that leave memory and
the parked requests are kept, with and without JOBDIR."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from scrapy import Spider
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_robotsmeta.robotstxt.cache import OriginCache
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import from_response
from scrapy_robotsmeta.robotstxt.record import unpack
from scrapy_robotsmeta.robotstxt.state import Timing
from scrapy_robotsmeta.storage import MemoryStorage
from scrapy_robotsmeta.storage.statefile import FILENAME, StateFile

ORIGIN = Origin("http", "example.com", 80)


def storage(**settings: Any) -> MemoryStorage:
    crawler = get_crawler(Spider, settings)
    return MemoryStorage(crawler, OriginCache(10**9))


def fetched(store: MemoryStorage) -> None:
    state = store.states.get_or_create(ORIGIN)
    state.start_fetch(0.0, Timing())
    state.apply(from_response(200, b"User-agent: *\nDisallow: /x\n"), 0.0, Timing())


@deferred_f_from_coro_f
async def test_with_jobdir_states_are_written_beside_the_parked_requests(tmp_path: Path) -> None:
    store = storage(JOBDIR=str(tmp_path))
    assert store.state_file is not None
    assert store.state_file.path == tmp_path / FILENAME
    await store.open()
    fetched(store)
    assert await store.close() == 0
    record = StateFile(tmp_path).get(ORIGIN)  # what the next run of the job reads
    assert record is not None
    again = unpack(ORIGIN, record)
    assert again is not None
    assert again.rules is not None
    assert not again.rules.allowed("http://example.com/x", "bot")


@deferred_f_from_coro_f
async def test_without_jobdir_the_state_file_is_temporary() -> None:
    store = storage()
    assert store.state_file is not None
    path = store.state_file.path
    await store.open()
    fetched(store)
    await store.close()
    assert not path.exists()


def test_spill_off_keeps_no_state_file() -> None:
    store = storage(ROBOTSTXT_CACHE_SPILL=False)
    assert store.state_file is None
    assert store.states.second is None


def test_a_damaged_state_file_in_jobdir_is_replaced_by_an_empty_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The next runs of the job keep a disk tier; the states it held are fetched again."""
    (tmp_path / FILENAME).write_bytes(b"not a database, " * 100)
    with caplog.at_level(logging.WARNING):
        store = storage(JOBDIR=str(tmp_path))
    assert store.state_file is not None
    assert len(store.state_file) == 0
    assert "Damaged robots.txt states" in caplog.text


def test_a_jobdir_that_is_a_file_leaves_the_crawl_without_a_disk_tier(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "job").write_bytes(b"")
    with caplog.at_level(logging.WARNING):
        store = storage(JOBDIR=str(tmp_path / "job"))
    assert store.state_file is None
    assert "Cannot keep robots.txt states on disk" in caplog.text
