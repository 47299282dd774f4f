"""The W3C Text and Data Mining Reservation Protocol (TDMRep, Community Group final report).

A site states whether it reserves its rights of text and data mining in three places, each
read here without Scrapy:

- the origin's ``/.well-known/tdmrep.json``: a JSON array of rules, each an object with a
  ``location`` (a path pattern: ``*`` matches any characters, a final ``$`` anchors the end, as
  in robots.txt), a ``tdm-reservation`` (1: reserved, 0: not reserved) and an optional
  ``tdm-policy`` (the URL of a policy). The *first* rule in the array whose location matches the
  URL's path applies (not the longest one); when none matches, nothing is stated;
- the response headers ``tdm-reservation`` and ``tdm-policy``;
- the HTML metas ``<meta name="tdm-reservation">`` and ``<meta name="tdm-policy">``.

A header supersedes the file, a meta supersedes both, and a value that is absent never resets
one stated before: a page's meta ``0`` beats its file's ``1``. A reservation other than 0 or 1
counts as no value at all. A missing file means the origin does not use the protocol.

Reading never raises: a file that is not what the protocol says is :data:`MALFORMED` (with the
reason), and the parts of a valid file that cannot apply (a rule without a location) are named
in :attr:`TdmFile.ignored`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from scrapy_robotsmeta.robotstxt import path_pattern_matches, url_path
from scrapy_robotsmeta.usage.preferences import TDMREP_NOT_CONSULTED, Statement, shown

#: The well-known path of the file, relative to the origin.
WELL_KNOWN_PATH = "/.well-known/tdmrep.json"

#: The uses a reservation speaks to. Text and data mining is any automated analysis of content
#: to draw information from it (Directive (EU) 2019/790, Art. 2(2)): training a model on it,
#: and feeding it to a model that draws its answers from it. Search indexing is left out: sites
#: state it in robots.txt, and reading a reservation as "not in search" would take publishers'
#: pages out of search crawls that the protocol never meant to concern.
TDM_USES = ("ai_train", "ai_train_images", "ai_input", "ai_use")

# What an item (and usage_for) says of the file for a response's URL.
#: TDMRep was not consulted for this crawl (its setting, or no purpose it speaks to).
NOT_CONSULTED: str = TDMREP_NOT_CONSULTED["tdm_file"]
#: The file was read, and its rules apply (or none matched).
READ = "read"
#: The origin has no file (4xx): it does not use the protocol's file.
ABSENT = "absent"
#: The file could not be fetched (5xx, 429, a network error, a cut body).
UNREADABLE = "unreadable"
#: The file came back but is not a JSON array of rules: counted as no file (soft-404 pages).
MALFORMED = "malformed"
FILE_STATUSES = (NOT_CONSULTED, READ, ABSENT, UNREADABLE, MALFORMED)

HEADER_RESERVATION = b"tdm-reservation"
HEADER_POLICY = b"tdm-policy"
META_NAMES = ("tdm-reservation", "tdm-policy")

_RESERVATIONS = {"0": False, "1": True}


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of a tdmrep.json file, as written."""

    #: Its position in the file's array, from 1.
    index: int
    location: str
    #: True (1), False (0), or None for a value other than 0 and 1.
    reserved: bool | None
    policy: str | None = None

    @property
    def source(self) -> str:
        return f"tdmrep.json rule {self.index} (location {self.location})"

    def to_plain(self) -> list[Any]:
        return [self.index, self.location, self.reserved, self.policy]


