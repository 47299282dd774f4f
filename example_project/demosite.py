"""The demo site: six small origins on 127.0.0.1 (one port each), each showing part of
scrapy-robotsmeta.

- main: robots.txt with a group for the demo crawler (``examplebot``) beside ``*``; pages with
  meta nofollow, meta noindex, a bot-named meta, ``unavailable_after`` with a comma date, and
  a PDF with X-Robots-Tag headers; a page with the ``noai`` meta, one with a ``Content-Usage``
  header.
- signals: robots.txt as Cloudflare's managed one writes it, ``Content-Signal: search=yes,
  ai-train=no`` in the ``*`` group, with a ``Content-Usage`` rule for one path; a page with
  ``noimageai``.
- no_robots: robots.txt answers 404 with an error page that reads like ``Disallow: /``.
- flaky: robots.txt answers 503 three times, then recovers.
- down: robots.txt answers 503 for good.
- publisher: a TDMRep publisher. Its ``/.well-known/tdmrep.json`` leaves open access articles
  unreserved and reserves the rest of the site with a policy (the first matching rule wins);
  one article's ``<meta name="tdm-reservation" content="0">`` supersedes the file.

Each origin is a ``scrapy_robotsmeta.testing.Site``, the server the package's tests crawl.
``run_demo.py`` starts them inside its crawl. ``python demosite.py`` serves them alone, prints
their origins as one JSON line and runs until Ctrl-C, to try ``scrapy robots URL`` against them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from scrapy_robotsmeta.testing import Answer, Site, links_page, sequence, static, with_headers

ROLES = ("main", "signals", "no_robots", "flaky", "down", "publisher")
UNAVAILABLE = static(b"Service unavailable\n", 503)


def titled_page(title: str, *links: str, head: str = "") -> Answer:
    """An HTML page with this title (the spider exports it) linking to each of *links*."""
    return links_page(*links, head=f"<title>{title}</title>\n{head}")


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

FLAKY_ROBOTS_TXT = b"User-agent: *\nDisallow: /admin/\n"

# Cloudflare's managed robots.txt puts its Content Signals in the * group; the IETF drafts'
# Content-Usage rule is scoped to a path. The most restrictive statement wins: /open/ pages
# are still not for AI training.
SIGNALS_ROBOTS_TXT = b"""\
User-Agent: *
Content-Signal: search=yes, ai-train=no
Content-Usage: /open/ train-ai=y
Allow: /
"""

TDMREP_PATH = "/.well-known/tdmrep.json"


def tdmrep_json(origin: str) -> bytes:
    """The publisher's TDMRep file: open access first, or the catch-all rule would win."""
    rules = [
        {"location": "/open-access/", "tdm-reservation": 0},
        {"location": "/", "tdm-reservation": 1, "tdm-policy": f"{origin}/tdm-policy.json"},
    ]
    return json.dumps(rules, indent=2).encode()


PDF = b"%PDF-1.4\n1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n2 0 obj <</Type /Pages /Kids [] /Count 0>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n"  # noqa: E501


def routes(origins: Mapping[str, str]) -> dict[str, dict[str, Answer]]:
    """Each origin's routes; *origins* gives each one's base URL, to link across them."""
    return {
        "main": {
            "/robots.txt": static(MAIN_ROBOTS_TXT),
            "/": titled_page(
                "Demo home",
                "/about.html",
                "/drafts/wip.html",
                "/drafts/published.html",
                "/nofollow.html",
                "/noindex.html",
                "/bot-meta.html",
                "/event.html",
                "/docs/report.pdf",
                "/noai.html",
                "/licensed.html",
                f"{origins['signals']}/",
                f"{origins['no_robots']}/",
                f"{origins['flaky']}/",
                f"{origins['down']}/",
                f"{origins['publisher']}/",
            ),
            "/about.html": titled_page("About"),
            "/drafts/wip.html": titled_page("Work in progress"),
            "/drafts/published.html": titled_page("Published draft"),
            "/nofollow.html": titled_page(
                "Nofollow", "/hidden.html", head='<meta name="robots" content="nofollow">\n'
            ),
            "/hidden.html": titled_page("Only linked from the nofollow page"),
            "/noindex.html": titled_page(
                "Noindex", head='<meta name="robots" content="noindex">\n'
            ),
            "/bot-meta.html": titled_page(
                "Bot-named meta",
                head=(
                    '<meta name="robots" content="max-image-preview:large">\n'
                    '<meta name="ExampleBot" content="nosnippet, max-image-preview:none">\n'
                    '<meta name="otherbot" content="noindex">\n'
                ),
            ),
            "/event.html": titled_page(
                "Event",
                head=(
                    '<meta name="robots" content="unavailable_after: Thu, 31 Dec 2026 '
                    '23:59:59 GMT, max-image-preview:standard">\n'
                ),
            ),
            "/noai.html": titled_page(
                "Not for AI training", head='<meta name="robots" content="noai">\n'
            ),
            "/licensed.html": with_headers(
                titled_page("Licensed for training"), ("Content-Usage", "train-ai=y, search=y")
            ),
            "/docs/report.pdf": with_headers(
                static(PDF, headers={"Content-Type": "application/pdf"}),
                ("X-Robots-Tag", "noindex"),
                ("X-Robots-Tag", "examplebot: noarchive, otherbot: nosnippet"),
            ),
        },
        "signals": {
            "/robots.txt": static(SIGNALS_ROBOTS_TXT),
            "/": titled_page("Content signals", "/open/data.html", "/gallery.html"),
            "/open/data.html": titled_page("Open data"),
            "/gallery.html": titled_page(
                "Gallery", head='<meta name="robots" content="noimageai">\n'
            ),
        },
        "no_robots": {
            "/robots.txt": static(NO_ROBOTS_404, 404),
            "/": titled_page("No robots.txt here", "/page.html"),
            "/page.html": titled_page("A page of the origin without robots.txt"),
        },
        "flaky": {
            "/robots.txt": sequence(*[UNAVAILABLE] * 3, static(FLAKY_ROBOTS_TXT)),
            "/": titled_page("Flaky robots.txt", "/news.html", "/admin/"),
            "/news.html": titled_page("News"),
            "/admin/": titled_page("Admin"),
        },
        "down": {
            "/robots.txt": UNAVAILABLE,
            "/": titled_page("Never crawled: robots.txt is down"),
        },
        "publisher": {
            "/robots.txt": static(b"User-agent: *\nAllow: /\n"),
            TDMREP_PATH: static(
                tdmrep_json(origins["publisher"]), headers={"Content-Type": "application/json"}
            ),
            "/": titled_page(
                "Publisher",
                "/open-access/article.html",
                "/journals/article.html",
                "/journals/licensed.html",
            ),
            "/open-access/article.html": titled_page("Open access article"),
            "/journals/article.html": titled_page("Journal article"),
            "/journals/licensed.html": titled_page(
                "Licensed for mining", head='<meta name="tdm-reservation" content="0">\n'
            ),
        },
    }


def start() -> dict[str, Site]:
    """Serve the demo site in the installed reactor on free ports of 127.0.0.1, one per origin.

    The ports close with the reactor's process, however it ends.
    """
    sites = {role: Site().start() for role in ROLES}
    for role, role_routes in routes({role: site.origin for role, site in sites.items()}).items():
        sites[role].add(role_routes)
    return sites


def main() -> None:
    from twisted.internet import reactor  # noqa: PLC0415 (the default reactor, serving alone)

    sites = start()
    print(json.dumps({role: site.origin for role, site in sites.items()}), flush=True)
    reactor.run()  # type: ignore[misc]


if __name__ == "__main__":
    main()
