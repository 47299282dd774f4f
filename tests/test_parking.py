"""The parking lot: requests per origin, in memory up to a bound, on disk past it or in JOBDIR;
what a damaged queue or a failing disk costs is counted and logged, and costs nothing else."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from queuelib import FifoDiskQueue
from scrapy import Request, Spider
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from scrapy_robotsmeta.parking import JOBDIR_FOLDER, ParkingLot
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.serializers import RequestCodec, json, pickle
from tests.damage import DAMAGES, queue_folder, record_ends

A, B = Origin("http", "a.example", 80), Origin("http", "b.example", 80)


class NamedSpider(Spider):
    name = "named"

    def parse_item(self, response: object) -> None:
        pass


def lot(
    limit: int = 100, jobdir: Path | None = None, serializer: Any = pickle
) -> tuple[ParkingLot, MemoryStatsCollector]:
    crawler = get_crawler(NamedSpider)
    stats = MemoryStatsCollector(crawler)
    codec = RequestCodec(serializer, NamedSpider())
    return ParkingLot(stats, codec, limit, str(jobdir) if jobdir else None), stats


def urls(requests: object) -> list[str]:
    return [request.url for request in requests]  # type: ignore[attr-defined]


def test_release_gives_back_one_origins_requests_in_order() -> None:
    parking, _ = lot()
    for i in range(3):
        parking.park(A, Request(f"http://a.example/{i}"))
    parking.park(B, Request("http://b.example/"))
    assert urls(parking.release(A)) == [f"http://a.example/{i}" for i in range(3)]
    assert parking.origins() == [B]
    assert len(parking) == 1


def test_past_the_memory_limit_requests_wait_on_disk_in_order() -> None:
    parking, stats = lot(limit=2)
    for i in range(5):
        parking.park(A, Request(f"http://a.example/{i}"))
    assert stats.get_value("robotstxt/parked/memory") == 2
    assert stats.get_value("robotstxt/parked/disk") == 3
    assert urls(parking.release(A)) == [f"http://a.example/{i}" for i in range(5)]
    assert parking.close() == 0


def test_with_jobdir_every_request_is_written_and_found_by_the_next_run(tmp_path: Path) -> None:
    parking, _ = lot(jobdir=tmp_path)
    spider = NamedSpider()
    parking.park(A, Request("http://a.example/1", callback=spider.parse_item, meta={"k": 1}))
    parking.park(B, Request("http://b.example/1"))
    assert parking.close() == 0
    resumed, _ = lot(jobdir=tmp_path)
    assert resumed.restore() == 2
    assert sorted(resumed.origins()) == sorted([A, B])
    [request] = resumed.release(A)
    assert request.meta["k"] == 1
    assert getattr(request.callback, "__name__", None) == "parse_item"


def test_an_unserializable_request_stays_in_memory_and_is_counted(tmp_path: Path) -> None:
    """As Scrapy's scheduler does: a callback that is not a spider method cannot be written,
    so the request is kept in memory rather than lost, and counted when the crawl closes."""
    parking, stats = lot(jobdir=tmp_path)

    def not_a_spider_method(response: object) -> None:
        pass

    parking.park(A, Request("http://a.example/", callback=not_a_spider_method))
    assert stats.get_value("robotstxt/parked/unserializable") == 1
    assert parking.close() == 1


def test_without_jobdir_close_counts_every_request_and_leaves_no_files() -> None:
    parking, _ = lot(limit=1)
    for i in range(3):
        parking.park(A, Request(f"http://a.example/{i}"))
    assert parking.close() == 3


def test_a_request_parked_again_while_its_origin_is_released_is_kept(tmp_path: Path) -> None:
    """Rules may expire while an origin's requests are being released: the one parked again
    goes to a new queue, not into the one being read."""
    parking, _ = lot(jobdir=tmp_path)
    for i in range(3):
        parking.park(A, Request(f"http://a.example/{i}"))
    released = []
    for request in parking.release(A):
        released.append(request.url)
        if request.url.endswith("/0"):
            parking.park(A, Request("http://a.example/again"))
    assert len(released) == 3
    assert urls(parking.release(A)) == ["http://a.example/again"]


def park_pages(parking: ParkingLot, origin: Origin, count: int) -> None:
    for i in range(count):
        parking.park(origin, Request(f"{origin}/{i}"))


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


@pytest.mark.parametrize("damage", DAMAGES.values(), ids=DAMAGES.keys())
def test_a_damaged_queue_gives_back_what_it_holds_and_costs_no_other(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: Callable[[Path], int]
) -> None:
    """Each queue is read on its own: the damaged one's readable requests come back, the rest
    are counted and logged with its origin and folder, and the other origin loses nothing."""
    parking, _ = lot(jobdir=tmp_path)
    park_pages(parking, A, 10)
    park_pages(parking, B, 5)
    assert parking.close() == 0
    folder = queue_folder(tmp_path, str(A))
    readable = damage(folder)
    resumed, stats = lot(jobdir=tmp_path)
    resumed.restore()
    assert len(list(resumed.release(A))) == readable
    assert urls(resumed.release(B)) == [f"{B}/{i}" for i in range(5)]
    unread = stats.get_value("robotstxt/parked/lost", 0) + stats.get_value(
        "robotstxt/parked/malformed", 0
    )
    assert unread == 10 - readable
    assert stats.get_value("robotstxt/parked/damaged") == 1
    [warning] = warnings(caplog)
    assert str(A) in warning
    assert str(folder) in warning
    assert resumed.close() == 0
    # The next run finds nothing left to warn about.
    caplog.clear()
    assert lot(jobdir=tmp_path)[0].restore() == 0
    assert not warnings(caplog)


def test_a_truncated_queue_loses_only_its_cut_tail(tmp_path: Path) -> None:
    parking, _ = lot(jobdir=tmp_path)
    park_pages(parking, A, 10)
    parking.close()
    chunk = queue_folder(tmp_path, str(A)) / "q00000"
    with chunk.open("r+b") as file:
        file.truncate(record_ends(chunk)[6] + 2)  # seven records whole, the eighth cut
    resumed, stats = lot(jobdir=tmp_path)
    assert resumed.restore() == 7
    assert urls(resumed.release(A)) == [f"{A}/{i}" for i in range(7)]
    assert stats.get_value("robotstxt/parked/lost") == 3
    assert stats.get_value("robotstxt/parked/malformed") is None


def test_a_queue_cut_short_while_it_is_read_counts_the_rest_as_lost(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """queuelib reads lazily: files that change after the resumed run checked them can still
    end early, and the requests they no longer hold are counted then."""
    parking, _ = lot(jobdir=tmp_path)
    park_pages(parking, A, 10)
    parking.close()
    resumed, stats = lot(jobdir=tmp_path)
    assert resumed.restore() == 10
    folder = queue_folder(tmp_path, str(A))
    chunk = folder / "q00000"
    with chunk.open("r+b") as file:
        file.truncate(record_ends(chunk)[3])
    assert len(list(resumed.release(A))) == 4
    assert stats.get_value("robotstxt/parked/lost") == 6
    assert str(A) in warnings(caplog)[0]
    assert not folder.exists()


def test_a_malformed_entry_is_skipped_and_its_neighbours_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An entry that makes no request (here one naming a function as its request class, which
    the JSON serializer refuses to import or call) is counted and skipped, alone."""
    codec = RequestCodec(json, NamedSpider())
    queue = FifoDiskQueue(tmp_path / JOBDIR_FOLDER / f"{quote(str(A), safe='')}#crafted")
    for data in (
        codec.dump(Request(f"{A}/before")),
        b'{"dict": [["url", "http://a.example/x"], ["_class", "os.system"]]}',
        codec.dump(Request(f"{A}/after")),
    ):
        assert data is not None
        queue.push(data)
    queue.close()
    parking, stats = lot(jobdir=tmp_path, serializer=json)
    assert parking.restore() == 3
    assert urls(parking.release(A)) == [f"{A}/before", f"{A}/after"]
    assert stats.get_value("robotstxt/parked/malformed") == 1
    assert stats.get_value("robotstxt/parked/lost") is None
    [warning] = warnings(caplog)
    assert "os.system" in warning


