"""The default storage (``storage/memory.py``): parked requests in this process (in ``JOBDIR``
when there is one), and a disk tier for the cache, which the middleware opens."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scrapy import Request, Spider
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_robotsmeta import RobotsTxtMiddleware
from scrapy_robotsmeta.parking import JOBDIR_FOLDER
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.statefile import FILENAME, StateFile
from scrapy_robotsmeta.storage import MemoryStorage

ORIGIN = Origin("http", "example.com", 80)


def crawler(**settings: Any) -> Any:
    addon = {"ADDONS": {"scrapy_robotsmeta.Addon": 0}}
    return get_crawler(Spider, {**addon, "ROBOTSTXT_OBEY": True, **settings})


@deferred_f_from_coro_f
async def test_with_jobdir_parked_requests_wait_for_the_next_run(tmp_path: Path) -> None:
    store = MemoryStorage(crawler(JOBDIR=str(tmp_path)))
    await store.open()
    store.park(ORIGIN, Request("http://example.com/a"))
    assert await store.close() == 0
    assert (tmp_path / JOBDIR_FOLDER).is_dir()
    resumed = MemoryStorage(crawler(JOBDIR=str(tmp_path)))
    await resumed.open()
    assert resumed.parked_origins() == [ORIGIN]
    assert [request.url async for request in resumed.release(ORIGIN)] == ["http://example.com/a"]


@deferred_f_from_coro_f
async def test_without_jobdir_parked_requests_are_lost_at_close_and_counted() -> None:
    store = MemoryStorage(crawler())
    await store.open()
    store.park(ORIGIN, Request("http://example.com/a"))
    assert await store.close() == 1


def test_the_cache_keeps_its_disk_tier_beside_the_parked_requests(tmp_path: Path) -> None:
    middleware = RobotsTxtMiddleware(crawler(JOBDIR=str(tmp_path)))
    second = middleware.core.cache.second
    assert isinstance(second, StateFile)
    assert second.path == tmp_path / FILENAME
    assert second.durable
    second.close()


def test_without_jobdir_the_disk_tier_is_a_temporary_file() -> None:
    second = RobotsTxtMiddleware(crawler()).core.cache.second
    assert isinstance(second, StateFile)
    assert not second.durable
    path = second.path
    second.close()
    assert not path.exists()


def test_spill_off_keeps_no_disk_tier() -> None:
    middleware = RobotsTxtMiddleware(crawler(ROBOTSTXT_CACHE_SPILL=False))
    assert middleware.core.cache.second is None
