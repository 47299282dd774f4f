"""The default storage: this process's memory, with origin states and parked requests on disk
past their bounds (in ``JOBDIR`` when there is one)."""

from __future__ import annotations

import logging
import sqlite3
from typing import TYPE_CHECKING

from scrapy.utils.job import job_dir

from scrapy_robotsmeta.defaults import PackageSettings
from scrapy_robotsmeta.parking import ParkingLot
from scrapy_robotsmeta.serializers import RequestCodec
from scrapy_robotsmeta.storage.base import Storage
from scrapy_robotsmeta.storage.statefile import StateFile

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy import Request
    from scrapy.crawler import Crawler

    from scrapy_robotsmeta.robotstxt.cache import OriginCache
    from scrapy_robotsmeta.robotstxt.origin import Origin


class MemoryStorage(Storage):
    """Origin states in this process, those that leave memory in a :class:`StateFile`; parked
    requests in a :class:`ParkingLot`. Both are kept in ``JOBDIR`` across a pause when there is
    one."""

    def __init__(self, crawler: Crawler, states: OriginCache) -> None:
        super().__init__(crawler, states)
        assert crawler.stats is not None
        settings = PackageSettings(crawler.settings)
        self.job_dir = job_dir(crawler.settings)
        self.parking = ParkingLot(
            crawler.stats,
            RequestCodec.from_crawler(crawler),
            settings.getint("ROBOTSTXT_PARKED_MEMORY_LIMIT"),
            self.job_dir,
        )
        self.state_file: StateFile | None = None
        if settings.getbool("ROBOTSTXT_CACHE_SPILL"):
            try:
                self.state_file = states.second = StateFile(self.job_dir)
            except (OSError, sqlite3.Error) as exc:  # a read-only JOBDIR, a file in its place…
                logger.warning(
                    "Cannot keep robots.txt states on disk (%s): origins that leave memory "
                    "will be fetched again if the crawl meets them again",
                    exc,
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
        if self.state_file is not None:
            if self.job_dir is not None:
                self.states.flush()  # for the next run of the job
            self.state_file.close()
        return self.parking.close()
