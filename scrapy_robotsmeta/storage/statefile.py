"""The second tier of origin states: one SQLite file that holds the origins memory let go.

Memory holds the origins in use, bounded in bytes (:class:`OriginCache`); an origin pushed out
of it is written here, and read back from here when the crawl meets it again, rather than
fetched again. The file sits in ``JOBDIR`` when there is one (``robotstxt-states.sqlite``,
beside the parked requests of ``robotstxt-parked/``), and every state still in memory is written
to it when the crawl closes, so a resumed crawl knows every robots.txt fetched before the
pause; without ``JOBDIR`` it is a temporary file, removed when the crawl closes.

A record is the state's snapshot (JSON) and its parsed rules, pickled with the matchers they
built: reading an origin back costs a look-up and an unpickling, not a parse of its robots.txt.
Pickle is read only from this file, which the crawl itself wrote, as Scrapy's own ``JOBDIR``
request queues are.

It is a cache: writes are not synced to disk (``synchronous = OFF``), and a crash loses the
states that were still in memory only; those origins are fetched again.
"""

from __future__ import annotations

import json
import logging
import pickle
import sqlite3
import tempfile
from collections.abc import Iterable
from pathlib import Path

from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import ALLOW_ALL_RULES, Kind
from scrapy_robotsmeta.robotstxt.state import OriginState

logger = logging.getLogger(__name__)

FILENAME = "robotstxt-states.sqlite"


class StateFile:
    """Origin → the last state written for it; *directory* None: a temporary file."""

    def __init__(self, directory: str | Path | None) -> None:
        self._temporary = None
        if directory is None:
            self._temporary = tempfile.TemporaryDirectory(prefix="robotstxt-states-")
            directory = self._temporary.name
        self.path = Path(directory) / FILENAME
        #: Reads and writes that failed (logged once).
        self.errors = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path)
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = OFF")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS states"
            " (origin TEXT PRIMARY KEY, snapshot TEXT NOT NULL, rules BLOB)"
        )  # not WITHOUT ROWID: rows of kilobytes read three times faster from a rowid table

    def __len__(self) -> int:
        (count,) = self._db.execute("SELECT count(*) FROM states").fetchone()
        return int(count)

    def put(self, states: Iterable[OriginState]) -> None:
        """Write *states* (in one transaction). A failed write (disk full…) is logged and
        counted: those origins are fetched again if the crawl meets them again."""
        rows = [(str(s.origin), json.dumps(s.snapshot()), _dump_rules(s)) for s in states]
        try:
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO states VALUES (?, ?, ?)", rows)
        except sqlite3.Error as exc:
            self._failed("write", exc)

    def get(self, origin: Origin) -> OriginState | None:
        """The state last written for *origin*, or None (also when the file cannot be read:
        logged and counted, the origin is fetched again)."""
        try:
            row = self._db.execute(
                "SELECT snapshot, rules FROM states WHERE origin = ?", (str(origin),)
            ).fetchone()
        except sqlite3.Error as exc:
            self._failed("read", exc)
            return None
        if row is None:
            return None
        snapshot = json.loads(row[0])
        if not OriginState.adoptable(snapshot):
            return None
        state = OriginState(origin)
        rules = ALLOW_ALL_RULES if snapshot["kind"] == Kind.ALLOW_ALL.value else None
        if row[1] is not None:
            try:
                rules = pickle.loads(row[1])
            except Exception:  # written by another version whose classes changed shape
                logger.warning("Unreadable stored robots.txt of %s: fetching it again", origin)
                return None
        state.adopt(snapshot, rules)
        return state

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


def _dump_rules(state: OriginState) -> bytes | None:
    # Allow-all rules are one shared object, rebuilt from the snapshot's kind.
    if state.rules is None or state.kind is Kind.ALLOW_ALL:
        return None
    return pickle.dumps(state.rules, protocol=pickle.HIGHEST_PROTOCOL)
