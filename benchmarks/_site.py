"""The crawl benchmark's site, served from its own process: several origins on loopback
addresses, each with a realistic robots.txt and pages of about 30 links.

    python -m benchmarks._site ORIGINS PAGES_PER_ORIGIN

Prints the origins as one JSON line once it listens, then serves until it is terminated.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

from twisted.internet import reactor as _reactor
from twisted.web import resource, server

from benchmarks._common import pin
from benchmarks._pages import ROBOTS_METAS, page

reactor: Any = _reactor  # Twisted's reactor module is not typed as the reactor it installs
PAGE_SIZE = (20_000, 40_000)
ROBOTS_TXT = """\
# Crawlers: please respect the rules below.
User-agent: *
Disallow: /search
Disallow: /cart/
Disallow: /account/
Disallow: /checkout
Disallow: /admin/
Disallow: /cgi-bin/
Disallow: /tmp/
Disallow: /api/
Disallow: /*?sort=
Disallow: /*?sessionid=
Disallow: /*&sessionid=
Disallow: /*.pdf$
Disallow: /*/print$
Allow: /search/help
Allow: /api/docs

User-agent: AhrefsBot
User-agent: MJ12bot
User-agent: SemrushBot
Disallow: /

User-agent: Googlebot
Disallow: /cart/
Disallow: /checkout

Sitemap: {origin}/sitemap.xml
"""
# Links every site has to places its robots.txt keeps crawlers out of.
FORBIDDEN_LINKS = ("/search?q=robots", "/cart/", "/account/login", "/p/1.html?sort=price")


def build_site(origins: list[str], pages: int, seed: int = 0) -> dict[str, dict[str, bytes]]:
    """Origin → path → body. Page i of an origin links to 8 navigation pages, 19 pages of the
    origin at random, 2 pages of other origins and one forbidden URL: 30 links."""
    rng = random.Random(seed)
    site: dict[str, dict[str, bytes]] = {}
    paths = [f"/p/{i}.html" for i in range(pages)]
    for origin in origins:
        others = [o for o in origins if o != origin] or [origin]
        bodies = {"/robots.txt": ROBOTS_TXT.format(origin=origin).encode()}
        for path in ["/", *paths]:
            links = [
                *paths[:8],
                *rng.sample(paths, 19),
                *(rng.choice(others) + rng.choice(paths) for _ in range(2)),
                rng.choice(FORBIDDEN_LINKS),
            ]
            meta = rng.choice(ROBOTS_METAS)
            bodies[path] = page(rng, links, rng.randrange(*PAGE_SIZE), meta).encode()
        site[origin] = bodies
    return site


class Origin(resource.Resource):
    isLeaf = True

    def __init__(self, bodies: dict[str, bytes]) -> None:
        super().__init__()
        self.bodies = bodies

    def render_GET(self, request: server.Request) -> bytes:
        body = self.bodies.get(request.uri.decode("latin-1"))
        if body is None:
            request.setResponseCode(404)
            return b"not found"
        content_type = b"text/plain" if request.uri == b"/robots.txt" else b"text/html"
        request.setHeader(b"Content-Type", content_type + b"; charset=utf-8")
        return body


def main() -> None:
    count, pages = int(sys.argv[1]), int(sys.argv[2])
    pin(0)
    ports: list[Any] = []
    for i in range(count):
        factory = server.Site(Origin({}))
        factory.noisy = False
        ports.append(reactor.listenTCP(0, factory, interface=f"127.0.0.{i + 1}"))
    origins = [f"http://{p.getHost().host}:{p.getHost().port}" for p in ports]
    for port, (origin, bodies) in zip(ports, build_site(origins, pages).items(), strict=True):
        assert origin.endswith(f":{port.getHost().port}")
        port.factory.resource.bodies = bodies
    print(json.dumps(origins), flush=True)
    reactor.run()


if __name__ == "__main__":
    main()
