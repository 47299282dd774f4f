"""What a robots.txt fetch result means for its origin (RFC 9309 §2.3.1, Google's spec).

| result                               | outcome                                                |
|--------------------------------------|--------------------------------------------------------|
| 2xx                                  | RULES: the body, parsed                                |
| 3xx with a Location                  | UNKNOWN, `location` set: fetched again, at most 5 hops |
| 3xx without a Location               | ALLOW_ALL                                              |
| 4xx but 429                          | ALLOW_ALL: the body is never read                      |
| 429, 5xx, other codes, network error | UNAVAILABLE: complete disallow, retry later            |
| a body cut short by the network      | UNAVAILABLE                                            |
| a body stopped at the 500 KiB limit  | RULES from its first 500 KiB                           |
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass
from typing import NamedTuple

from scrapy_robotsmeta.robotstxt import MAX_BYTES, RobotsTxt
from scrapy_robotsmeta.robotstxt.status import Status
from scrapy_robotsmeta.usage.tdmrep import TdmFile

MAX_REDIRECTS = 5

_MAX_AGE = re.compile(rb"(?:^|[,\s])max-age\s*=\s*\"?(\d+)", re.IGNORECASE)


class Hop(NamedTuple):
    """One request of a robots.txt fetch (robots.txt itself, then each redirect target) and
    what it got: an HTTP status, or the error that stood for one. A named tuple: every origin
    read back from its record makes its hops again."""

    url: str
    status: int | None = None
    #: Why no response came: a network error's name and message, or ``"ignored"`` when a
    #: downloader middleware dropped the request (IgnoreRequest).
    error: str | None = None

    @property
    def answer(self) -> str:
        if self.status is not None:
            return str(self.status)
        return "ignored" if self.error == IGNORED else f"failed ({self.error})"

    def __str__(self) -> str:
        return f"{self.url} {self.answer}"


IGNORED = "ignored"


class Fetch(NamedTuple):
    """What evidence records of the fetch whose answer is in force."""

    #: When it ended, in seconds since the epoch.
    at: float
    #: The URL that gave the answer: robots.txt, or the last redirect target.
    url: str
    #: Its HTTP status; None when no response decided (a redirect limit, an ignored request).
    status: int | None
    #: The SHA-256 (hex) of the bytes the rules were read from: the body after content
    #: decoding, at most MAX_BYTES of it; None when no body was read (allow-all).
    sha256: str | None


@dataclass(frozen=True)
class Outcome:
    #: RULES, ALLOW_ALL or UNAVAILABLE; UNKNOWN for a redirect, which says nothing yet.
    kind: Status
    reason: str
    rules: RobotsTxt | None = None
    max_age: float | None = None
    #: Where a redirect sends the fetch (RFC 9309 §2.3.1.2); None for any other answer.
    location: str | None = None
    #: The part of a 2xx body that was parsed, for a storage that shares it between processes.
    body: bytes | None = None
    #: The requests of the fetch that ended here, in order (set by the fetcher).
    hops: tuple[Hop, ...] = ()
    #: Set by :func:`stamped` when the crawl keeps evidence.
    fetched: Fetch | None = None
    #: The origin's tdmrep.json, fetched beside robots.txt; None when TDMRep is not consulted.
    tdmrep: TdmFile | None = None


ALLOW_ALL_RULES = RobotsTxt.parse(b"")


def max_age(cache_control: bytes | None) -> float | None:
    """The ``max-age`` of a Cache-Control header, in seconds (RFC 9111 §5.2.2.1)."""
    if not cache_control:
        return None
    match = _MAX_AGE.search(cache_control)
    return float(match.group(1)) if match else None


def allow_all(reason: str) -> Outcome:
    return Outcome(Status.ALLOW_ALL, reason, ALLOW_ALL_RULES)


def unavailable(reason: str) -> Outcome:
    return Outcome(Status.UNAVAILABLE, reason)


def is_unavailable_status(status: int) -> bool:
    """RFC 9309 §2.3.1.4: server errors (and, as Google reads it, 429) mean unreachable."""
    return status >= 500 or status == 429 or status < 200


def from_response(
    status: int,
    body: bytes,
    *,
    location: bytes | None = None,
    cache_control: bytes | None = None,
    truncated: bool = False,
    stopped: bool = False,
) -> Outcome:
    """*truncated*: the network cut the body short (unavailable: what is missing is unknown);
    *stopped*: the download was stopped at the size limit on purpose (its first bytes are the
    rules, but a stop that left nothing to read is no answer)."""
    reason = f"HTTP {status}"
    if truncated:
        return unavailable(f"{reason} with a truncated body")
    if stopped and not body:
        return unavailable(f"{reason}, stopped at the size limit with no content decoded")
    if 200 <= status < 300:
        rules = RobotsTxt.parse(body)
        return Outcome(Status.RULES, reason, rules, max_age(cache_control), body=body[:MAX_BYTES])
    if 300 <= status < 400:
        if not location:
            return allow_all(f"{reason} without a Location header")
        return Outcome(Status.UNKNOWN, reason, location=location.decode("latin-1"))
    if is_unavailable_status(status):
        return unavailable(reason)
    return allow_all(reason)


def stamped(outcome: Outcome, at: float) -> Outcome:
    """*outcome* (its hops set) with the :class:`Fetch` evidence records, fetched *at*. An
    unavailable outcome puts nothing in force: it gets none."""
    if outcome.kind is Status.UNAVAILABLE:
        return outcome
    last = outcome.hops[-1] if outcome.hops else None
    url = last.url if last is not None else ""
    status = last.status if last is not None else None
    digest = None if outcome.body is None else hashlib.sha256(outcome.body).hexdigest()
    return dataclasses.replace(outcome, fetched=Fetch(at, url, status, digest))


def from_exception(exc: BaseException) -> Outcome:
    return unavailable(f"{type(exc).__name__}: {exc}".rstrip(": "))
