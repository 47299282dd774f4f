"""The robots.txt state of one origin, as a state machine driven by fetch outcomes and time.

Pure: no crawler, no reactor. Every method that depends on time takes ``now`` (seconds), so a
caller reads its clock once per decision and tests drive it with plain floats.

::

    UNKNOWN ──fetch──▶ FETCHING ──rules / 4xx / redirect limits──▶ READY ──expiry──▶ UNKNOWN
                          │                                          ▲
                          └──5xx, 429, network error──▶ OUTAGE ──────┘ (a retry succeeds)
                                                          │
                                                          └──deadline──▶ GIVEN_UP

The deadline is ``ROBOTSTXT_UNAVAILABLE_TIMEOUT`` after the outage began. A READY origin whose
rules expired keeps them while it is fetched again: RFC 9309 §2.4 allows the cached copy while
robots.txt is unreachable; expired rules decide nothing, so a refresh makes requests wait
exactly as a first fetch does.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from scrapy_robotsmeta.defaults import DEFAULTS, PackageSettings
from scrapy_robotsmeta.robotstxt import RobotsTxt
from scrapy_robotsmeta.robotstxt.explanation import Explanation
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import ALLOW_ALL_RULES, Fetch, Hop, Outcome
from scrapy_robotsmeta.robotstxt.status import Status
from scrapy_robotsmeta.usage.tdmrep import UNREADABLE, TdmFile, file_from_plain, valid_plain

# A server that asks for a robots.txt fetch before every request would make every request
# wait; below this many seconds, Cache-Control: max-age is raised to it.
MIN_EXPIRATION = 60.0
# Changes with the shape of OriginState.snapshot() and of the pickled rules a record keeps with
# it (3: groups keep their usage lines; 4: one compressed record per origin; 5: the fetch in
# force, for evidence; 6: the origin's tdmrep.json): a state written by another version of the
# package is not adopted.
SNAPSHOT_VERSION = 6


class Snapshot(NamedTuple):
    """An origin's state as plain data, without its parsed rules: the one declaration of its
    fields. A record keeps it as a tuple (in this order), a shared storage publishes it as a
    JSON object (by these names); a change of its fields changes SNAPSHOT_VERSION."""

    version: int
    kind: str | None
    reason: str
    #: The hops of each try, each as [url, status, error].
    tries: list[list[list[Any]]]
    expires_at: float
    given_up: bool
    down_since: float | None
    failures: int
    retry_at: float | None
    give_up_at: float | None
    #: The fetch whose answer is in force, as [at, url, status, sha256] (see policy.Fetch),
    #: when the crawl keeps evidence; None otherwise. Its time is the wall clock's, never
    #: moved to another process's clock.
    fetched: list[Any] | None
    # -- TDMRep ------------------------------------------------------------------------------
    #: The origin's tdmrep.json as TdmFile.to_plain() gives it; None when it was not fetched
    #: (TDMRep not consulted by the crawl that fetched the origin).
    tdmrep: list[Any] | None


SNAPSHOT_FIELDS = Snapshot._fields
# The keys of a snapshot that are times, in seconds by the clock of the process that wrote it
# (a shared storage moves them to its own clock and back: see shift_times).
SNAPSHOT_TIMES = ("expires_at", "down_since", "retry_at", "give_up_at")
# Two snapshots whose times differ by less than this say the same: a time moved to another
# clock and back differs from the original by a rounding error.
SAME_TIME = 0.001
# The statuses a state's rules come from, by value: a record's look-up, without the call
# Status(value) costs, that reads no other status as a kind.
_KINDS = {status.value: status for status in (Status.RULES, Status.ALLOW_ALL)}
_ALLOW_ALL = Status.ALLOW_ALL  # read as a global: an enum's attribute costs a descriptor call
# A named tuple made from a row checked to fit it (a record, a validated snapshot): the
# class's own _make() is a Python-level call.
_new = tuple.__new__


def has_own_rules(kind: Status | str | None) -> bool:
    """Whether a state of *kind* (a Status, or its value in a snapshot) has rules of its own,
    which its record and a shared storage carry: those of a 2xx body. Allow-all rules are one
    shared object, rebuilt from the kind alone."""
    return kind is Status.RULES or kind == Status.RULES.value


# A try never gets less than this, even right before the give-up deadline.
MIN_TRY_TIMEOUT = 0.1
# At most this many tries of an outage are kept in OriginState.tries: its latest tell enough.
MAX_TRIES = 32


@dataclass(frozen=True)
class Timing:
    """The settings that drive an origin's state through time, in seconds."""

    expiration: float = DEFAULTS["ROBOTSTXT_CACHE_EXPIRATION"]
    retry_delay: float = DEFAULTS["ROBOTSTXT_RETRY_DELAY"]
    retry_max_delay: float = DEFAULTS["ROBOTSTXT_RETRY_MAX_DELAY"]
    unavailable_timeout: float = DEFAULTS["ROBOTSTXT_UNAVAILABLE_TIMEOUT"]
    #: The crawl's DOWNLOAD_TIMEOUT, which the middleware passes; without one, only the
    #: give-up time bounds a try.
    download_timeout: float = math.inf

    @classmethod
    def from_settings(cls, settings: PackageSettings, download_timeout: float) -> Timing:
        """The crawl's timing: the package's settings, and Scrapy's DOWNLOAD_TIMEOUT."""
        return cls(
            expiration=settings.getfloat("ROBOTSTXT_CACHE_EXPIRATION"),
            retry_delay=settings.getfloat("ROBOTSTXT_RETRY_DELAY"),
            retry_max_delay=settings.getfloat("ROBOTSTXT_RETRY_MAX_DELAY"),
            unavailable_timeout=settings.getfloat("ROBOTSTXT_UNAVAILABLE_TIMEOUT"),
            download_timeout=download_timeout,
        )

    def retry_after(self, failures: int) -> float:
        """The wait before the next try, after *failures* tries failed in a row."""
        doublings = min(max(failures - 1, 0), 60)  # past that, the maximum applies anyway
        return min(self.retry_delay * (1 << doublings), self.retry_max_delay)


