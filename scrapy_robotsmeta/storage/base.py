"""The interface between the robots.txt middleware and where its requests wait and its states
are shared.

A storage trades values with the middleware: requests to park and release, and the snapshots
of origin states (:meth:`OriginState.snapshot
<scrapy_robotsmeta.robotstxt.state.OriginState.snapshot>`, times in this process's clock) with
the robots.txt bytes they were parsed from. It never sees the origin cache: every decision
reads the cache of this process alone, so that a request of a known origin never waits for a
storage, and the core (:mod:`scrapy_robotsmeta.robotstxt.core`) adopts what a storage brings.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from scrapy import Request
    from scrapy.crawler import Crawler

    from scrapy_robotsmeta.robotstxt.origin import Origin
    from scrapy_robotsmeta.robotstxt.state import Published


class ParkedRequests(ABC):
    """Where requests wait for their origin's robots.txt, out of the scheduler."""

    async def open(self) -> None:  # noqa: B027 (optional)
        """Connect, and find the requests an earlier run left parked."""

    @abstractmethod
    def park(self, origin: Origin, request: Request) -> None:
        """Keep *request* until :meth:`release` is called for *origin*. Never raises."""

    @abstractmethod
    def release(self, origin: Origin) -> AsyncIterator[Request]:
        """Take the requests parked for *origin*, oldest first; a reader that stops early
        leaves the rest parked."""

    @abstractmethod
    def parked_origins(self) -> list[Origin]:
        """The origins with parked requests, those of earlier runs included."""

    @abstractmethod
    async def close(self) -> int:
        """Close; return how many parked requests are lost (they could not be kept)."""


class SharedStates:
    """Where origin states are shared between the processes of one crawl; by default, nowhere
    (``shared = False``: every hook is a no-op). A shared one is asked before each fetch
    (:meth:`claim_fetch`), told each new state (:meth:`publish`) and asked every
    ``poll_interval`` seconds what other processes learnt (:meth:`poll`)."""

    shared = False
    poll_interval = 0.0

    async def claim_fetch(self, origin: Origin, settles: Callable[[Published], bool]) -> bool:
        """Whether this process should fetch *origin*'s robots.txt now: not when another
        process published a state that *settles* says makes the fetch needless (its caller
        adopts it then), nor when another process holds the fetch."""
        return True

    async def publish(
        self, origin: Origin, snapshot: dict[str, Any], body: bytes | None, fetched: bool
    ) -> None:
        """Tell other processes the new state of *origin*; *body*: the robots.txt of fresh
        rules (None keeps the one published); *fetched*: a fetch of this process led to it."""

    async def poll(self, origins: list[Origin]) -> list[tuple[Origin, Published | None]]:
        """The states among *origins* that other processes published, and the origins whose
        requests another process left parked (with their state if one was published)."""
        return []

    async def take_turn(self, origin: Origin, interval: float) -> float | None:
        """Take *origin*'s turn for every process of the crawl, keeping it busy for *interval*
        seconds (Crawl-delay): 0.0 when taken, else how long until it is free; None when the
        turn is this process's own to take (nothing shared, or the shared place failing)."""
        return None


class Storage(ParkedRequests, SharedStates):
    """What ``ROBOTSTXT_STORAGE`` names: where requests wait and where states are shared, one
    arrangement, built with ``from_crawler``."""

    #: Whether the crawl's cache keeps the origins that leave memory on disk (in ``JOBDIR``,
    #: or a temporary file), ``ROBOTSTXT_CACHE_SPILL`` permitting: a storage whose states live
    #: elsewhere (Redis) reads them back from there.
    disk_tier = False

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Storage:
        return cls(crawler)
