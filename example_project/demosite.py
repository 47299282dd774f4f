"""The demo site: four small origins on 127.0.0.1 (one port each), each showing part of
scrapy-robotsmeta.

- main: robots.txt with a group for the demo crawler (``examplebot``) beside ``*``; pages with
  meta nofollow, meta noindex, a bot-named meta, ``unavailable_after`` with a comma date, and
  a PDF with X-Robots-Tag headers.
- no_robots: robots.txt answers 404 with an error page that reads like ``Disallow: /``.
- flaky: robots.txt answers 503 three times, then recovers.
- down: robots.txt answers 503 for good.

``run_demo.py`` starts it inside its crawl. ``python demosite.py`` serves it alone, prints its
origins as one JSON line and runs until Ctrl-C, to try ``scrapy robots URL`` against it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from twisted.web import resource, server


@dataclass(frozen=True)
class Page:
    body: bytes
    status: int = 200
    #: (name, value) pairs: a name may repeat, as X-Robots-Tag does.
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "text/plain; charset=utf-8"),)


Answer = Page | Callable[[], Page]

NOT_FOUND = Page(b"Not found\n", 404)
UNAVAILABLE = Page(b"Service unavailable\n", 503)


class Flaky:
    """Answers 503 to the first *failures* requests, then *then*."""

    def __init__(self, failures: int, then: Page) -> None:
        self.left = failures
        self.then = then

    def __call__(self) -> Page:
        if self.left > 0:
            self.left -= 1
            return UNAVAILABLE
        return self.then


class Origin(resource.Resource):
    """One origin: answers by path (unknown paths get a 404) and records what it served."""

    isLeaf = True

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.url = ""
        self.pages: Mapping[str, Answer] = {}
        #: (path, status) of every answer, in order.
        self.served: list[tuple[str, int]] = []

    def render(self, request: server.Request) -> bytes:
        path = request.path.decode("latin-1")
        answer = self.pages.get(path, NOT_FOUND)
        page = answer() if callable(answer) else answer
        self.served.append((path, page.status))
        request.setResponseCode(page.status)
        for name, value in page.headers:
            request.responseHeaders.addRawHeader(name, value)
        return page.body


def html(title: str, *links: str, head: str = "") -> Page:
    items = "".join(f'<li><a href="{url}">{url}</a></li>\n' for url in links)
    body = (
        f"<!DOCTYPE html>\n<html><head><title>{title}</title>\n{head}</head>\n"
        f"<body><h1>{title}</h1>\n<ul>\n{items}</ul></body></html>\n"
    )
    return Page(body.encode(), headers=(("Content-Type", "text/html; charset=utf-8"),))


MAIN_ROBOTS_TXT = b"""\
# Crawlers without a group of their own may fetch nothing.
User-agent: *
Disallow: /

# The demo crawler: USER_AGENT "ExampleBot/1.0 (...)" has the product token "examplebot".
User-agent: examplebot
Disallow: /drafts/
Allow: /drafts/published.html
"""

# An error page that happens to read like robots.txt: Scrapy's built-in middleware obeys it
# and crawls nothing; a 404 means "no robots.txt, crawl everything".
NO_ROBOTS_404 = b"""\
<html><body><h1>404 Not Found</h1>
<pre>
User-agent: *
Disallow: /
</pre></body></html>
"""

PDF = b"%PDF-1.4\n1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n2 0 obj <</Type /Pages /Kids [] /Count 0>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n"  # noqa: E501


def pages(origins: Mapping[str, str]) -> dict[str, dict[str, Answer]]:
    """The pages of each origin; *origins* gives each one's base URL, to link across them."""
    return {
        "main": {
            "/robots.txt": Page(MAIN_ROBOTS_TXT),
            "/": html(
                "Demo home",
                "/about.html",
                "/drafts/wip.html",
                "/drafts/published.html",
                "/nofollow.html",
                "/noindex.html",
                "/bot-meta.html",
                "/event.html",
                "/docs/report.pdf",
                f"{origins['no_robots']}/",
                f"{origins['flaky']}/",
                f"{origins['down']}/",
            ),
            "/about.html": html("About"),
            "/drafts/wip.html": html("Work in progress"),
            "/drafts/published.html": html("Published draft"),
            "/nofollow.html": html(
                "Nofollow", "/hidden.html", head='<meta name="robots" content="nofollow">\n'
            ),
            "/hidden.html": html("Only linked from the nofollow page"),
            "/noindex.html": html("Noindex", head='<meta name="robots" content="noindex">\n'),
            "/bot-meta.html": html(
                "Bot-named meta",
                head=(
                    '<meta name="robots" content="max-image-preview:large">\n'
                    '<meta name="ExampleBot" content="nosnippet, max-image-preview:none">\n'
                    '<meta name="otherbot" content="noindex">\n'
                ),
            ),
            "/event.html": html(
                "Event",
                head=(
                    '<meta name="robots" content="unavailable_after: Thu, 31 Dec 2026 '
                    '23:59:59 GMT, max-image-preview:standard">\n'
                ),
            ),
            "/docs/report.pdf": Page(
                PDF,
                headers=(
                    ("Content-Type", "application/pdf"),
                    ("X-Robots-Tag", "noindex"),
                    ("X-Robots-Tag", "examplebot: noarchive, otherbot: nosnippet"),
                ),
            ),
        },
        "no_robots": {
            "/robots.txt": Page(NO_ROBOTS_404, 404, (("Content-Type", "text/html"),)),
            "/": html("No robots.txt here", "/page.html"),
            "/page.html": html("A page of the origin without robots.txt"),
        },
        "flaky": {
            "/robots.txt": Flaky(3, Page(b"User-agent: *\nDisallow: /admin/\n")),
            "/": html("Flaky robots.txt", "/news.html", "/admin/"),
            "/news.html": html("News"),
            "/admin/": html("Admin"),
        },
        "down": {
            "/robots.txt": UNAVAILABLE,
            "/": html("Never crawled: robots.txt is down"),
        },
    }


def start(reactor: Any) -> dict[str, Origin]:
    """Serve the demo site in *reactor* on free ports of 127.0.0.1, one per origin.

    The ports close with the reactor's process, however it ends.
    """
    origins = {role: Origin() for role in ("main", "no_robots", "flaky", "down")}
    for origin in origins.values():
        site = server.Site(origin)  # type: ignore[no-untyped-call]
        site.noisy = False
        port = reactor.listenTCP(0, site, interface="127.0.0.1")
        origin.url = f"http://127.0.0.1:{port.getHost().port}"
    for role, role_pages in pages({role: o.url for role, o in origins.items()}).items():
        origins[role].pages = role_pages
    return origins


def main() -> None:
    from twisted.internet import reactor  # noqa: PLC0415 (the default reactor, serving alone)

    origins = start(reactor)
    print(json.dumps({role: origin.url for role, origin in origins.items()}), flush=True)
    reactor.run()  # type: ignore[misc]


if __name__ == "__main__":
    main()
