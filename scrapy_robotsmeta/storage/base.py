"""The interface between the robots.txt middleware and where its state lives."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy import Request
    from scrapy.crawler import Crawler

    from scrapy_robotsmeta.robotstxt.cache import OriginCache
    from scrapy_robotsmeta.robotstxt.origin import Origin
    from scrapy_robotsmeta.robotstxt.policy import Outcome
    from scrapy_robotsmeta.robotstxt.state import OriginState


class Storage(ABC):
    """Origin states and parked requests.

    ``states`` is always this process's own cache: the per-request check reads it and nothing
    else, so that a request of a known origin never waits for a storage. A shared storage
    (``shared = True``) also coordinates fetches between processes: the middleware then asks it
    before fetching (:meth:`claim_fetch`), tells it each outcome (:meth:`publish`) and asks it
    every ``poll_interval`` seconds what other processes learnt (:meth:`poll`).
    """

    shared = False
    poll_interval = 0.0

    def __init__(self, crawler: Crawler, states: OriginCache) -> None:
        self.crawler = crawler
        self.states = states

    @classmethod
    def from_crawler(cls, crawler: Crawler, states: OriginCache) -> Storage:
        return cls(crawler, states)

    # The hooks without @abstractmethod are optional: a storage that no other process shares
    # needs none of them.
    async def open(self) -> None:  # noqa: B027
        """Connect, and find the requests an earlier run left parked."""

    @abstractmethod
    def park(self, origin: Origin, request: Request) -> None:
        """Keep *request* until :meth:`release` is called for *origin*. Never raises."""

    @abstractmethod
    def release(self, origin: Origin) -> AsyncIterator[Request]:
        """Take the requests parked for *origin*, oldest first."""

    @abstractmethod
    def parked_origins(self) -> list[Origin]:
        """The origins with parked requests, those of earlier runs included."""

    async def claim_fetch(self, state: OriginState) -> bool:
        """Whether this process should fetch the robots.txt of *state*'s origin now."""
        return True

    async def publish(self, state: OriginState, outcome: Outcome | None) -> None:  # noqa: B027
        """Tell other processes the new *state* (*outcome*: the fetch that led to it, if any)."""

    async def poll(self, origins: list[Origin]) -> list[OriginState]:
        """The states among *origins* that other processes changed since the last call, and
        origins whose requests another process left parked."""
        return []

    @abstractmethod
    async def close(self) -> int:
        """Close; return how many parked requests are lost (they could not be kept)."""
