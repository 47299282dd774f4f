"""The crawl benchmark's site, served from its own process: several origins on loopback
addresses, each with a realistic robots.txt and pages of about 30 links.

    python -m benchmarks._site ORIGINS PAGES_PER_ORIGIN

Prints the origins as one JSON line once it listens, then serves until it is terminated.
"""

from __future__ import annotations

import json
import random
import sys

from benchmarks._common import pin
from benchmarks._pages import ROBOTS_METAS, page
from scrapy_robotsmeta.testing import Answer, Site, installed_reactor, static

PAGE_SIZE = (20_000, 40_000)
ROBOTS_TXT = """\
# Crawlers: please respect the rules below.
User-agent: *
Content-Signal: search=yes, ai-train=no
Content-Usage: /api/ train-ai=n
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
# Every origin's TDMRep file (read only by a crawl that consults TDMRep): a few pages reserved
# with a policy, the rest of the site not.
TDMREP_PATH = "/.well-known/tdmrep.json"
TDMREP_JSON = b"""[
  {"location": "/p/1*.html$", "tdm-reservation": 1, "tdm-policy": "https://example.com/tdm"},
  {"location": "/search", "tdm-reservation": 1},
  {"location": "/", "tdm-reservation": 0}
]
"""
# Links every site has to places its robots.txt keeps crawlers out of.
FORBIDDEN_LINKS = ("/search?q=robots", "/cart/", "/account/login", "/p/1.html?sort=price")
NOFOLLOW_PAGES = 5


def build_site(origins: list[str], pages: int, seed: int = 0) -> dict[str, dict[str, bytes]]:
    """Origin → path → body. Page i of an origin links to 8 navigation pages, 19 pages of the
    origin at random, 2 pages of other origins and one forbidden URL: 30 links; one page in
    NOFOLLOW_PAGES has a 31st, with rel="nofollow", to a page of the origin at random."""
    rng = random.Random(seed)
    site: dict[str, dict[str, bytes]] = {}
    paths = [f"/p/{i}.html" for i in range(pages)]
    for origin in origins:
        others = [o for o in origins if o != origin] or [origin]
        bodies = {
            "/robots.txt": ROBOTS_TXT.format(origin=origin).encode(),
            TDMREP_PATH: TDMREP_JSON,
        }
        for path in ["/", *paths]:
            links = [
                *paths[:8],
                *rng.sample(paths, 19),
                *(rng.choice(others) + rng.choice(paths) for _ in range(2)),
                rng.choice(FORBIDDEN_LINKS),
            ]
            meta = rng.choice(ROBOTS_METAS)
            nofollow = [rng.choice(paths)] if rng.randrange(NOFOLLOW_PAGES) == 0 else []
            size = rng.randrange(*PAGE_SIZE)
            bodies[path] = page(rng, links, size, meta, nofollow=nofollow).encode()
        site[origin] = bodies
    return site


def answer_for(path: str, body: bytes) -> Answer:
    kind = {"/robots.txt": "text/plain", TDMREP_PATH: "application/json"}.get(path, "text/html")
    return static(body, headers={"Content-Type": f"{kind}; charset=utf-8"})


def main() -> None:
    count, pages = int(sys.argv[1]), int(sys.argv[2])
    pin(0)
    # Listening first: each origin's pages link to the others by their port.
    sites = [Site().start(interface=f"127.0.0.{i + 1}") for i in range(count)]
    origins = [site.origin for site in sites]
    for site, bodies in zip(sites, build_site(origins, pages).values(), strict=True):
        site.add({path: answer_for(path, body) for path, body in bodies.items()})
    print(json.dumps(origins), flush=True)
    installed_reactor().run()


if __name__ == "__main__":
    main()
