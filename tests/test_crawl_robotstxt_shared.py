"""The spider's own requests for a robots.txt, answered from the package's download of it, in
real crawls: the site is asked once, and the spider gets the response Scrapy would have given
it (final URL, status, headers of the decoded body, the body), flagged ``robotstxt-shared``."""

from __future__ import annotations

import gzip
from typing import Any

import pytest
from scrapy import Request
from scrapy.http import Response, TextResponse
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.spiders import SitemapSpider
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robotsmeta.robotstxt_responses import SHARED_FLAG
from scrapy_robotsmeta.testing import Site, delayed, html, redirect, sequence, static
from tests.crawl import FAST_RETRY, CrawlResult, ListSpider, crawl

RULES = "User-agent: *\nDisallow: /private\n"


class RecordingSpider(ListSpider):
    """Requests the given URLs; records each response and each failure's response."""

    responses: list[Response]

    def parse_page(self, response: Response) -> Any:
        self.responses.append(response)
        yield {"url": response.url, "status": response.status}

    async def start(self) -> Any:
        self.responses = []
        async for request in super().start():
            yield request


class FollowUpSpider(RecordingSpider):
    """Asks for robots.txt from the callback of its first page: once the package has it."""

    def parse_page(self, response: Response) -> Any:
        yield from super().parse_page(response)
        if not response.url.endswith("/robots.txt"):
            robots = response.urljoin("/robots.txt")
            yield Request(robots, callback=self.parse_page, errback=self.on_error)


def spider_of(result: CrawlResult) -> RecordingSpider:
    spider = result.crawler.spider
    assert isinstance(spider, RecordingSpider)
    return spider


def robots_txt_requests(site: Site) -> int:
    return sum(1 for _, path in site.log if path == "/robots.txt")


def the_shared_answer(spider: RecordingSpider) -> Response:
    [response] = [r for r in spider.responses if r.url.endswith("robots.txt")]
    assert SHARED_FLAG in response.flags
    return response


@pytest.mark.parametrize("hold_time", [5.0, 0.0])
@deferred_f_from_coro_f
async def test_a_request_for_robots_txt_while_its_fetch_is_in_flight(
    site: Site, hold_time: float
) -> None:
    """The spider's request starts the package's fetch and waits for it (held in the
    downloader, or parked and released): one download."""
    site.add({"/robots.txt": delayed(0.3, static(RULES)), "/page": html("page")})
    result = await crawl(
        [site.url("/robots.txt"), site.url("/page")],
        {"ROBOTSTXT_HOLD_TIME": hold_time},
        spider_cls=RecordingSpider,
    )
    assert robots_txt_requests(site) == 1
    response = the_shared_answer(spider_of(result))
    assert (response.url, response.status, response.body) == (
        site.url("/robots.txt"),
        200,
        RULES.encode(),
    )
    assert response.headers[b"Content-Type"] == b"text/plain"
    assert response.text == RULES  # a TextResponse, as Scrapy would have made it
    assert response.request is not None
    assert response.request.url == site.url("/robots.txt")
    assert result.stat("robotstxt/shared_response/answered") == 1
    assert site.hits["/page"] == 1
    waited = "robotstxt/held" if hold_time else "robotstxt/reparked"
    assert result.stat(waited) >= 1


@deferred_f_from_coro_f
async def test_a_request_for_robots_txt_once_it_is_fresh(site: Site) -> None:
    site.add({"/robots.txt": static(RULES), "/page": html("page")})
    result = await crawl([site.url("/page")], spider_cls=FollowUpSpider)
    assert robots_txt_requests(site) == 1
    assert the_shared_answer(spider_of(result)).body == RULES.encode()


@deferred_f_from_coro_f
async def test_a_404_robots_txt_reaches_the_spider_as_a_404(site: Site) -> None:
    """RFC 9309 §2.3.1.3: a 404 means no robots.txt for the package; the spider sees the 404
    Scrapy would give it, which HttpErrorMiddleware turns into an HttpError for its errback."""
    site.add({"/page": html("page")})
    result = await crawl([site.url("/page")], spider_cls=FollowUpSpider)
    assert robots_txt_requests(site) == 1
    spider = spider_of(result)
    [failure] = spider.errbacks
    assert isinstance(failure.value, HttpError)
    response = failure.value.response
    assert (response.url, response.status) == (site.url("/robots.txt"), 404)
    assert SHARED_FLAG in response.flags
    assert response.body == b"not found"


@deferred_f_from_coro_f
async def test_a_redirected_robots_txt_answers_with_its_final_url(
    site: Site, other_site: Site
) -> None:
    """RFC 9309 §2.3.1.2: the package follows the redirect; the spider gets the final response,
    at the final URL, as RedirectMiddleware would have given it."""
    site.add({"/robots.txt": redirect("/moved"), "/page": html("page")})
    site.add({"/moved": redirect(other_site.url("/robots.txt"), 302)})
    other_site.add({"/robots.txt": static(RULES)})
    result = await crawl([site.url("/robots.txt")], spider_cls=RecordingSpider)
    assert (site.hits["/robots.txt"], site.hits["/moved"], other_site.hits["/robots.txt"]) == (
        1,
        1,
        1,
    )
    response = the_shared_answer(spider_of(result))
    assert (response.url, response.status, response.body) == (
        other_site.url("/robots.txt"),
        200,
        RULES.encode(),
    )


