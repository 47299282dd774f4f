"""The spider's own requests for a robots.txt, answered from the package's download of it.

A ``SitemapSpider`` given a robots.txt URL, or any callback, asks for a file the package fetches
anyway, usually at the same moment (its request is what starts the package's fetch). The
response of each fetch is kept: the last one it got (after any redirects), its body as the
fetch decoded it (at most the 500 KiB the package reads), its ``Content-Encoding`` gone, and
``Content-Length`` too when the body no longer has that length. A ``GET`` of an origin's
``/robots.txt`` that the package decided (its rules fresh, or the origin given up) gets a copy
of it, flagged :data:`SHARED_FLAG`, and goes through the rest of the downloader middlewares as
a download would: a 404 reaches HttpErrorMiddleware, a 503 RetryMiddleware, a 3xx
RedirectMiddleware. A request that arrives while the fetch runs waits for it, as every request
of the origin does.

What is kept is bounded by ``ROBOTSTXT_RESPONSE_MEMORY`` (estimated bytes, the least recently
fetched dropped first) and by ``ROBOTSTXT_CACHE_EXPIRATION`` (a response is never older than a
robots.txt may be: in a fleet, the rules in force may come from another process's later fetch);
a request whose answer is no longer kept (or was fetched by another process of a fleet) is
downloaded as any other request.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from scrapy_robotsmeta.keys import (
    ROBOTSTXT_SHARED_RESPONSE_ANSWERED,
    ROBOTSTXT_SHARED_RESPONSE_NOT_KEPT,
)
from scrapy_robotsmeta.robotstxt import MAX_BYTES
from scrapy_robotsmeta.robotstxt.origin import SCHEME_AUTHORITY

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from scrapy_robotsmeta.defaults import PackageSettings
    from scrapy_robotsmeta.reactor import Clock
    from scrapy_robotsmeta.robotstxt.origin import Origin

#: In ``response.flags`` of a response answered from the package's own download.
SHARED_FLAG = "robotstxt-shared"
#: What a kept response holds besides its body and headers, in bytes (benchmarks/README.md).
RESPONSE_BYTES = 2_400


class RobotsTxtResponses:
    """The last robots.txt response of each origin, within *memory* bytes (0: none kept), each
    for *lifetime* seconds of *clock* at most."""

    def __init__(self, stats: StatsCollector, memory: int, lifetime: float, clock: Clock) -> None:
        self.stats, self.memory, self.lifetime, self.clock = stats, memory, lifetime, clock
        # In the order they were kept: the oldest first, the first to go.
        self._kept: OrderedDict[Origin, tuple[Response, int, float]] = OrderedDict()
        self._bytes = 0

    @classmethod
    def from_settings(
        cls, stats: StatsCollector, settings: PackageSettings, clock: Clock
    ) -> RobotsTxtResponses:
        memory = settings.getint("ROBOTSTXT_RESPONSE_MEMORY")
        return cls(stats, memory, settings.getfloat("ROBOTSTXT_CACHE_EXPIRATION"), clock)

    def keep(self, origin: Origin, response: Response | None) -> None:
        """*response*: the last answer a fetch of *origin* got; None for a fetch that got
        none (a network error), whose earlier answer is not the site's any more."""
        self._forget(origin)
        if response is None:
            return
        response = _as_served(response)
        size = RESPONSE_BYTES + len(response.body) + _header_bytes(response)
        if size > self.memory:
            return
        now = self.clock.seconds()
        self._kept[origin] = (response, size, now)
        self._bytes += size
        while self._kept:
            oldest, (_, _, kept_at) = next(iter(self._kept.items()))
            if self._bytes <= self.memory and now - kept_at <= self.lifetime:
                break
            self._forget(oldest)

    @property
    def kept_bytes(self) -> int:
        """The estimated bytes of what is kept, which the memory bound holds."""
        return self._bytes

    def answer(self, request: Request, origin: Origin) -> Response | None:
        """The response for the spider's *request*, if it asks for *origin*'s robots.txt and
        that is kept; None lets it be decided and downloaded as any other."""
        if not is_robotstxt_request(request):
            return None
        kept = self._kept.get(origin)
        if kept is not None and self.clock.seconds() - kept[2] > self.lifetime:
            self._forget(origin)
            kept = None
        if kept is None:
            self.stats.inc_value(ROBOTSTXT_SHARED_RESPONSE_NOT_KEPT)
            return None
        self.stats.inc_value(ROBOTSTXT_SHARED_RESPONSE_ANSWERED)
        response = kept[0]
        return response.replace(
            request=request, headers=response.headers.copy(), flags=[*response.flags, SHARED_FLAG]
        )

    def _forget(self, origin: Origin) -> None:
        kept = self._kept.pop(origin, None)
        if kept is not None:
            self._bytes -= kept[1]


def is_robotstxt_request(request: Request) -> bool:
    """Whether *request* is a plain GET of its origin's ``/robots.txt``."""
    url = request.url
    if not url.endswith("/robots.txt"):  # every decided request asks: the cheap test first
        return False
    authority = SCHEME_AUTHORITY.match(url)
    return (
        authority is not None
        and url[authority.end() :] == "/robots.txt"
        and request.method == "GET"
    )


def _as_served(response: Response) -> Response:
    """*response* as a spider would get it: the fetch decoded its body (and kept at most
    MAX_BYTES of it); the headers that described the bytes on the wire no longer apply."""
    headers = response.headers.copy()
    headers.pop(b"Content-Encoding", None)
    body = response.body[:MAX_BYTES]
    if headers.get(b"Content-Length") != str(len(body)).encode():
        headers.pop(b"Content-Length", None)
    # No request: the spider's is set on each copy.
    return response.replace(headers=headers, body=body, request=None)


def _header_bytes(response: Response) -> int:
    return sum(len(name) + sum(map(len, values)) for name, values in response.headers.items())
