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
from typing import TYPE_CHECKING, Any, NamedTuple

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


class _Kept(NamedTuple):
    cls: type[Response]
    #: What the copies are built from (see _values).
    values: tuple[Any, ...]
    #: The estimated bytes, which the memory bound counts.
    size: int
    #: When it was kept, by the clock.
    at: float


class RobotsTxtResponses:
    """The last robots.txt response of each origin, within *memory* bytes (0: none kept), each
    for *lifetime* seconds of *clock* at most."""

    def __init__(self, stats: StatsCollector, memory: int, lifetime: float, clock: Clock) -> None:
        self.stats, self.memory, self.lifetime, self.clock = stats, memory, lifetime, clock
        # In the order they were kept: the oldest first, the first to go.
        self._kept: OrderedDict[Origin, _Kept] = OrderedDict()
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
        size = RESPONSE_BYTES + min(len(response.body), MAX_BYTES) + _header_bytes(response)
        if size > self.memory:
            return
        now = self.clock.seconds()
        self._kept[origin] = _Kept(type(response), _values(response), size, now)
        self._bytes += size
        while self._kept:
            oldest, first = next(iter(self._kept.items()))
            if self._bytes <= self.memory and now - first.at <= self.lifetime:
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
        if kept is not None and self.clock.seconds() - kept.at > self.lifetime:
            self._forget(origin)
            kept = None
        if kept is None:
            self.stats.inc_value(ROBOTSTXT_SHARED_RESPONSE_NOT_KEPT)
            return None
        self.stats.inc_value(ROBOTSTXT_SHARED_RESPONSE_ANSWERED)
        return _served(kept, request)

    def _forget(self, origin: Origin) -> None:
        kept = self._kept.pop(origin, None)
        if kept is not None:
            self._bytes -= kept.size


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


def _attributes(cls: type[Response]) -> tuple[str, ...]:
    """The attributes a kept *cls* response keeps: all but the fetch's request, and but a
    TextResponse's encoding: reading it may decode the whole body, at every fetch, where a copy
    finds the same from the same headers and body, only if it is read."""
    return tuple(name for name in cls.attributes if name not in ("request", "encoding"))


def _values(response: Response) -> tuple[Any, ...]:
    """The values of *response*'s kept attributes (see _attributes), its body cut at MAX_BYTES
    (what the fetch read): a tuple, a dict's fraction of the memory."""
    return tuple(
        response.body[:MAX_BYTES] if name == "body" else getattr(response, name)
        for name in _attributes(type(response))
    )


def _served(kept: _Kept, request: Request) -> Response:
    """The copy of a kept response for the spider's *request*, as a spider would get it: the
    fetch decoded its body (and kept at most MAX_BYTES of it), so the headers that described
    the bytes on the wire no longer apply."""
    parts = dict(zip(_attributes(kept.cls), kept.values, strict=True))
    headers = parts["headers"].copy()
    headers.pop(b"Content-Encoding", None)
    if headers.get(b"Content-Length") != str(len(parts["body"])).encode():
        headers.pop(b"Content-Length", None)
    flags = [*parts["flags"], SHARED_FLAG]
    return kept.cls(**{**parts, "headers": headers, "flags": flags, "request": request})


def _header_bytes(response: Response) -> int:
    return sum(len(name) + sum(map(len, values)) for name, values in response.headers.items())