@dataclass(frozen=True, slots=True)
class TdmFile:
    """What an origin's tdmrep.json says, as its state keeps it."""

    status: str
    rules: tuple[Rule, ...] = ()
    #: Why it is unreadable or malformed (``HTTP 503``, ``not a JSON array``).
    reason: str = ""
    #: The parts of the file that state nothing, and why (for the log).
    ignored: tuple[str, ...] = ()
    # The reading of each rule that matched a URL, by its index (0: none matched): every URL a
    # rule matches reads the same, and a crawl reads the file for each of its requests.
    _readings: dict[int, TdmReading] = field(default_factory=dict, compare=False, repr=False)

    def reading_for(self, url: str) -> TdmReading:
        """What the file says of *url*: its first matching rule."""
        rule = self.rule_for(url)
        index = 0 if rule is None else rule.index
        reading = self._readings.get(index)
        if reading is None:
            reading = self._readings[index] = _rule_reading(self.status, rule)
        return reading

    def rule_for(self, url: str) -> Rule | None:
        """The first rule, in file order, whose location matches *url*'s path and query."""
        if not self.rules:
            return None
        path = url_path(url)
        return next((r for r in self.rules if path_pattern_matches(r.location, path)), None)

    def to_plain(self) -> list[Any]:
        """Plain JSON data (for a snapshot), read back by :func:`file_from_plain`."""
        return [self.status, self.reason, [rule.to_plain() for rule in self.rules]]


def file_from_plain(plain: list[Any]) -> TdmFile:
    status, reason, rules = plain
    return TdmFile(status, tuple(Rule(*rule) for rule in rules), reason)


def valid_plain(value: object) -> bool:
    """Whether *value* (decoded JSON, from another process) is a :meth:`TdmFile.to_plain`."""
    if not (isinstance(value, list) and len(value) == 3):
        return False
    status, reason, rules = value
    return (
        status in FILE_STATUSES
        and isinstance(reason, str)
        and isinstance(rules, list)
        and all(map(_valid_plain_rule, rules))
    )


def _valid_plain_rule(rule: object) -> bool:
    return (
        isinstance(rule, list)
        and len(rule) == 4
        and isinstance(rule[0], int)
        and isinstance(rule[1], str)
        and rule[2] in (True, False, None)
        and (rule[3] is None or isinstance(rule[3], str))
    )


def absent(reason: str) -> TdmFile:
    return TdmFile(ABSENT, reason=reason)


def unreadable(reason: str) -> TdmFile:
    return TdmFile(UNREADABLE, reason=reason)


