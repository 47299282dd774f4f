"""Requests waiting for their origin's robots.txt, kept out of the scheduler until it is known.

In memory up to ``ROBOTSTXT_PARKED_MEMORY_LIMIT`` requests, on disk past it, one queue per
origin. With ``JOBDIR``, every parked request goes to disk as it is parked, under
``JOBDIR/robotstxt-parked/``: Scrapy writes its own JOBDIR state only on a clean close, and by
``spider_closed`` the scheduler is closed already, so parked requests could not be handed back
to it then. A resumed crawl finds them there and parks them again.

Nothing here raises into the crawl: a write that fails keeps the request in memory, and a
queue an earlier run left damaged (a disk full, a file cut short or overwritten) gives back
what it still holds; what it does not is counted and logged, and the damaged folder removed.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import shutil
import struct
import tempfile
from collections import deque
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO
from urllib.parse import quote, unquote

from queuelib import FifoDiskQueue

from scrapy_robotsmeta.keys import (
    ROBOTSTXT_PARKED_DAMAGED,
    ROBOTSTXT_PARKED_DISK,
    ROBOTSTXT_PARKED_DISK_ERRORS,
    ROBOTSTXT_PARKED_LOST,
    ROBOTSTXT_PARKED_MALFORMED,
    ROBOTSTXT_PARKED_MEMORY,
    ROBOTSTXT_PARKED_UNSERIALIZABLE,
)
from scrapy_robotsmeta.robotstxt.origin import Origin, origin_of
from scrapy_robotsmeta.serializers import MalformedRequest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scrapy import Request
    from scrapy.statscollectors import StatsCollector

    from scrapy_robotsmeta.serializers import RequestCodec

logger = logging.getLogger(__name__)

#: The folder of JOBDIR that holds parked requests.
JOBDIR_FOLDER = "robotstxt-parked"

# The layout of a queuelib FifoDiskQueue folder, read here directly to check and recover what
# an earlier run left, which queuelib reads trusting every size and offset: chunk files
# q00000, q00001… of records (a 4-byte big-endian size, then the bytes), and info.json saying
# where the unread records start and how many there are.
_CHUNK = "q{:05d}"
_CHUNK_NAME = re.compile(r"q(\d{5})")
_HEADER = struct.Struct(">L")
_INFO = "info.json"


class _DamagedFile(Exception):
    """A chunk file whose next record cannot be read."""


class _DiskQueue(FifoDiskQueue):
    """A queuelib queue that takes no more requests once a write to it failed: the failed
    write may have left part of a record, and a record after it could not be read back."""

    writable = True


@dataclass
class _Reading:
    """What reading one queue gave back and cost."""

    origin: Origin
    folder: Path
    reason: str = ""  # why it could not all be read; empty while nothing went wrong
    kept: int = 0
    lost: int = 0
    malformed: int = 0

    def report(self, stats: StatsCollector) -> None:
        """Count and log what went wrong, if anything did."""
        if not self.reason:
            return
        stats.inc_value(ROBOTSTXT_PARKED_DAMAGED)
        if self.lost:
            stats.inc_value(ROBOTSTXT_PARKED_LOST, self.lost)
        if self.malformed:
            stats.inc_value(ROBOTSTXT_PARKED_MALFORMED, self.malformed)
        logger.warning(
            "Parked queue of %(origin)s in %(folder)s is damaged (%(reason)s): %(kept)d "
            "request(s) recovered, %(lost)d lost, %(malformed)d malformed and skipped",
            vars(self),
        )


def _records(folder: Path, chunk: int, offset: int) -> Iterator[tuple[BinaryIO, int]]:
    """Each record of the queue in *folder* from *chunk* at *offset* on, as its chunk file
    (positioned at the record's bytes) and their size. Raises :class:`_DamagedFile` at a
    record that ends past its file (cut short, or a garbled size) or is empty (zeroed: no
    serializer writes no bytes)."""
    while (path := folder / _CHUNK.format(chunk)).is_file():
        with path.open("rb") as file:
            end = os.fstat(file.fileno()).st_size
            file.seek(offset)
            while header := file.read(_HEADER.size):
                here = file.tell()
                size = _HEADER.unpack(header)[0] if len(header) == _HEADER.size else 0
                if not 0 < size <= end - here:
                    raise _DamagedFile(f"{path.name} unreadable from byte {here - len(header)}")
                yield file, size
                file.seek(here + size)
        chunk, offset = chunk + 1, 0


def _read_info(folder: Path) -> tuple[int, int, int] | None:
    """The queue's size and the chunk and offset of its first unread record, as its info.json
    says; None when it is missing or is not what queuelib writes."""
    try:
        info = json.loads((folder / _INFO).read_text())
        numbers = [info["chunksize"], info["size"], *info["head"], *info["tail"]]
        if len(info["head"]) != 2 or len(info["tail"]) != 3 or not info["chunksize"]:
            return None
        if not all(type(number) is int and number >= 0 for number in numbers):
            return None
        return info["size"], info["tail"][0], info["tail"][2]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _first_chunk(folder: Path) -> int | None:
    numbers = [int(m[1]) for p in folder.iterdir() if (m := _CHUNK_NAME.fullmatch(p.name))]
    return min(numbers, default=None)


def _check(folder: Path, size: int, chunk: int, offset: int) -> str:
    """Why the queue in *folder* does not hold the *size* records its info.json says; empty
    if it does."""
    found = 0
    try:
        for _ in islice(_records(folder, chunk, offset), size):
            found += 1
    except (_DamagedFile, OSError) as exc:
        return f"{exc}; {found} of its {size} requests readable"
    return "" if found == size else f"{found} of its {size} requests found"


class ParkingLot:
    """Origin → requests parked for it, in memory and on disk, in the order they came."""

    def __init__(
        self,
        stats: StatsCollector,
        codec: RequestCodec,
        memory_limit: int,
        jobdir: str | None = None,
        *,
        counted: bool = True,
    ) -> None:
        #: Whether a request parked here counts in robotstxt/parked/memory (not when it was
        #: counted as it entered the lot it comes from).
        self._counted = counted
        self._stats = stats
        self._codec = codec
        self._memory_limit = memory_limit
        self._durable = jobdir is not None
        self._directory = Path(jobdir) / JOBDIR_FOLDER if jobdir else None
        self._memory: dict[Origin, deque[Request]] = {}
        self._in_memory = 0
        # A list per origin: a request released from one queue may be parked again for the
        # same origin while that queue is being read (its rules expired meanwhile), and a
        # restored JOBDIR may hold more than one queue of an origin.
        self._disk: dict[Origin, list[_DiskQueue]] = {}
        self._write_failed = False

    def __len__(self) -> int:
        return self._in_memory + sum(len(q) for queues in self._disk.values() for q in queues)

    def origins(self) -> list[Origin]:
        return list(dict.fromkeys([*self._memory, *self._disk]))

    def restore(self) -> int:
        """Open the queues an earlier run of this JOBDIR left, each on its own (a damaged one
        gives back what it still holds, and costs no other); return how many requests wait."""
        if self._directory is None or not self._directory.is_dir():
            return 0
        try:
            folders = sorted(self._directory.iterdir())
        except OSError as exc:
            logger.warning("Cannot read the requests parked in %s: %s", self._directory, exc)
            return 0
        for folder in folders:
            origin = origin_of(unquote(folder.name.rpartition("#")[0]))
            if origin is not None and folder.is_dir():
                try:
                    self._restore_queue(origin, folder)
                except OSError as exc:  # a folder that cannot be listed
                    _Reading(origin, folder, str(exc)).report(self._stats)
        return len(self)

    def _restore_queue(self, origin: Origin, folder: Path) -> None:
        info = _read_info(folder)
        if info is None:
            first = _first_chunk(folder)
            if first is None:  # nothing was ever written there
                shutil.rmtree(folder, ignore_errors=True)
            else:
                self._salvage(_Reading(origin, folder, "no readable info.json"), None, first, 0)
            return
        size, chunk, offset = info
        reason = _check(folder, size, chunk, offset)
        if reason:
            self._salvage(_Reading(origin, folder, reason), size, chunk, offset)
            return
        try:
            queue = _DiskQueue(folder)
        except OSError as exc:
            self._salvage(_Reading(origin, folder, str(exc)), size, chunk, offset)
            return
        if len(queue):
            self._disk.setdefault(origin, []).append(queue)
        else:
            queue.close()

    def _salvage(self, reading: _Reading, size: int | None, chunk: int, offset: int) -> None:
        """Park again what the damaged queue of *reading* still holds (*size*: how many it
        should, if known), count the rest, and remove it so that the next run finds it no
        more."""
        read = 0
        try:
            for file, length in islice(_records(reading.folder, chunk, offset), size):
                read += 1
                request = self._load(file.read(length), reading)
                if request is not None:
                    self.park(reading.origin, request)
        except (_DamagedFile, OSError) as exc:
            if size is None:  # how many followed is unknown: at least the one cut short
                reading.reason += f"; {exc}"
                reading.lost = 1
        if size is not None:
            reading.lost = size - read
        shutil.rmtree(reading.folder, ignore_errors=True)
        reading.report(self._stats)

    def _load(self, data: bytes, reading: _Reading) -> Request | None:
        try:
            request = self._codec.load(data)
        except MalformedRequest as exc:
            if not reading.malformed:
                reading.reason = reading.reason or f"a malformed entry: {exc}"
            reading.malformed += 1
            return None
        reading.kept += 1
        return request

    def park(self, origin: Origin, request: Request) -> None:
        """Keep *request* for *origin*: on disk when it must (JOBDIR, past the memory limit)
        and can, in memory otherwise. Never raises."""
        if self._durable or self._in_memory >= self._memory_limit:
            data = self._codec.dump(request)
            if data is None:
                # As Scrapy's scheduler does: keep it in memory rather than lose it.
                self._stats.inc_value(ROBOTSTXT_PARKED_UNSERIALIZABLE)
            elif self._write(origin, data):
                self._stats.inc_value(ROBOTSTXT_PARKED_DISK)
                return
        self._memory.setdefault(origin, deque()).append(request)
        self._in_memory += 1
        if self._counted:
            self._stats.inc_value(ROBOTSTXT_PARKED_MEMORY)

    def _write(self, origin: Origin, data: bytes) -> bool:
        queue = None
        try:
            queue = self._disk_queue(origin)
            queue.push(data)
        except OSError as exc:  # a disk full, a folder that cannot be made
            if queue is not None:
                queue.writable = False
            self._disk_failed(exc)
            return False
        return True

    def _disk_failed(self, exc: OSError) -> None:
        self._stats.inc_value(ROBOTSTXT_PARKED_DISK_ERRORS)
        if self._write_failed:
            return  # once: a disk full would fail every request parked after
        self._write_failed = True
        logger.warning(
            "Cannot write parked requests to %s (%s): they wait in memory instead%s",
            self._directory or "a temporary directory",
            exc,
            " (and are lost if the crawl stops before their release)" if self._durable else "",
        )

    def release(self, origin: Origin) -> Iterator[Request]:
        """Take every request parked for *origin*, one at a time, so that a large number of
        them never sits in memory at once. An entry that cannot be read is counted and
        skipped; its neighbours are not."""
        memory = self._memory.pop(origin, None) or deque()
        queues = self._disk.pop(origin, [])
        try:
            while memory:
                request = memory.popleft()
                self._in_memory -= 1
                yield request
            while queues:
                yield from self._drain(origin, queues.pop(0))
        finally:
            # A reader that stopped early (its release failed) leaves the rest parked, to be
            # released again, rather than dropped with this generator.
            if memory:
                self._memory.setdefault(origin, deque()).extendleft(reversed(memory))
            if queues:
                self._disk.setdefault(origin, []).extend(queues)

    def _drain(self, origin: Origin, queue: _DiskQueue) -> Iterator[Request]:
        reading = _Reading(origin, Path(queue.path))
        try:
            while (data := self._pop(queue, reading)) is not None:
                request = self._load(data, reading)
                if request is not None:
                    yield request
        finally:
            self._close(queue)
            if reading.lost:  # what is left cannot be read: the next run would fail there too
                shutil.rmtree(reading.folder, ignore_errors=True)
            reading.report(self._stats)

    def _pop(self, queue: _DiskQueue, reading: _Reading) -> bytes | None:
        """The next entry of *queue*; None at its end, or where its files end early (the rest
        counted as lost)."""
        try:
            data = queue.pop()
        except (OSError, struct.error) as exc:
            data, error = None, str(exc)
        else:
            error = "its files end early"
        if data is None and len(queue):
            reading.reason = reading.reason or error
            reading.lost = len(queue)
        return data

    def close(self) -> int:
        """Close the queues; return how many requests are lost: all of them without JOBDIR,
        only those that could not be written with it."""
        lost = self._in_memory
        self._memory.clear()
        self._in_memory = 0
        for queue in (q for queues in self._disk.values() for q in queues):
            if not self._durable:
                lost += len(queue)
            self._close(queue)
        self._disk.clear()
        if not self._durable and self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
        return lost

    def _close(self, queue: _DiskQueue) -> None:
        try:
            queue.close()
        except OSError as exc:
            # Its requests are in its chunk files: the next run reads them from there.
            self._stats.inc_value(ROBOTSTXT_PARKED_DISK_ERRORS)
            if self._durable:
                logger.warning(
                    "Cannot save the state of the parked queue %s (%s): the next run "
                    "recovers its requests from its files",
                    queue.path,
                    exc,
                )

    def _disk_queue(self, origin: Origin) -> _DiskQueue:
        queues = self._disk.get(origin)
        if queues and queues[-1].writable:
            return queues[-1]
        if self._directory is None:
            self._directory = Path(tempfile.mkdtemp(prefix="robotstxt-parked-"))
        # "#" never appears in a quoted name: it separates the origin from a suffix that keeps
        # this queue apart from one of the same origin still being read.
        name = f"{quote(str(origin), safe='')}#{secrets.token_hex(4)}"
        queue = _DiskQueue(self._directory / name)
        self._disk.setdefault(origin, []).append(queue)
        return queue
