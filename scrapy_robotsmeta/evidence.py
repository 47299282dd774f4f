"""Evidence of what was in force, kept when ``ROBOTSTXT_EVIDENCE_FILE`` names a file.

The robots.txt part appends one record per fetch in force to that file (JSON Lines, see
:mod:`scrapy_robotsmeta.robotstxt.evidence`), the first time this process lets a request
through by it: each process's file holds the record of every item it exports, and the same
fetch recorded by two processes (a fleet, a resumed job) has the same id in both. Each
request it lets through carries a reference to its record; the page-level part puts that
reference, and the statements that set each usage key, in the item.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from scrapy_robotsmeta.keys import (
    EVIDENCE_META_KEY,
    ROBOTSTXT_EVIDENCE_RECORDS,
    ROBOTSTXT_EVIDENCE_WRITE_ERRORS,
)
from scrapy_robotsmeta.robotstxt.evidence import ROBOTS_TXT, origin_record, reference
from scrapy_robotsmeta.startup import refuse

if TYPE_CHECKING:
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from scrapy_robotsmeta.defaults import PackageSettings
    from scrapy_robotsmeta.robotstxt import Verdict
    from scrapy_robotsmeta.robotstxt.origin import Origin
    from scrapy_robotsmeta.robotstxt.state import OriginState
    from scrapy_robotsmeta.usage.preferences import Preferences

logger = logging.getLogger(__name__)

SETTING = "ROBOTSTXT_EVIDENCE_FILE"
#: The item field's key that holds an item's evidence.
ITEM_KEY = "evidence"


def evidence_file(settings: PackageSettings) -> str | None:
    """The file the crawl's evidence goes to; None when it keeps none."""
    path = settings.get(SETTING)
    return str(path) if path else None


class EvidenceLog:
    """Writes the records of one process and answers each allowed request's reference."""

    def __init__(self, path: str, stats: StatsCollector) -> None:
        self.path, self.stats = path, stats
        #: The id of each fetch's record written by this process, by file, origin and time.
        self._written: dict[tuple[str, Origin, float], str] = {}
        self._failed = False
        try:
            with open(path, "a", encoding="utf-8"):
                pass
        except OSError as exc:
            refuse(
                f"{SETTING} = {path!r} cannot be opened for appending ({exc}): name a file in "
                f"a writable directory, or leave {SETTING} unset to keep no evidence"
            )

    @classmethod
    def from_settings(cls, settings: PackageSettings, stats: StatsCollector) -> EvidenceLog | None:
        path = evidence_file(settings)
        return None if path is None else cls(path, stats)

    def references(self, state: OriginState, verdict: Verdict) -> dict[str, Any]:
        """The references of a request *state* let through by *verdict*, by kind of file;
        each record they name is written first, once."""
        fetched = state.fetched
        if fetched is None:  # a state fetched without evidence (an earlier run, or process)
            return {ROBOTS_TXT: reference(None, verdict)}
        key = (ROBOTS_TXT, state.origin, fetched.at)
        record = self._written.get(key)
        if record is None:
            written = origin_record(state)
            assert written is not None
            record = self._written[key] = written["record"]
            self._write(written)
        return {ROBOTS_TXT: reference(record, verdict)}

    def _write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        try:
            with open(self.path, "a", encoding="utf-8") as file:
                file.write(line)
        except OSError as exc:
            self.stats.inc_value(ROBOTSTXT_EVIDENCE_WRITE_ERRORS)
            if not self._failed:
                self._failed = True
                logger.error(
                    "Cannot write the evidence of %s to %s (%s): items will name records "
                    "this file lacks",
                    record["origin"],
                    self.path,
                    exc,
                )
            return
        self.stats.inc_value(ROBOTSTXT_EVIDENCE_RECORDS)


def item_evidence(response: Response, usage: Preferences) -> dict[str, Any]:
    """An item's evidence: by kind of file, the reference to the one its response was let
    through by (None for robots.txt when it was not checked), then each statement that set
    a usage key, with the value it gave to each key it speaks of, in the order read."""
    request = response.request
    references = request.meta.get(EVIDENCE_META_KEY) if request is not None else None
    sources: dict[str, dict[str, bool]] = {}
    for statement in usage.statements:
        sources.setdefault(statement.source, {})[statement.use] = statement.allowed
    return {
        ROBOTS_TXT: None,
        **(references or {}),
        "usage": [{"source": source, "uses": uses} for source, uses in sources.items()],
    }