@deferred_f_from_coro_f
async def test_a_gzipped_robots_txt_reaches_the_spider_decoded(site: Site) -> None:
    """The body as decoded, without the Content-Encoding and Content-Length of the bytes that
    were sent; its text read from the decoded bytes (UTF-8 here, with no charset named), not
    guessed from the compressed ones."""
    rules = "User-agent: *\nDisallow: /café\n"
    site.add(
        {
            "/robots.txt": static(
                gzip.compress(rules.encode()), headers={"Content-Encoding": "gzip"}
            )
        }
    )
    result = await crawl([site.url("/robots.txt")], spider_cls=RecordingSpider)
    assert robots_txt_requests(site) == 1
    response = the_shared_answer(spider_of(result))
    assert response.body == rules.encode()
    assert isinstance(response, TextResponse)
    assert response.text == rules
    assert b"Content-Encoding" not in response.headers
    assert b"Content-Length" not in response.headers
    assert response.headers[b"Content-Type"] == b"text/plain"


@deferred_f_from_coro_f
async def test_an_unavailable_robots_txt_reaches_the_spider_as_the_site_answered(
    site: Site,
) -> None:
    """RFC 9309 §2.3.1.4: the origin's requests wait while robots.txt is retried; once it is
    given up, the spider's request for it gets the site's last answer (a 503), not a download
    of its own."""
    site.add({"/robots.txt": static("down", 503)})
    settings = {**FAST_RETRY, "ROBOTSTXT_UNAVAILABLE_TIMEOUT": 0.3}
    result = await crawl([site.url("/robots.txt")], settings, spider_cls=RecordingSpider)
    tries = result.stat("robotstxt/outcome/unavailable")
    assert tries >= 2
    assert robots_txt_requests(site) == tries
    [failure] = spider_of(result).errbacks
    assert isinstance(failure.value, HttpError)
    assert failure.value.response.status == 503
    assert SHARED_FLAG in failure.value.response.flags


@deferred_f_from_coro_f
async def test_an_answer_no_longer_kept_is_downloaded_again(site: Site) -> None:
    """``ROBOTSTXT_RESPONSE_MEMORY = 0`` keeps no response: the spider's request is downloaded."""
    site.add(
        {"/robots.txt": sequence(static(RULES), static("User-agent: *\n")), "/page": html("")}
    )
    settings = {"ROBOTSTXT_RESPONSE_MEMORY": 0}
    result = await crawl([site.url("/page")], settings, spider_cls=FollowUpSpider)
    assert robots_txt_requests(site) == 2
    [response] = [r for r in spider_of(result).responses if r.url.endswith("robots.txt")]
    assert SHARED_FLAG not in response.flags
    assert response.body == b"User-agent: *\n"
    assert result.stat("robotstxt/shared_response/not_kept") == 1


# A SitemapSpider given the site's robots.txt, against the same spider with Scrapy's own
# robots.txt middleware.


class PagesSpider(SitemapSpider):
    name = "pages"

    def parse(self, response: Response) -> Any:
        yield {"url": response.url}


def sitemap_site(site: Site) -> None:
    """robots.txt lists a sitemap index and a urlset; the index lists a gzipped urlset."""

    def urlset(*paths: str) -> str:
        urls = "".join(f"<url><loc>{site.url(path)}</loc></url>" for path in paths)
        return f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'

    index = (
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>{site.url('/maps/b.xml.gz')}</loc></sitemap></sitemapindex>"
    )
    robots = f"{RULES}Sitemap: {site.url('/index.xml')}\nSitemap: {site.url('/maps/a.xml')}\n"
    site.add(
        {
            "/robots.txt": static(robots),
            "/index.xml": static(index, headers={"Content-Type": "application/xml"}),
            "/maps/a.xml": static(urlset("/a/1", "/a/2", "/private/a")),
            "/maps/b.xml.gz": static(
                gzip.compress(urlset("/b/1", "/private/b").encode()),
                headers={"Content-Type": "application/gzip"},
            ),
        }
    )
    site.add({path: html(path) for path in ("/a/1", "/a/2", "/b/1", "/private/a", "/private/b")})


@deferred_f_from_coro_f
async def test_sitemap_spider_given_robots_txt_fetches_it_once(
    site: Site, other_site: Site
) -> None:
    """The site sees one robots.txt request, and the spider follows every sitemap it lists as
    it does with Scrapy's own middleware (which fetches robots.txt twice)."""
    sitemap_site(site)
    result = await crawl([], spider_cls=PagesSpider, sitemap_urls=[site.url("/robots.txt")])
    sitemap_site(other_site)
    builtin = await crawl(
        [],
        {"ADDONS": {}},
        spider_cls=PagesSpider,
        sitemap_urls=[other_site.url("/robots.txt")],
    )
    assert robots_txt_requests(site) == 1
    assert robots_txt_requests(other_site) == 2
    assert {p for _, p in site.log} == {p for _, p in other_site.log}
    assert result.urls == {site.url(p) for p in ("/a/1", "/a/2", "/b/1")}
    assert {u.replace(other_site.origin, site.origin) for u in builtin.urls} == result.urls
