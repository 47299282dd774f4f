"""Real crawls against the local test site: RobotsTxtMiddleware per RFC 9309 §2.3-2.4."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy import Request
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as Builtin
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robotsmeta import RobotsTxtMiddleware
from tests.crawl import ListSpider, crawl
from tests.server import (
    Site,
    delayed,
    hang,
    html,
    links_page,
    redirect,
    reset_mid_body,
    sequence,
    static,
)

RULES = "User-agent: *\nDisallow: /private\n"
FAST_RETRY = {"ROBOTSTXT_RETRY_DELAY": 0.05, "ROBOTSTXT_RETRY_MAX_DELAY": 0.1}


def pages_site(site: Site, robots: Any) -> list[str]:
    """A small site: the root links to two public and two private pages."""
    paths = ["/public/1", "/public/2", "/private/1", "/private/2"]
    site.add({"/robots.txt": robots, "/": links_page(*paths)})
    site.add({path: html(f"<p>{path}</p>") for path in paths})
    return [site.url(path) for path in paths]


def page_hits(site: Site) -> set[str]:
    return {path for path in site.requested() if path != "/robots.txt"}


@deferred_f_from_coro_f
async def test_2xx_rules_apply(site: Site) -> None:
    """RFC 9309 §2.3.1.1: a successfully downloaded robots.txt is followed."""
    pages_site(site, static(RULES))
    result = await crawl([site.url("/")])
    assert page_hits(site) == {"/", "/public/1", "/public/2"}
    assert result.stat("robotstxt/forbidden") == 2
    assert site.hits["/robots.txt"] == 1
    assert result.stat("robotstxt/outcome/rules") == 1


@deferred_f_from_coro_f
async def test_forbidden_request_reaches_errback_with_the_rule(site: Site) -> None:
    site.add({"/robots.txt": static("User-agent: *\n\nDisallow: /private\n")})
    result = await crawl([site.url("/private")], spider_cls=ListSpider)
    spider = result.crawler.spider
    assert isinstance(spider, ListSpider)
    [failure] = spider.errbacks
    assert failure.check(IgnoreRequest)
    assert str(failure.value) == ("Forbidden by robots.txt: Disallow: /private (line 3, group *)")


@pytest.mark.parametrize("status", [401, 403, 404, 410, 451])
@deferred_f_from_coro_f
async def test_4xx_allows_all_and_never_parses_the_body(site: Site, status: int) -> None:
    """RFC 9309 §2.3.1.3: 4xx means no robots.txt: everything may be crawled, even when the
    error page happens to read like robots.txt."""
    pages_site(site, static("User-agent: *\nDisallow: /\n", status=status))
    result = await crawl([site.url("/")])
    assert page_hits(site) == {"/", "/public/1", "/public/2", "/private/1", "/private/2"}
    assert result.stat("robotstxt/outcome/allow_all") == 1
    assert result.stat(f"robotstxt/response_status_count/{status}") == 1


@pytest.mark.parametrize("status", [429, 500, 503])
@deferred_f_from_coro_f
async def test_5xx_and_429_wait_then_rules_apply_on_recovery(site: Site, status: int) -> None:
    """RFC 9309 §2.3.1.4: unreachable means complete disallow; requests wait, not dropped."""
    failing = static("User-agent: *\nDisallow: /\n", status=status)
    pages_site(site, sequence(failing, failing, static(RULES)))
    result = await crawl([site.url("/")], FAST_RETRY)
    assert site.hits["/robots.txt"] == 3
    # Nothing was fetched from the origin before its robots.txt answered 200.
    paths = [path for _, path in site.log]
    assert paths[:3] == ["/robots.txt"] * 3
    assert page_hits(site) == {"/", "/public/1", "/public/2"}
    assert result.stat("robotstxt/forbidden") == 2
    assert result.stat("robotstxt/outcome/unavailable") == 2
    assert result.stat("robotstxt/parked") >= 1


@deferred_f_from_coro_f
async def test_unavailable_origin_is_given_up_and_its_requests_dropped(site: Site) -> None:
    """After ROBOTSTXT_UNAVAILABLE_TIMEOUT every waiting request is dropped, counted and
    handed to its errback: none is lost silently."""
    site.add({"/robots.txt": static("", status=503)})
    urls = [site.url(f"/page/{i}") for i in range(5)]
    settings = {**FAST_RETRY, "ROBOTSTXT_UNAVAILABLE_TIMEOUT": 0.3}
    result = await crawl(urls, settings, spider_cls=ListSpider)
    assert page_hits(site) == set()
    assert result.stat("robotstxt/given_up") == 1
    assert result.stat("robotstxt/unavailable_dropped") == 5
    assert result.stat("test/errback_count") == 5
    assert site.hits["/robots.txt"] >= 3


@deferred_f_from_coro_f
async def test_builtin_is_replaced_not_doubled(site: Site) -> None:
    pages_site(site, static(RULES))
    result = await crawl([site.url("/")])
    assert result.crawler.get_downloader_middleware(RobotsTxtMiddleware) is not None
    assert result.crawler.get_downloader_middleware(Builtin) is None


__all__ = ["Request", "delayed", "hang", "redirect", "reset_mid_body"]
