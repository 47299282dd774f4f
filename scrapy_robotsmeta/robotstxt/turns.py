"""Turns: the arithmetic of spacing the requests of an origin by a delay, from the time given.

A turn is taken the moment a request is about to be downloaded. The first taker finds the
origin free and makes it busy for the turn's interval; anyone else is told how long it stays
busy. Whoever took the turn never has to give it back, so a taker that vanishes (a process
killed) delays the origin by one interval at most. RedisStorage keeps the same arithmetic in
Redis (``SET NX PX``, expiring by Redis's clock), for every process of a fleet at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

Key = TypeVar("Key")

#: Past this many keys, a turn taken first drops the keys whose origin is free again.
_PURGE_AT = 4096

#: Above this (seconds), an unbounded Crawl-delay is obeyed with a WARNING.
LONG_DELAY = 60.0

#: A turn lasts its spacing and this much more (a fraction of it, up to SLACK_MAX seconds): a
#: turn is taken as the request is about to be sent, and the moment it is sent varies by a
#: few milliseconds to tens of them with the load of the process that sends it.
SLACK = 0.05
SLACK_MAX = 0.05


class TurnBook(Generic[Key]):
    """Key → the time its next turn is free, all in one clock."""

    def __init__(self) -> None:
        self._busy_until: dict[Key, float] = {}
        self._purge_at = _PURGE_AT

    def take(self, key: Key, interval: float, now: float) -> float:
        """Take *key*'s turn at *now* and keep it busy for *interval* seconds: 0.0 when taken;
        otherwise how long until it is free (the turn is not taken)."""
        busy_until = self._busy_until.get(key)
        if busy_until is not None and busy_until > now:
            return busy_until - now
        self._busy_until[key] = now + interval
        if len(self._busy_until) > self._purge_at:
            self._purge(now)
        return 0.0

    def hold(self, key: Key, until: float, now: float) -> None:
        """Keep *key* busy until *until* at least: a turn kept elsewhere (in Redis, for a
        fleet) that this book must know of if it is ever asked instead."""
        if until > self._busy_until.get(key, now):
            self._busy_until[key] = until
            if len(self._busy_until) > self._purge_at:
                self._purge(now)

    def _purge(self, now: float) -> None:
        self._busy_until = {k: t for k, t in self._busy_until.items() if t > now}
        # What is still busy stays: purge again once the book has doubled from there.
        self._purge_at = max(_PURGE_AT, 2 * len(self._busy_until))

    def __len__(self) -> int:
        return len(self._busy_until)


@dataclass(frozen=True)
class Spacing:
    """How far apart an origin's requests go: *spacing* seconds, from a Crawl-delay of
    *crawl_delay* (None: none asked) cut to the bound when *bounded*; a turn lasts
    :attr:`interval`."""

    spacing: float
    crawl_delay: float | None = None
    bounded: bool = False

    @property
    def interval(self) -> float:
        """How long a turn lasts: the spacing and its slack."""
        return self.spacing + min(self.spacing * SLACK, SLACK_MAX)

    @property
    def long(self) -> bool:
        """A Crawl-delay obeyed in full although it is over a minute."""
        return not self.bounded and self.crawl_delay is not None and self.crawl_delay > LONG_DELAY


def spacing(crawl_delay: float | None, bound: float | None, download_delay: float) -> Spacing:
    """The spacing of an origin whose group asks *crawl_delay* (None: no Crawl-delay, or not
    obeyed), under ``ROBOTSTXT_MAX_CRAWL_DELAY`` *bound* (None: none), for a request whose
    download slot would wait *download_delay* seconds: the larger of the two waits, so that
    the slot never adds a wait of its own to a turn taken."""
    if crawl_delay is None:
        return Spacing(download_delay)
    bounded = bound is not None and crawl_delay > bound
    obeyed = min(crawl_delay, bound) if bound is not None else crawl_delay
    return Spacing(max(obeyed, download_delay), crawl_delay, bounded)