class Decision(enum.Enum):
    """What a request of the origin gets now: a question of time, which the origin's
    :class:`Status` does not answer alone (see :mod:`.status`)."""

    RULES = "rules"  # decide it by the rules
    DROP = "drop"  # the origin was given up
    WAIT = "wait"  # robots.txt is not known yet, or is being fetched again


class Change(enum.Enum):
    """What applying an outcome did, for the caller's logs, stats and timers."""

    READY = "ready"  # rules (or allow-all) apply: release the waiting requests
    RECOVERED = "recovered"  # READY after an outage
    KEPT_CACHED_COPY = "kept_cached_copy"  # unreachable on refresh: the old rules, a bit longer
    OUTAGE_STARTED = "outage_started"  # unreachable, nothing cached: wait for a retry
    STILL_DOWN = "still_down"  # another failed try of an outage
    IGNORED = "ignored"  # a try that ended after the origin was given up changes nothing


@dataclass(eq=False, slots=True)
class OriginState:
    """What is known of one origin's robots.txt.

    The fields are the machine's state; only its methods change them, so that each
    transition is in one place. Slots: a cache holds many of these.
    """

    origin: Origin
    rules: RobotsTxt | None = None
    #: What the rules came from: RULES (a 2xx body) or ALLOW_ALL (4xx, redirect limits…);
    #: None while there are none.
    kind: Status | None = None
    #: How the current rules (or the give-up) came about, for logs and `scrapy robots`.
    reason: str = ""
    #: The requests of each try of the last fetch; during an outage, of every try since it
    #: began (the latest MAX_TRIES), so that an explanation can tell the whole story.
    tries: list[tuple[Hop, ...]] = field(default_factory=list)
    expires_at: float = 0.0
    given_up: bool = False
    fetching: bool = False
    fetch_started: float = 0.0
    #: Since when robots.txt has been unreachable, with nothing cached; None when it is not.
    down_since: float | None = None
    failures: int = 0
    #: When the next try of an outage is due.
    retry_at: float | None = None
    #: When the outage is given up.
    give_up_at: float | None = None
    #: The fetch whose answer is in force, when the crawl keeps evidence: set with the rules
    #: it brought, and kept with them (a failed refresh that keeps them keeps it too).
    fetched: Fetch | None = None
    #: How many transitions this object went through: a cache that packed the state as it was
    #: at some count knows, at the same count, that the state did not change since.
    changes: int = 0
    #: The origin's tdmrep.json, fetched with robots.txt; None when TDMRep was not consulted.
    tdmrep: TdmFile | None = None

    # -- reading ---------------------------------------------------------------------------

    def decide(self, now: float) -> Decision:
        """What a request gets at *now*. Read ``rules`` only after this said RULES, with the
        same *now*: between two clock reads the rules could expire."""
        if now < self.expires_at:
            if self.rules is not None:
                return Decision.RULES
            if self.given_up:
                return Decision.DROP
        return Decision.WAIT

    def fetch_due(self, now: float) -> bool:
        """Whether a fetch should start now: requests wait, none is in flight, and no retry
        is scheduled for later."""
        if self.fetching or self.decide(now) is not Decision.WAIT:
            return False
        return self.retry_at is None or now >= self.retry_at

    def deadline_passed(self, now: float) -> bool:
        return self.give_up_at is not None and now >= self.give_up_at

    @property
    def status(self) -> Status:
        """What robots.txt is for the origin. Rules that expired still say what they said:
        whether a request waits for new ones is :meth:`decide`'s answer."""
        if self.given_up or (self.rules is None and self.down_since is not None):
            return Status.UNAVAILABLE
        if self.rules is None:
            return Status.UNKNOWN
        return Status.ALLOW_ALL if self.kind is Status.ALLOW_ALL else Status.RULES

    @property
    def fetched_before(self) -> bool:
        """Whether a fetch of the origin has ended before: the next one is a retry or a
        refresh."""
        return self.rules is not None or self.down_since is not None or self.given_up

    # -- transitions -----------------------------------------------------------------------

    def mark_fetching(self, now: float) -> None:
        """Mark a fetch as begun, before a shared storage is asked whether this process makes
        it: no other request starts one meanwhile."""
        self.changes += 1
        self.fetching = True
        self.fetch_started = now

    def start_fetch(self, now: float, timing: Timing) -> float:
        """Mark a fetch as started; return the timeout for each of its tries: in an outage no
        try may outlast the give-up deadline, or a hanging server would keep the crawl open
        after the origin was given up."""
        self.changes += 1
        self.fetching = True
        self.fetch_started = now
        self.retry_at = None
        if self.down_since is None:
            self.tries = []
        else:
            # A long outage with short retry delays must not grow the state (nor what a
            # shared storage publishes) without bound.
            del self.tries[: -MAX_TRIES + 1]
        outage_start = now if self.down_since is None else self.down_since
        deadline = outage_start + timing.unavailable_timeout
        return min(timing.download_timeout, max(deadline - now, MIN_TRY_TIMEOUT))

    def apply(self, outcome: Outcome, now: float, timing: Timing) -> Change:
        """Apply the outcome of a fetch that started with :meth:`start_fetch`."""
        self.changes += 1
        self.fetching = False
        self.tries.append(outcome.hops)
        if outcome.kind is Status.UNAVAILABLE:
            return self._unavailable(outcome.reason, now, timing)
        recovered = self.down_since is not None
        lifetime = timing.expiration
        if outcome.max_age is not None:
            lifetime = min(lifetime, max(outcome.max_age, MIN_EXPIRATION))
        if outcome.kind is Status.RULES and outcome.rules is not None:
            self.rules, self.kind = outcome.rules, Status.RULES
        else:
            self.rules, self.kind = ALLOW_ALL_RULES, Status.ALLOW_ALL
        self.tdmrep = outcome.tdmrep
        if outcome.tdmrep is not None and outcome.tdmrep.status == UNREADABLE:
            # Its pages' reservation is unknown until it is read (a crawl for AI training
            # keeps none of them): fetched again within the time an outage is waited out.
            lifetime = min(lifetime, timing.unavailable_timeout)
        self.reason, self.fetched = outcome.reason, outcome.fetched
        self.expires_at, self.given_up = now + lifetime, False
        self._end_outage()
        return Change.RECOVERED if recovered else Change.READY

    def _unavailable(self, reason: str, now: float, timing: Timing) -> Change:
        """RFC 9309 §2.3.1.4: an unreachable robots.txt means complete disallow, for now."""
        if self.given_up and now < self.expires_at:
            return Change.IGNORED
        self.failures += 1
        delay = timing.retry_after(self.failures)
        if self.rules is not None:
            # RFC 9309 §2.4: while robots.txt is unreachable, the cached copy may be used.
            self.expires_at = now + delay
            return Change.KEPT_CACHED_COPY
        # A try that ended past the give-up deadline was cut short by it (see start_fetch):
        # its timeout says less about the site than the answer before it, which stays.
        if not self.deadline_passed(now):
            self.reason = reason
        self.retry_at = now + delay
        if self.down_since is None:
            # The outage began when its first try did: a try that hangs until its timeout
            # counts against the give-up time, or the crawl would wait the timeout longer.
            self.down_since = min(self.fetch_started, now)
            self.give_up_at = self.down_since + timing.unavailable_timeout
            return Change.OUTAGE_STARTED
        return Change.STILL_DOWN

    def defer_fetch(self, until: float | None) -> None:
        """The fetch this process began is not made: another process made it or makes it.
        Start none before *until* (None: the state another process published decides)."""
        self.changes += 1
        self.fetching = False
        if until is not None:
            self.retry_at = until

    def give_up(self, now: float, timing: Timing) -> None:
        """End an outage that lasted past its deadline: drop the origin's requests for one
        cache lifetime."""
        self.changes += 1
        self.given_up, self.reason = True, f"gave up after {self.reason}"
        self.expires_at = now + timing.expiration
        self._end_outage()

    def _end_outage(self) -> None:
        self.down_since, self.give_up_at, self.retry_at, self.failures = None, None, None, 0

    # -- explaining ------------------------------------------------------------------------

    def explain(self, url: str, token: str) -> Explanation:
        """Why *url* of this origin is allowed, refused or waiting, for the crawler whose
        robots.txt product token is *token*."""
        tries, status, reason = tuple(self.tries), self.status, self.reason
        if status is Status.UNKNOWN:
            reason = "being fetched" if self.fetching else "not fetched yet"
        if status is Status.RULES and self.rules is not None:
            verdict = self.rules.explain(url, token)
            ignored = self.rules.read_usage(url, token).ignored
            return Explanation(url, self.origin, status, reason, tries, verdict, ignored)
        return Explanation(url, self.origin, status, reason, tries)

    # -- sharing ---------------------------------------------------------------------------

    def values(self) -> Snapshot:
        """The state as plain data (without the parsed rules)."""
        return Snapshot(
            version=SNAPSHOT_VERSION,
            kind=self.kind.value if self.kind is not None else None,
            reason=self.reason,
            tries=[[[h.url, h.status, h.error] for h in hops] for hops in self.tries],
            expires_at=self.expires_at,
            given_up=self.given_up,
            down_since=self.down_since,
            failures=self.failures,
            retry_at=self.retry_at,
            give_up_at=self.give_up_at,
            fetched=None if self.fetched is None else list(self.fetched),
            tdmrep=self.tdmrep.to_plain() if self.tdmrep is not None else None,
        )

    def snapshot(self) -> dict[str, Any]:
        """:meth:`values` by field name, for a shared storage."""
        return self.values()._asdict()

    @staticmethod
    def adoptable(snapshot: dict[str, Any]) -> bool:
        """Whether *snapshot* has this version's shape: one written by another version of the
        package (a fleet being upgraded, an old JOBDIR) is not adopted; a fetch replaces it."""
        return snapshot.get("version") == SNAPSHOT_VERSION

    def adopt(self, snapshot: dict[str, Any], body: bytes | None) -> None:
        """Take the state another process published (see :meth:`snapshot`), with the
        robots.txt *body* it published; a fetch of this process in flight, if any, stays in
        flight."""
        rules = RobotsTxt.parse(body or b"") if has_own_rules(snapshot["kind"]) else None
        self.restore(tuple(snapshot[name] for name in SNAPSHOT_FIELDS), rules)

    def restore(self, values: tuple[Any, ...], rules: RobotsTxt | None) -> None:
        """Take the state the values of a :class:`Snapshot` say (as an origin's record keeps
        them: a plain tuple, in its order), with *rules* when their kind is rules."""
        # Unpacked in the declaration's order (a test checks each field goes where it
        # belongs): an origin read back from its record costs a name look-up less per field.
        (
            _,
            kind,
            self.reason,
            tries,
            self.expires_at,
            self.given_up,
            self.down_since,
            self.failures,
            self.retry_at,
            self.give_up_at,
            fetched,
            tdmrep,
        ) = values
        self.changes += 1
        self.kind = kind = None if kind is None else _KINDS[kind]
        # Allow-all rules are one shared object, rebuilt from the kind alone.
        self.rules = ALLOW_ALL_RULES if kind is _ALLOW_ALL else rules
        self.tries = [tuple([_new(Hop, hop) for hop in hops]) for hops in tries]
        self.fetched = None if fetched is None else _new(Fetch, fetched)
        self.tdmrep = None if tdmrep is None else file_from_plain(tdmrep)


