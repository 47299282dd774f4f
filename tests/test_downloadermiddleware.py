"""RobotsTxtMiddleware's own switches and hooks, in real crawls: the ``dont_obey_robotstxt``
meta key, Scrapy's ``robots_parsed`` signal, requests downloaded outside the scheduler, and a
Scrapy without its reactor."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from scrapy.robotstxt import RobotParser
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robotsmeta import RobotsTxtMiddleware
from scrapy_robotsmeta._compat import ROBOTS_PARSED, download
from scrapy_robotsmeta.testing import Site, delayed, html, static
from tests.crawl import ListSpider, crawl, make_crawler, pages_fetched

RULES = "User-agent: *\nDisallow: /private\n"


@deferred_f_from_coro_f
async def test_dont_obey_robotstxt_meta_bypasses_the_check(site: Site) -> None:
    site.add({"/robots.txt": static("User-agent: *\nDisallow: /\n"), "/page": html("ok")})

    class BypassSpider(ListSpider):
        async def start(self) -> Any:
            yield Request(site.url("/page"), meta={"dont_obey_robotstxt": True})

    await crawl([], spider_cls=BypassSpider)
    assert pages_fetched(site) == {"/page"}
    assert site.hits["/robots.txt"] == 0


@pytest.mark.skipif(ROBOTS_PARSED is None, reason="Scrapy < 2.18 has no robots_parsed signal")
@deferred_f_from_coro_f
async def test_robots_parsed_receivers_get_scrapys_robotparser_interface(site: Site) -> None:
    """Scrapy's RobotParser interface: ``allowed(url, user_agent)`` and
    ``crawl_delay(user_agent)`` take str or bytes, as a receiver written for Scrapy's own
    parsers may pass them."""
    body = (
        "User-agent: testbot\nCrawl-delay: 1\nUser-agent: other\nCrawl-delay: 12\n"
        "Disallow: /private\n\nUser-agent: *\nDisallow: /\n"
    )
    site.add({"/robots.txt": static(body), "/page": html("a")})
    crawler = make_crawler(ListSpider)
    seen: list[Any] = []

    def receiver(robotparser: Any, request: Request) -> None:
        private, page = site.url("/private"), site.url("/page")
        seen.append(
            (
                request.url,
                isinstance(robotparser, RobotParser),
                robotparser.allowed(private.encode(), b"testbot"),
                robotparser.allowed(page.encode(), b"TestBot/1.0 (+http://example.com/other)"),
                robotparser.allowed(page, "somebot"),
                robotparser.crawl_delay(b"testbot"),
                robotparser.crawl_delay("other"),
                robotparser.crawl_delay(b"somebot"),
            )
        )

    crawler.signals.connect(receiver, ROBOTS_PARSED, weak=False)
    await crawl([site.url("/page")], crawler=crawler)
    assert seen == [(site.url("/robots.txt"), True, False, True, False, 12.0, 12.0, None)]
    assert pages_fetched(site) == {"/page"}


@deferred_f_from_coro_f
async def test_download_async_request_waits_for_a_pending_origin(
    site: Site, other_site: Site
) -> None:
    """engine.download_async() never schedules: such a request, sent back once, comes straight
    back and waits in the downloader for its verdict instead of looping."""
    site.add({"/robots.txt": static(""), "/start": html("start")})
    other_site.add({"/robots.txt": delayed(0.3, static(RULES)), "/ok": html("ok")})
    outcomes: list[str] = []

    class DirectSpider(ListSpider):
        async def parse_page(self, response: Any) -> Any:
            engine = self.crawler.engine
            page = await download(engine, Request(other_site.url("/ok")))
            outcomes.append(f"{page.status}")
            try:
                await download(engine, Request(other_site.url("/private")))
            except IgnoreRequest as exc:
                outcomes.append(str(exc))
            yield {"url": response.url}

    # Held for no time: each request is sent back as soon as it meets an unknown origin.
    settings = {"ROBOTSTXT_HOLD_TIME": 0}
    result = await crawl([site.url("/start")], settings, spider_cls=DirectSpider)
    assert outcomes == ["200", "Forbidden by robots.txt: Disallow: /private (line 2, group *)"]
    assert other_site.hits["/robots.txt"] == other_site.hits["/ok"] == 1
    # Sent back once each, on reaching an unknown origin: the start request and /ok.
    assert result.stat("robotstxt/reparked") == 2


def test_reactorless_mode_is_refused_with_a_clear_message() -> None:
    """Without the reactor the middleware cannot time retries: it refuses to start rather than
    let the crawl run without robots.txt."""
    # A bare Crawler: the test helpers' CrawlerRunner refuses this setting itself.
    crawler = Crawler(ListSpider, {"ROBOTSTXT_OBEY": True, "TWISTED_REACTOR_ENABLED": False})
    with pytest.raises(RuntimeError, match="TWISTED_REACTOR_ENABLED = False"):
        RobotsTxtMiddleware.from_crawler(crawler)
