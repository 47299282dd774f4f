"""Ways a queue of parked requests in JOBDIR gets damaged between two runs: a disk full, a
crash, a copy cut short, a hand. Each damages a queue folder and says how many of its requests
stay readable."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from scrapy_robotsmeta.parking import JOBDIR_FOLDER


def queue_folder(jobdir: Path, origin: str) -> Path:
    """The one queue folder of *origin* (``http://host:port``) in *jobdir*."""
    [folder] = (jobdir / JOBDIR_FOLDER).glob(f"{quote(origin, safe='')}#*")
    return folder


def record_ends(chunk: Path) -> list[int]:
    """Where each record of a queuelib chunk file ends (a 4-byte big-endian size, the bytes)."""
    data, ends, position = chunk.read_bytes(), [], 0
    while position < len(data):
        position += 4 + int.from_bytes(data[position : position + 4], "big")
        ends.append(position)
    return ends


def _half(folder: Path) -> tuple[Path, int, int]:
    """The chunk, how many records its first half holds whole, and where they end."""
    chunk = folder / "q00000"
    ends = record_ends(chunk)
    kept = len(ends) // 2
    return chunk, kept, ends[kept - 1]


def truncated(folder: Path) -> int:
    """Cut in the middle of a record, as a copy or a crash leaves a file."""
    chunk, kept, end = _half(folder)
    with chunk.open("r+b") as file:
        file.truncate(end + 6)
    return kept


def random_bytes(folder: Path) -> int:
    """Its second half overwritten with random bytes."""
    chunk, kept, end = _half(folder)
    data = chunk.read_bytes()
    noise = random.Random(9309).randbytes(len(data) - end)
    chunk.write_bytes(data[:end] + noise)
    return kept


def zeroed(folder: Path) -> int:
    """Zeros for its whole length, as some file systems leave a file after a crash."""
    chunk = folder / "q00000"
    chunk.write_bytes(bytes(chunk.stat().st_size))
    return 0


def _every_record(folder: Path) -> int:
    return len(record_ends(folder / "q00000"))


def no_info(folder: Path) -> int:
    """Its info.json gone."""
    (folder / "info.json").unlink()
    return _every_record(folder)


def garbled_info(folder: Path) -> int:
    """Its info.json cut short."""
    info = folder / "info.json"
    info.write_text(info.read_text()[:10])
    return _every_record(folder)


def empty_info(folder: Path) -> int:
    """Its info.json empty, as a disk full at close leaves it (opened, nothing written)."""
    (folder / "info.json").write_bytes(b"")
    return _every_record(folder)


DAMAGES: dict[str, Callable[[Path], int]] = {
    damage.__name__: damage
    for damage in (truncated, random_bytes, zeroed, no_info, garbled_info, empty_info)
}