# -- snapshots from elsewhere ----------------------------------------------------------------


class Published(NamedTuple):
    """An origin's state as another process published it, for this process to adopt."""

    #: See :meth:`OriginState.snapshot`; its times in this process's clock.
    snapshot: dict[str, Any]
    #: The robots.txt its rules were parsed from (None unless its kind is rules).
    body: bytes | None


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _time_or_none(value: object) -> bool:
    return value is None or _number(value)


def _hop(value: object) -> bool:
    return (
        isinstance(value, list)
        and len(value) == len(Hop._fields)
        and isinstance(value[0], str)
        and (value[1] is None or (isinstance(value[1], int) and not isinstance(value[1], bool)))
        and (value[2] is None or isinstance(value[2], str))
    )


def _tries(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(hops, list) and all(map(_hop, hops)) for hops in value
    )


_SHA256 = re.compile(r"[0-9a-f]{64}")


def _fetch_or_none(value: object) -> bool:
    if value is None:
        return True
    if not isinstance(value, list) or len(value) != len(Fetch._fields):
        return False
    at, url, status, sha256 = value
    return (
        _number(at)
        and isinstance(url, str)
        and (status is None or (isinstance(status, int) and not isinstance(status, bool)))
        and (sha256 is None or (isinstance(sha256, str) and _SHA256.fullmatch(sha256) is not None))
    )