def test_a_folder_that_cannot_be_made_keeps_requests_in_memory_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Park never raises: each request it cannot write is counted and kept in memory, and the
    failure is logged once, not once per request."""
    (tmp_path / JOBDIR_FOLDER).write_text("a file where the folder should be")
    parking, stats = lot(jobdir=tmp_path)
    park_pages(parking, A, 5)
    assert stats.get_value("robotstxt/parked/disk_errors") == 5
    assert stats.get_value("robotstxt/parked/memory") == 5
    assert len(warnings(caplog)) == 1
    assert len(list(parking.release(A))) == 5
    assert parking.close() == 0


def test_a_disk_that_fills_up_under_a_queue_retires_it(tmp_path: Path) -> None:
    """A write that failed may have left part of a record: that queue takes no more, the
    request waits in memory, and the next one goes to a new queue."""
    parking, stats = lot(jobdir=tmp_path)
    parking.park(A, Request(f"{A}/0"))
    fill_the_disk_under(queue_folder(tmp_path, str(A)) / "q00000")
    parking.park(A, Request(f"{A}/1"))
    parking.park(A, Request(f"{A}/2"))
    assert stats.get_value("robotstxt/parked/disk_errors") == 1
    assert stats.get_value("robotstxt/parked/disk") == 2
    assert sorted(urls(parking.release(A))) == [f"{A}/{i}" for i in range(3)]


def fill_the_disk_under(path: Path) -> None:
    """Make every descriptor this process writes *path* through write to /dev/full: each
    write fails with ENOSPC, as on a full disk."""
    full = os.open("/dev/full", os.O_WRONLY)
    for fd in map(int, os.listdir("/proc/self/fd")):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
            flags = int(Path(f"/proc/self/fdinfo/{fd}").read_text().split()[3], 8)
        except (OSError, ValueError, IndexError):
            continue  # the listing's own descriptor, gone already
        if target == str(path) and flags & os.O_ACCMODE != os.O_RDONLY:
            os.dup2(full, fd)
    os.close(full)


def test_a_disk_full_at_close_leaves_a_queue_the_next_run_recovers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The queue's state cannot be written: close says so and raises nothing, and the next run
    recovers every request from the queue's files."""
    parking, stats = lot(jobdir=tmp_path)
    park_pages(parking, A, 3)
    info = queue_folder(tmp_path, str(A)) / "info.json"
    info.symlink_to("/dev/full")
    assert parking.close() == 0
    assert stats.get_value("robotstxt/parked/disk_errors") == 1
    assert "Cannot save the state" in warnings(caplog)[0]
    info.unlink()
    info.write_bytes(b"")  # what the full disk left: the file opened, nothing written
    resumed, stats = lot(jobdir=tmp_path)
    assert resumed.restore() == 3
    assert urls(resumed.release(A)) == [f"{A}/{i}" for i in range(3)]
    assert stats.get_value("robotstxt/parked/lost") is None


def test_without_info_json_a_record_cut_short_counts_as_one_lost(tmp_path: Path) -> None:
    """Nothing says how many requests followed the cut: the one cut short is counted, and
    every whole one before it comes back."""
    parking, _ = lot(jobdir=tmp_path)
    park_pages(parking, A, 10)
    parking.close()
    folder = queue_folder(tmp_path, str(A))
    (folder / "info.json").unlink()
    with (folder / "q00000").open("r+b") as file:
        file.truncate(record_ends(folder / "q00000")[3] + 5)
    resumed, stats = lot(jobdir=tmp_path)
    assert resumed.restore() == 4
    assert stats.get_value("robotstxt/parked/lost") == 1
