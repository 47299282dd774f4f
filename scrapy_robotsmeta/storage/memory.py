"""The default storage: parked requests in this process's memory, on disk past their bound
(in ``JOBDIR`` when there is one); origin states shared with no other process, the cache's disk
tier in ``JOBDIR`` as well."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.utils.job import job_dir

from scrapy_robotsmeta.defaults import PackageSettings
from scrapy_robotsmeta.parking import ParkingLot
from scrapy_robotsmeta.serializers import RequestCodec
from scrapy_robotsmeta.storage.base import Storage

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy import Request
    from scrapy.crawler import Crawler

    from scrapy_robotsmeta.robotstxt.origin import Origin


class MemoryStorage(Storage):
    """Parked requests in a :class:`!ParkingLot`, kept in ``JOBDIR`` across a pause when there
    is one; the cache keeps a disk tier."""

    disk_tier = True

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        assert crawler.stats is not None
        self.parking = ParkingLot(
            crawler.stats,
            RequestCodec.from_crawler(crawler),
            PackageSettings(crawler.settings).getint("ROBOTSTXT_PARKED_MEMORY_LIMIT"),
            job_dir(crawler.settings),
        )

    async def open(self) -> None:
        self.parking.restore()

    def park(self, origin: Origin, request: Request) -> None:
        self.parking.park(origin, request)

    async def release(self, origin: Origin) -> AsyncIterator[Request]:
        for request in self.parking.release(origin):
            yield request

    def parked_origins(self) -> list[Origin]:
        return self.parking.origins()

    async def close(self) -> int:
        return self.parking.close()