# What each field of a snapshot of this version must hold.
_FIELD_CHECKS: dict[str, Callable[[Any], bool]] = {
    "kind": lambda value: value is None or value in _KINDS,
    "reason": lambda value: isinstance(value, str),
    "tries": _tries,
    "expires_at": _number,
    "given_up": lambda value: isinstance(value, bool),
    "down_since": _time_or_none,
    "failures": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "retry_at": _time_or_none,
    "give_up_at": _time_or_none,
    "fetched": _fetch_or_none,
    "tdmrep": lambda value: value is None or valid_plain(value),
}


def unreadable(snapshot: object) -> str | None:
    """Why *snapshot* (decoded JSON, from another process) cannot be adopted, or None when it
    can: a damaged value or another version's state is ignored, and a fetch replaces it."""
    if not isinstance(snapshot, dict):
        return "not a JSON object"
    if not OriginState.adoptable(snapshot):
        return f"version {snapshot.get('version')!r}, this package reads {SNAPSHOT_VERSION}"
    for name, valid in _FIELD_CHECKS.items():
        if name not in snapshot:
            return f"no {name!r}"
        if not valid(snapshot[name]):
            return f"{name!r} is {snapshot[name]!r}"
    return None


def shift_times(snapshot: dict[str, Any], by: float) -> dict[str, Any]:
    """*snapshot* with its times moved by *by* seconds: from one process's clock to another's.
    An ``expires_at`` of 0 (the state never decided anything) stays 0."""
    moved = dict(snapshot)
    for name in SNAPSHOT_TIMES:
        if moved[name] is not None and not (name == "expires_at" and moved[name] == 0):
            moved[name] += by
    return moved


def same_snapshot(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two snapshots say the same, their times within :data:`SAME_TIME`."""
    for name in SNAPSHOT_FIELDS:
        x, y = a[name], b[name]
        if name in SNAPSHOT_TIMES and x is not None and y is not None:
            if abs(x - y) >= SAME_TIME:
                return False
        elif x != y:
            return False
    return True