def parse_file(body: bytes) -> TdmFile:
    """The rules of a tdmrep.json body (a 2xx answer); MALFORMED when it is not a JSON array."""
    try:
        # RFC 8259 §8.1: JSON is UTF-8; a byte order mark may be ignored.
        data = json.loads(body.decode("utf-8").removeprefix("\ufeff"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return TdmFile(MALFORMED, reason=f"not JSON ({shown(str(exc))})")
    if not isinstance(data, list):
        return TdmFile(MALFORMED, reason=f"not a JSON array but a {type(data).__name__}")
    rules: list[Rule] = []
    ignored: list[str] = []
    for index, entry in enumerate(data, 1):
        rule = _rule(index, entry, ignored)
        if rule is not None:
            rules.append(rule)
    return TdmFile(READ, tuple(rules), ignored=tuple(ignored))


def _rule(index: int, entry: object, ignored: list[str]) -> Rule | None:
    """Rule *index* of a file; None (and why, in *ignored*) when it cannot match anything."""
    if not isinstance(entry, dict):
        ignored.append(f"tdmrep.json rule {index}: not an object")
        return None
    location = entry.get("location")
    if not isinstance(location, str) or not location.startswith("/"):
        ignored.append(f"tdmrep.json rule {index}: no location path starting with /")
        return None
    value = entry.get("tdm-reservation")
    # JSON true is no number, though Python counts it equal to 1.
    reserved = {0: False, 1: True}.get(value) if type(value) is int else None
    if reserved is None:
        ignored.append(f"tdmrep.json rule {index}: tdm-reservation {value!r} is not 0 or 1")
    policy = entry.get("tdm-policy")
    if policy is not None and not isinstance(policy, str):
        ignored.append(f"tdmrep.json rule {index}: tdm-policy is not a string")
        policy = None
    return Rule(index, location, reserved, policy)


@dataclass(frozen=True, slots=True)
class TdmReading:
    """What TDMRep says of one response, after the protocol's precedence."""

    #: What the origin's file is (see :data:`!FILE_STATUSES`).
    file: str = NOT_CONSULTED
    #: True: rights reserved; False: not reserved; None: nothing stated (or not consulted).
    reserved: bool | None = None
    policy: str | None = None
    #: Where the reservation was read (a file rule, a header, a meta), "" when unstated.
    source: str = ""
    policy_source: str = ""
    # statements(), made at the first call: a file rule's reading serves every page it covers.
    _statements: tuple[Statement, ...] | None = field(default=None, compare=False, repr=False)

    @property
    def unknown(self) -> bool:
        """The file could not be read and the page states nothing: the reservation is unknown."""
        return self.file == UNREADABLE and self.reserved is None

    def statements(self) -> tuple[Statement, ...]:
        """The usage statements of the reservation: refusals (1) or permissions (0)."""
        if self.reserved is None:
            return ()
        statements = self._statements
        if statements is None:
            statements = tuple(Statement(use, not self.reserved, self.source) for use in TDM_USES)
            # A cache, no part of the reading's value: the reading stays frozen for its users.
            object.__setattr__(self, "_statements", statements)
        return statements

    def to_dict(self) -> dict[str, Any]:
        """The item keys: the reservation, its policy, and what the file is."""
        return {
            "tdm_reservation": self.reserved,
            "tdm_policy": self.policy if self.reserved else None,
            "tdm_file": self.file,
        }

    def then(
        self, reserved: bool | None, source: str, policy: str | None, policy_source: str
    ) -> TdmReading:
        """This reading superseded by a later source's values: an absent one changes nothing."""
        if reserved is None and policy is None:
            return self
        return TdmReading(
            self.file,
            self.reserved if reserved is None else reserved,
            self.policy if policy is None else policy,
            self.source if reserved is None else source,
            self.policy_source if policy is None else policy_source,
        )


NOT_CONSULTED_READING = TdmReading()


def file_reading(tdm_file: TdmFile | None, url: str) -> TdmReading:
    """What *tdm_file* (None: not consulted) says of *url*: its first matching rule."""
    return NOT_CONSULTED_READING if tdm_file is None else tdm_file.reading_for(url)


def _rule_reading(status: str, rule: Rule | None) -> TdmReading:
    """What a file of *status* says by *rule*, None when no rule matched."""
    reading = TdmReading(status)
    if rule is None:
        return reading
    return reading.then(rule.reserved, rule.source, rule.policy, rule.source)


def page_reading(
    base: TdmReading,
    headers: tuple[str | None, str | None],
    metas: tuple[str | None, str | None],
) -> TdmReading:
    """*base* (the file's reading) superseded by the response's headers, then its metas: each a
    (tdm-reservation, tdm-policy) pair of values, None when absent."""
    reading = base
    for kind, (reservation, written_policy) in (("header", headers), ("meta", metas)):
        if reservation is None and not written_policy:  # most pages state neither
            continue
        reserved = _RESERVATIONS.get(reservation.strip()) if reservation is not None else None
        policy = written_policy.strip() if written_policy else None
        reading = reading.then(
            reserved,
            f"{kind} tdm-reservation: {shown(reservation or '')}",
            policy,
            f"{kind} tdm-policy: {shown(policy or '')}",
        )
    return reading


def value_ignored(kind: str, reservation: str | None) -> str | None:
    """Why a header's or meta's tdm-reservation states nothing, or None when it states 0 or 1
    (or is absent)."""
    if reservation is None or reservation.strip() in _RESERVATIONS:
        return None
    return f"{kind} tdm-reservation: {shown(reservation)!r} is not 0 or 1"
