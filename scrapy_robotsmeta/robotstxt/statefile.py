"""The second tier of origin states: one SQLite file of the records memory let go.

Memory holds the origins in use and the records of others, bounded in bytes
(:class:`~scrapy_robotsmeta.robotstxt.cache.OriginCache`); every record is written here as it is
made, and an origin whose record left memory is read back from here when the crawl meets it
again, rather than fetched again. The file sits in ``JOBDIR`` when there is one
(``robotstxt-states.sqlite``, beside the parked requests of ``robotstxt-parked/``), and every
state still live in memory is written to it when the crawl closes, so a resumed crawl knows
every robots.txt fetched before the pause; without ``JOBDIR`` it is a temporary file, removed
when the crawl closes.

A row is one origin's record (``robotstxt/record.py``: its state and parsed rules, a few
hundred bytes for most files), keyed by a 64-bit hash of the origin so that a look-up is one
search of one B-tree; the row also holds the origin, which a read checks. It is a cache:
writes are not synced to disk (``synchronous = OFF``), and a crash loses the states that were
still live in memory only; those origins are fetched again.

Nothing a failure leaves breaks the next run of a job. Each write is one transaction, in the
write-ahead log: a disk that fills up, or a folder that turns read-only, fails it whole (logged,
counted), and the records written before stay readable. A log the close could not fold in and
remove is read back by the next open. A file that is no database, or a damaged one, is replaced
by an empty one at open; a damaged record in a sound file fails its own checksum
(``robotstxt/record.py``) and costs that origin alone a fetch.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import struct
import tempfile
from pathlib import Path

from scrapy_robotsmeta.robotstxt.origin import Origin

logger = logging.getLogger(__name__)

FILENAME = "robotstxt-states.sqlite"
# The shape of the file's table; a file of another shape (an older JOBDIR) is emptied.
_SCHEMA = 2
# The files SQLite may keep beside the database (its write-ahead log, its index).
_AUX = ("-wal", "-shm")


# SQLite's integer keys are signed 64-bit.
_SIGNED_64 = struct.Struct(">q")


def _key(origin: str) -> int:
    digest = hashlib.blake2b(origin.encode(), digest_size=8).digest()
    key: int = _SIGNED_64.unpack(digest)[0]
    return key


def open_state_file(directory: str | Path | None) -> StateFile | None:
    """The second tier of a crawl's cache (in *directory*, its ``JOBDIR``, when it has one),
    or None when it cannot be had: logged, the crawl then fetches again an origin that left
    memory, if it meets it again."""
    try:
        return StateFile(directory)
    except (OSError, sqlite3.Error) as exc:  # a read-only JOBDIR, a file in its place…
        logger.warning(
            "Cannot keep robots.txt states on disk (%s): origins that leave memory "
            "will be fetched again if the crawl meets them again",
            exc,
        )
        return None


class StateFile:
    """Origin → the last record written for it; *directory* None: a temporary file."""

    def __init__(self, directory: str | Path | None) -> None:
        #: Whether the file outlives the crawl (a job's), so that what is live in memory at
        #: its close is worth writing to it.
        self.durable = directory is not None
        self._temporary = None
        if directory is None:
            self._temporary = tempfile.TemporaryDirectory(prefix="robotstxt-states-")
            directory = self._temporary.name
        self.path = Path(directory) / FILENAME
        #: Reads and writes that failed (logged once).
        self.errors = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = self._open()
        except sqlite3.OperationalError:  # cannot open, read-only…: not the file's fault
            raise
        except sqlite3.DatabaseError as exc:  # not a database, or a damaged one
            # A cache: starting empty costs its origins a fetch each, where keeping it would
            # leave every later run of the job without a disk tier.
            logger.warning("Damaged robots.txt states in %s (%s): starting anew", self.path, exc)
            for path in (self.path, *(self.path.with_name(self.path.name + end) for end in _AUX)):
                path.unlink(missing_ok=True)
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path)
        try:
            # The file is this crawl's alone: holding its lock from the first read to the
            # close spares each read taking and releasing it, and checking that no one else
            # wrote in between (a third of a look-up's cost at a million origins).
            # Before WAL mode is entered, so that its index stays in this process's memory
            # (no -shm file).
            db.execute("PRAGMA locking_mode = EXCLUSIVE")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = OFF")
            (schema,) = db.execute("PRAGMA user_version").fetchone()
            if schema != _SCHEMA:
                with db:
                    db.execute("DROP TABLE IF EXISTS states")
                    db.execute(
                        "CREATE TABLE states"
                        " (key INTEGER PRIMARY KEY, origin TEXT NOT NULL, record BLOB NOT NULL)"
                    )
                    db.execute(f"PRAGMA user_version = {_SCHEMA}")
        except sqlite3.Error:
            db.close()
            raise
        return db

    def __len__(self) -> int:
        (count,) = self._db.execute("SELECT count(*) FROM states").fetchone()
        return int(count)

    def put(self, records: list[tuple[Origin, bytes]]) -> None:
        """Write *records* (in one transaction). A failed write (disk full…) is logged and
        counted: those origins are fetched again if the crawl meets them again."""
        rows = []
        for origin, record in records:
            name = str(origin)
            rows.append((_key(name), name, record))
        try:
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO states VALUES (?, ?, ?)", rows)
        except sqlite3.Error as exc:
            self._failed("write", exc)

    def get(self, origin: Origin) -> bytes | None:
        """The record last written for *origin*, or None (also when the file cannot be read:
        logged and counted, the origin is fetched again)."""
        name = str(origin)
        try:
            row = self._db.execute(
                "SELECT origin, record FROM states WHERE key = ?", (_key(name),)
            ).fetchone()
        except sqlite3.Error as exc:
            self._failed("read", exc)
            return None
        # Two origins with one hash (about one chance in 30 million among a million origins)
        # share a row: the one written last has it, the other is fetched again.
        if row is None or row[0] != name:
            return None
        return bytes(row[1])

    def _failed(self, what: str, exc: sqlite3.Error) -> None:
        if not self.errors:
            logger.warning(
                "Cannot %s robots.txt states in %s (%s): origins that leave memory may be "
                "fetched again",
                what,
                self.path,
                exc,
            )
        self.errors += 1

    def close(self) -> None:
        self._db.close()
        if self._temporary is not None:
            self._temporary.cleanup()
