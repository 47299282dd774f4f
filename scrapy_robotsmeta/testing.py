"""A local test site: a real twisted.web server on 127.0.0.1, run in the crawl's own reactor.

Build the site a test needs from small answer functions (``static``, ``sequence``, ``redirect``,
``delayed``, ``hang``, ``reset_mid_body``…) keyed by path, crawl it with a real crawler, and read
back what the crawler asked for (``Site.hits``, ``Site.log``) and what it was answered
(``Site.served``).

It lives in the package, not in ``tests/``, because three places serve sites with it: the test
suite, the example project's demo site (``example_project/`` runs from a clone or an installed
package, where ``tests/`` is not importable) and the crawl benchmark's server. Shipping it also
lets users test their own spiders' robots.txt and robots meta handling against a real server,
as ``scrapy.utils.test`` does for Scrapy's own helpers. It needs nothing beyond the package's
own requirements.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from twisted.internet.defer import Deferred
from twisted.web import resource, server
from twisted.web.server import NOT_DONE_YET

__all__ = [
    "Answer",
    "Site",
    "delayed",
    "hang",
    "html",
    "installed_reactor",
    "links_page",
    "pages",
    "redirect",
    "reset_mid_body",
    "sequence",
    "static",
    "with_headers",
]


def installed_reactor() -> Any:
    """The reactor installed in this process (typed Any: Twisted's module is not typed as one).

    Imported at call time, never at import time: importing ``twisted.internet.reactor`` installs
    the default reactor, and the crawler (or pytest-twisted) must install its own first.
    """
    from twisted.internet import reactor  # noqa: PLC0415

    return reactor


#: An answer writes the response to one request; it returns the body, or NOT_DONE_YET when it
#: answers later (or never).
Answer = Callable[[server.Request], bytes | int]


def static(
    body: bytes | str = b"", status: int = 200, headers: dict[str, str] | None = None
) -> Answer:
    """Always this body, status and headers; Content-Type is text/html when the body starts
    with ``<`` and text/plain otherwise, unless *headers* names one."""
    data = body.encode() if isinstance(body, str) else body
    content_type = "text/html" if data.lstrip()[:1] == b"<" else "text/plain"
    all_headers = {"Content-Type": content_type, **(headers or {})}

    def answer(request: server.Request) -> bytes:
        request.setResponseCode(status)
        for name, value in all_headers.items():
            request.setHeader(name, value)  # type: ignore[no-untyped-call]
        return data

    return answer


def html(body: str, status: int = 200, headers: dict[str, str] | None = None) -> Answer:
    """An HTML page, UTF-8."""
    return static(body, status, {"Content-Type": "text/html; charset=utf-8", **(headers or {})})


def links_page(*hrefs: str, head: str = "", headers: dict[str, str] | None = None) -> Answer:
    """An HTML page linking to each of *hrefs*, with *head* as the content of its head."""
    anchors = "".join(f'<a href="{href}">{href}</a>\n' for href in hrefs)
    return html(f"<html><head>{head}</head><body>{anchors}</body></html>", headers=headers)


def with_headers(answer: Answer, *headers: tuple[str, str]) -> Answer:
    """*answer* plus these headers, a name repeated as often as given (one header line each)."""

    def wrapped(request: server.Request) -> bytes | int:
        body = answer(request)
        for name, value in headers:
            request.responseHeaders.addRawHeader(name, value)
        return body

    return wrapped


def redirect(location: str, status: int = 301) -> Answer:
    return static(b"", status, {"Location": location})


def sequence(*answers: Answer) -> Answer:
    """Answer with each in turn; the last one answers every later request."""
    remaining = list(answers)

    def answer(request: server.Request) -> bytes | int:
        current = remaining.pop(0) if len(remaining) > 1 else remaining[0]
        return current(request)

    return answer


def delayed(seconds: float, then: Answer) -> Answer:
    """Answer with *then* after *seconds* of the reactor's time."""

    def answer(request: server.Request) -> int:
        def finish() -> None:
            body = then(request)
            if not request.finished and not request._disconnected and isinstance(body, bytes):
                request.write(body)  # type: ignore[no-untyped-call]
                request.finish()  # type: ignore[no-untyped-call]

        installed_reactor().callLater(seconds, finish)
        return NOT_DONE_YET

    return answer


def hang(request: server.Request) -> int:
    """Accept the request and never answer."""
    return NOT_DONE_YET


def reset_mid_body(request: server.Request) -> int:
    """Promise a long body, send part of it, then drop the connection."""
    request.setHeader("Content-Length", "100000")  # type: ignore[no-untyped-call]
    request.write(b"User-agent: *\nDisallow: /private\n")  # type: ignore[no-untyped-call]
    transport: Any = request.transport
    transport.abortConnection()
    return NOT_DONE_YET


def pages(paths: Iterable[str], answer: Callable[[str], Answer]) -> dict[str, Answer]:
    """Routes for many paths at once: *answer* builds each path's answer."""
    return {path: answer(path) for path in paths}


class Site(resource.Resource):
    """One origin: answers by exact path (query included); unknown paths get a 404."""

    isLeaf = True

    def __init__(self, routes: dict[str, Answer] | None = None) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.routes: dict[str, Answer] = dict(routes or {})
        self.hits: Counter[str] = Counter()
        #: Every request path in arrival order, with the reactor time it arrived at.
        self.log: list[tuple[float, str]] = []
        #: (path, status) of every response sent in full, in the order they ended.
        self.served: list[tuple[str, int]] = []
        self._port: Any = None  # an IListeningPort, which mypy cannot read
        self._address: Any = None  # its IPv4Address

    def render(self, request: server.Request) -> bytes | int:
        path = request.uri.decode("latin-1")
        self.hits[path] += 1
        self.log.append((installed_reactor().seconds(), path))
        request.notifyFinish().addCallbacks(
            lambda _: self.served.append((path, request.code)),
            lambda _: None,  # the connection was lost: nothing was served
        )
        answer = self.routes.get(path, static(b"not found", 404))
        return answer(request)

    def add(self, routes: dict[str, Answer]) -> Site:
        self.routes.update(routes)
        return self

    def start(self, interface: str = "127.0.0.1") -> Site:
        """Listen on a free port of *interface*; the port closes with ``stop()`` or with the
        process."""
        factory = server.Site(self)  # type: ignore[no-untyped-call]
        factory.noisy = False
        self._port = installed_reactor().listenTCP(0, factory, interface=interface)
        # Kept: a port that has stopped listening can no longer tell its address.
        self._address = self._port.getHost()
        return self

    @property
    def port(self) -> int:
        assert self._address is not None
        return int(self._address.port)

    @property
    def origin(self) -> str:
        assert self._address is not None
        return f"http://{self._address.host}:{self.port}"

    def url(self, path: str) -> str:
        return self.origin + path

    def requested(self) -> set[str]:
        return set(self.hits)

    def stop(self) -> Deferred[None]:
        assert self._port is not None
        stopped: Deferred[None] = self._port.stopListening()
        return stopped
