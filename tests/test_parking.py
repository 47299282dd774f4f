"""The parking lot: requests per origin, in memory up to a bound, on disk past it or in JOBDIR."""

from __future__ import annotations

from pathlib import Path

from scrapy import Request, Spider
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from scrapy_robotsmeta.parking import ParkingLot
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.serializers import RequestCodec, pickle

A, B = Origin("http", "a.example", 80), Origin("http", "b.example", 80)


class NamedSpider(Spider):
    name = "named"

    def parse_item(self, response: object) -> None:
        pass


def lot(limit: int = 100, jobdir: Path | None = None) -> tuple[ParkingLot, MemoryStatsCollector]:
    crawler = get_crawler(NamedSpider)
    stats = MemoryStatsCollector(crawler)
    codec = RequestCodec(pickle, NamedSpider())
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
