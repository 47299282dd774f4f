"""The evidence of what robots.txt said when a URL was let through, as plain data.

Two shapes, so that an export stays small: an origin's **record**, one per fetch whose answer
was in force (which file, fetched from where and when, its HTTP status, the SHA-256 of the
bytes its rules were read from), and an item's **reference** to it: the record's id, the
group that applied and the line that decided. A record's id is derived from what it records,
so every process of a fleet that writes the record of one fetch gives it the same id.

The ``file`` of a record names the kind of file it is the evidence of (``robots.txt``): an
item's evidence holds one reference per kind, so that another per-origin file fetched the same
way is recorded alike (:func:`fetch_record` with its own kind, a reference of its own).
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy_robotsmeta.robotstxt import Verdict
    from scrapy_robotsmeta.robotstxt.policy import Fetch
    from scrapy_robotsmeta.robotstxt.state import OriginState

#: The kind of file these records are the evidence of.
ROBOTS_TXT = "robots.txt"
# Hex digits of a record's id: 64 bits, no collision among the fetches of any crawl.
_ID_DIGITS = 16


def record_id(file: str, origin: str, fetched_at: float, sha256: str | None) -> str:
    """The id of the record of *origin*'s *file* fetched at *fetched_at*."""
    key = f"{file} {origin} {fetched_at!r} {sha256 or '-'}"
    return hashlib.sha256(key.encode()).hexdigest()[:_ID_DIGITS]


def fetch_record(
    file: str, origin: str, fetched: Fetch, policy: str, reason: str
) -> dict[str, Any]:
    """The record of a fetch of *origin*'s *file* whose answer is in force, read as
    *policy* for *reason*."""
    return {
        "record": record_id(file, origin, fetched.at, fetched.sha256),
        "file": file,
        "origin": origin,
        "url": fetched.url,
        "fetched_at": _utc(fetched.at),
        "status": fetched.status,
        "policy": policy,
        "reason": reason,
        "sha256": fetched.sha256,
    }


def origin_record(state: OriginState) -> dict[str, Any] | None:
    """The record of the robots.txt fetch in force for *state*; None when none is (nothing
    fetched yet, or fetched without evidence)."""
    fetched, kind = state.fetched, state.kind
    if fetched is None or kind is None:
        return None
    return fetch_record(ROBOTS_TXT, str(state.origin), fetched, kind.value, state.reason)


def reference(record: str | None, verdict: Verdict) -> dict[str, Any]:
    """What an item keeps of the robots.txt that let its URL through by *verdict*: the id of
    its *record* (None when there is none), the group that applied (its ``User-agent``
    values, space-separated) and the deciding rule's line and text (None when no rule
    matched, or no group applied)."""
    rule = verdict.rule
    return {
        "record": record,
        "group": None if verdict.agents is None else " ".join(verdict.agents),
        "line": None if rule is None else rule.line,
        "rule": None if rule is None else f"{rule.field}: {rule.path}",
    }


def _utc(seconds: float) -> str:
    """*seconds* since the epoch as an ISO 8601 UTC time, to the millisecond."""
    moment = datetime.fromtimestamp(seconds, timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
