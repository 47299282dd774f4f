"""Requests waiting for their origin's robots.txt, kept out of the scheduler until it is known.

In memory up to ``ROBOTSTXT_PARKED_MEMORY_LIMIT`` requests, on disk past it, one queue per
origin. With ``JOBDIR``, every parked request goes to disk as it is parked, under
``JOBDIR/robotstxt-parked/``: Scrapy writes its own JOBDIR state only on a clean close, and by
``spider_closed`` the scheduler is closed already, so parked requests could not be handed back
to it then. A resumed crawl finds them there and parks them again.
"""

from __future__ import annotations

import pickle
import secrets
import shutil
import tempfile
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

from queuelib import FifoDiskQueue
from scrapy.utils.request import request_from_dict

from scrapy_robotsmeta.robotstxt.origin import Origin, origin_of

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scrapy import Request, Spider
    from scrapy.statscollectors import StatsCollector

#: The folder of JOBDIR that holds parked requests.
JOBDIR_FOLDER = "robotstxt-parked"


def dump_request(request: Request, spider: Spider | None) -> bytes | None:
    """The request as bytes, as Scrapy's disk queues and scrapy-redis store it; None when it
    cannot be (a callback that is not a spider method, unpicklable meta)."""
    try:
        return pickle.dumps(request.to_dict(spider=spider), protocol=4)
    except (ValueError, TypeError, AttributeError, pickle.PicklingError):
        return None


def load_request(data: bytes, spider: Spider | None) -> Request:
    return request_from_dict(pickle.loads(data), spider=spider)


class ParkingLot:
    """Origin → requests parked for it, in memory and on disk, in the order they came."""

    def __init__(
        self,
        stats: StatsCollector,
        spider: Spider | None,
        memory_limit: int,
        jobdir: str | None = None,
    ) -> None:
        self._stats = stats
        self._spider = spider
        self._memory_limit = memory_limit
        self._durable = jobdir is not None
        self._directory = Path(jobdir) / JOBDIR_FOLDER if jobdir else None
        self._memory: dict[Origin, deque[Request]] = {}
        self._in_memory = 0
        # A list per origin: a request released from one queue may be parked again for the
        # same origin while that queue is being read (its rules expired meanwhile), and a
        # restored JOBDIR may hold more than one queue of an origin.
        self._disk: dict[Origin, list[FifoDiskQueue]] = {}

    def __len__(self) -> int:
        return self._in_memory + sum(len(q) for queues in self._disk.values() for q in queues)

    def __contains__(self, origin: Origin) -> bool:
        return origin in self._memory or origin in self._disk

    def origins(self) -> list[Origin]:
        return list(dict.fromkeys([*self._memory, *self._disk]))

    def restore(self) -> int:
        """Open the queues a previous run of this JOBDIR left; return how many requests they
        hold."""
        if self._directory is None or not self._directory.is_dir():
            return 0
        for path in sorted(self._directory.iterdir()):
            origin = origin_of(unquote(path.name.rpartition("#")[0]))
            if origin is None or not path.is_dir():
                continue
            queue = FifoDiskQueue(path)
            if len(queue):
                self._disk.setdefault(origin, []).append(queue)
            else:
                queue.close()
        return len(self)

    def park(self, origin: Origin, request: Request) -> None:
        if self._durable or self._in_memory >= self._memory_limit:
            data = dump_request(request, self._spider)
            if data is not None:
                self._disk_queue(origin).push(data)
                self._stats.inc_value("robotstxt/parked/disk")
                return
            # As Scrapy's scheduler does: keep it in memory rather than lose it.
            self._stats.inc_value("robotstxt/parked/unserializable")
        self._memory.setdefault(origin, deque()).append(request)
        self._in_memory += 1
        self._stats.inc_value("robotstxt/parked/memory")

    def release(self, origin: Origin) -> Iterator[Request]:
        """Take every request parked for *origin*, one at a time, so that a large number of
        them never sits in memory at once."""
        memory = self._memory.pop(origin, None)
        while memory:
            self._in_memory -= 1
            yield memory.popleft()
        for queue in self._disk.pop(origin, []):
            try:
                while (data := queue.pop()) is not None:
                    yield load_request(data, self._spider)
            finally:
                queue.close()

    def close(self) -> int:
        """Close the queues; return how many requests are lost: all of them without JOBDIR,
        only those that could not be written with it."""
        lost = self._in_memory
        self._memory.clear()
        self._in_memory = 0
        for queue in (q for queues in self._disk.values() for q in queues):
            if not self._durable:
                lost += len(queue)
            queue.close()
        self._disk.clear()
        if not self._durable and self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
        return lost

    def _disk_queue(self, origin: Origin) -> FifoDiskQueue:
        queues = self._disk.setdefault(origin, [])
        if not queues:
            if self._directory is None:
                self._directory = Path(tempfile.mkdtemp(prefix="robotstxt-parked-"))
            # "#" never appears in a quoted name: it separates the origin from a suffix that
            # keeps this queue apart from one of the same origin still being read.
            name = f"{quote(str(origin), safe='')}#{secrets.token_hex(4)}"
            queues.append(FifoDiskQueue(self._directory / name))
        return queues[-1]
