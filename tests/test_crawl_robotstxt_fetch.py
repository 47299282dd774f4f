"""What each answer to the robots.txt request means in real crawls (RFC 9309 §2.3.1): status
codes, redirects, network faults and outages. Every request that waited is then fetched,
refused or dropped, counted and logged, and nothing escapes as an error."""

from __future__ import annotations

import itertools
import logging
from typing import Any

import pytest
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import deferred_f_from_coro_f, maybe_deferred_to_future

from scrapy_robotsmeta.testing import Site, hang, html, redirect, reset_mid_body, sequence, static
from tests.crawl import FAST_RETRY, ListSpider, crawl, pages_fetched, small_site

RULES = "User-agent: *\nDisallow: /private\n"


# --------------------------------------------------------------------------------------------
# Status codes
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403, 404, 410, 451])
@deferred_f_from_coro_f
async def test_4xx_allows_all_and_never_parses_the_body(site: Site, status: int) -> None:
    """RFC 9309 §2.3.1.3: 4xx means no robots.txt: everything may be crawled, even when the
    error page happens to read like robots.txt."""
    small_site(site, static("User-agent: *\nDisallow: /\n", status=status))
    result = await crawl([site.url("/")])
    assert pages_fetched(site) == {"/", "/public/1", "/public/2", "/private/1", "/private/2"}
    assert result.stat("robotstxt/outcome/allow_all") == 1
    assert result.stat(f"robotstxt/response_status_count/{status}") == 1


@pytest.mark.parametrize("status", [429, 500, 503])
@deferred_f_from_coro_f
async def test_5xx_and_429_wait_then_rules_apply_on_recovery(site: Site, status: int) -> None:
    """RFC 9309 §2.3.1.4: unreachable means complete disallow; requests wait, not dropped."""
    failing = static("User-agent: *\nDisallow: /\n", status=status)
    small_site(site, sequence(failing, failing, static(RULES)))
    result = await crawl([site.url("/")], FAST_RETRY)
    assert site.hits["/robots.txt"] == 3
    # Nothing was fetched from the origin before its robots.txt answered 200.
    paths = [path for _, path in site.log]
    assert paths[:3] == ["/robots.txt"] * 3
    assert pages_fetched(site) == {"/", "/public/1", "/public/2"}
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
    assert pages_fetched(site) == set()
    assert result.stat("robotstxt/given_up") == 1
    assert result.stat("robotstxt/unavailable_dropped") == 5
    assert result.stat("test/errback_count") == 5
    assert site.hits["/robots.txt"] >= 3


@deferred_f_from_coro_f
async def test_outage_of_one_origin_does_not_stall_another(site: Site, other_site: Site) -> None:
    """Requests waiting on an unavailable origin hold no download slot."""
    site.add({"/robots.txt": static("", status=503)})
    other_site.add({f"/p/{i}": html("ok") for i in range(60)})
    urls = [site.url(f"/w/{i}") for i in range(20)] + [
        other_site.url(f"/p/{i}") for i in range(60)
    ]
    settings = {
        **FAST_RETRY,
        "ROBOTSTXT_RETRY_DELAY": 0.2,
        "ROBOTSTXT_UNAVAILABLE_TIMEOUT": 2.0,
        "CONCURRENT_REQUESTS": 4,
    }
    result = await crawl(urls, settings, spider_cls=ListSpider)
    healthy_done = max(at for at, path in other_site.log)
    last_robots_try = max(at for at, path in site.log)
    assert len(other_site.log) == 61  # 60 pages and its robots.txt
    # The healthy origin finished while the other one was still being retried.
    assert healthy_done < last_robots_try
    assert result.stat("robotstxt/unavailable_dropped") == 20


# --------------------------------------------------------------------------------------------
# Redirects
# --------------------------------------------------------------------------------------------


def chain(site: Site, hops: int, final: str = "/final.txt") -> None:
    """/robots.txt redirects *hops* times before reaching *final*."""
    steps = ["/robots.txt"] + [f"/hop{i}" for i in range(1, hops)] + [final]
    site.add({here: redirect(site.url(there)) for here, there in itertools.pairwise(steps)})
    site.add({final: static(RULES)})


@pytest.mark.parametrize("hops", [1, 5])
@deferred_f_from_coro_f
async def test_up_to_5_redirects_are_followed(site: Site, hops: int) -> None:
    """RFC 9309 §2.3.1.2: follow at least five consecutive redirects."""
    small_site(site, None)
    chain(site, hops)
    result = await crawl([site.url("/")])
    assert pages_fetched(site) - {"/final.txt"} - {f"/hop{i}" for i in range(hops)} == {
        "/",
        "/public/1",
        "/public/2",
    }
    assert result.stat("robotstxt/request_count") == hops + 1


@deferred_f_from_coro_f
async def test_sixth_redirect_means_allow_all(site: Site) -> None:
    """More than five redirects: treated as a robots.txt that does not exist."""
    small_site(site, None)
    chain(site, 6)
    result = await crawl([site.url("/")])
    assert {"/private/1", "/private/2"} <= pages_fetched(site)
    assert site.hits["/final.txt"] == 0
    assert result.stat("robotstxt/redirect_limit") == 1


@deferred_f_from_coro_f
async def test_redirect_loop_means_allow_all(site: Site) -> None:
    small_site(site, redirect("/loop"))
    site.add({"/loop": redirect("/robots.txt")})
    result = await crawl([site.url("/")])
    assert {"/private/1", "/private/2"} <= pages_fetched(site)
    assert result.stat("robotstxt/redirect_loop") == 1


@deferred_f_from_coro_f
async def test_redirect_to_another_origin_applies_its_rules_here(
    site: Site, other_site: Site
) -> None:
    """RFC 9309 §2.3.1.2: rules reached through redirects apply to the initial authority."""
    other_site.add({"/shared-robots.txt": static(RULES)})
    small_site(site, redirect(other_site.url("/shared-robots.txt")))
    await crawl([site.url("/")])
    assert pages_fetched(site) == {"/", "/public/1", "/public/2"}


@deferred_f_from_coro_f
async def test_redirects_followed_whatever_the_redirect_settings(site: Site) -> None:
    small_site(site, None)
    chain(site, 3)
    settings = {"REDIRECT_ENABLED": False, "REDIRECT_MAX_TIMES": 1}
    await crawl([site.url("/")], settings)
    assert pages_fetched(site) & {"/private/1", "/private/2"} == set()


# --------------------------------------------------------------------------------------------
# Network faults
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "robots",
    [pytest.param(reset_mid_body, id="reset-mid-body"), pytest.param(hang, id="hang")],
)
@deferred_f_from_coro_f
async def test_network_failures_make_the_origin_unavailable(site: Site, robots: Any) -> None:
    site.add({"/robots.txt": robots, "/page": html("ok")})
    settings = {**FAST_RETRY, "ROBOTSTXT_UNAVAILABLE_TIMEOUT": 0.5, "DOWNLOAD_TIMEOUT": 0.3}
    result = await crawl([site.url("/page")], settings, spider_cls=ListSpider)
    assert pages_fetched(site) == set()
    assert result.stat("robotstxt/outcome/unavailable") >= 1
    assert result.stat("robotstxt/given_up") == 1
    assert result.stat("test/errback_count") == 1


@deferred_f_from_coro_f
async def test_connection_refused_makes_the_origin_unavailable() -> None:
    closed = Site().start()
    url = closed.url("/page")
    await maybe_deferred_to_future(closed.stop())
    settings = {**FAST_RETRY, "ROBOTSTXT_UNAVAILABLE_TIMEOUT": 0.3}
    result = await crawl([url], settings, spider_cls=ListSpider)
    assert result.stat("robotstxt/given_up") == 1
    assert result.stat("robotstxt/unavailable_dropped") == 1
    assert any(key.startswith("robotstxt/exception_count/") for key in result.stats)


FAST_GIVE_UP = {
    "ROBOTSTXT_RETRY_DELAY": 0.05,
    "ROBOTSTXT_RETRY_MAX_DELAY": 0.1,
    "ROBOTSTXT_UNAVAILABLE_TIMEOUT": 0.5,
    "DOWNLOAD_TIMEOUT": 0.3,
}


# RFC 2606: no name under .invalid ever resolves.
UNRESOLVABLE = "http://robots-hardening.invalid"


def _fault_origin(site: Site, fault: str) -> str:
    if fault == "dns":
        return UNRESOLVABLE
    site.add({"/robots.txt": reset_mid_body if fault == "reset" else hang})
    return site.origin


def _assert_clean(result: Any, caplog: pytest.LogCaptureFixture) -> None:
    """The crawl finished on its own, nothing was logged as an error, no traceback anywhere."""
    assert result.stats["finish_reason"] == "finished"
    assert result.stat("log_count/ERROR") == 0
    assert result.stat("log_count/CRITICAL") == 0
    assert "Traceback" not in caplog.text
    assert not [record for record in caplog.records if record.exc_info]


@pytest.mark.parametrize("fault", ["reset", "hang", "dns"])
@deferred_f_from_coro_f
async def test_robots_txt_fault_drops_and_logs_every_request_and_nothing_escapes(
    site: Site, other_site: Site, fault: str, caplog: pytest.LogCaptureFixture
) -> None:
    origin = _fault_origin(site, fault)
    waiting = [f"{origin}/page/{i}" for i in range(5)]
    other_site.add({f"/ok/{i}": html("ok") for i in range(3)})
    healthy = [other_site.url(f"/ok/{i}") for i in range(3)]
    with caplog.at_level(logging.DEBUG):
        result = await crawl(waiting + healthy, FAST_GIVE_UP, ListSpider)
    _assert_clean(result, caplog)
    assert set(result.downloaded) >= set(healthy)
    assert not set(result.downloaded) & set(waiting)
    assert result.stat("robotstxt/given_up") == 1
    assert result.stat("robotstxt/unavailable_dropped") == len(waiting)
    spider = result.crawler.spider
    assert isinstance(spider, ListSpider)
    # Scrapy sets .request on the failures it hands to errbacks.
    dropped = [failure.request.url for failure in spider.errbacks]  # type: ignore[attr-defined]
    assert sorted(dropped) == sorted(waiting)
    assert all(failure.check(IgnoreRequest) for failure in spider.errbacks)
    for url in waiting:
        assert f"Dropped <GET {url}>: robots.txt of " in caplog.text


# --------------------------------------------------------------------------------------------
# The crawl closing or timing out while requests wait
# --------------------------------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_crawl_closing_while_requests_wait_drops_them_counted(site: Site) -> None:
    """A crawl stopped while robots.txt is pending closes cleanly, every request counted."""
    site.add({"/robots.txt": static("", status=503)})
    urls = [site.url(f"/w/{i}") for i in range(7)]
    settings = {**FAST_RETRY, "CLOSESPIDER_TIMEOUT": 0.5}
    result = await crawl(urls, settings, spider_cls=ListSpider)
    assert result.stats["finish_reason"] == "closespider_timeout"
    assert result.stat("robotstxt/dropped_on_close") == 7
    assert pages_fetched(site) == set()


@deferred_f_from_coro_f
async def test_crawl_closed_during_a_robots_txt_download_closes_cleanly(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    """The crawl closes while the robots.txt download itself is still in flight (the test
    above closes it between two tries): without JOBDIR the waiting requests are dropped,
    counted and logged in one summary line, and nothing escapes. Scrapy lets every download in
    flight end before it closes (here after DOWNLOAD_TIMEOUT, 1 s); the waiting requests hold
    no download slot meanwhile."""
    site.add({"/robots.txt": hang})
    waiting = [site.url(f"/w/{i}") for i in range(7)]
    settings = {"CLOSESPIDER_TIMEOUT": 0.3, "DOWNLOAD_TIMEOUT": 1}
    with caplog.at_level(logging.DEBUG):
        result = await crawl(waiting, settings, ListSpider)
    assert result.stats["finish_reason"] == "closespider_timeout"
    assert result.stat("log_count/ERROR") == 0
    assert "Traceback" not in caplog.text
    assert result.stat("robotstxt/dropped_on_close") == len(waiting)
    assert caplog.text.count("request(s) dropped: the crawl closed") == 1
    assert f"{len(waiting)} request(s) dropped" in caplog.text


@deferred_f_from_coro_f
async def test_hanging_robots_txt_does_not_keep_the_crawl_open_past_the_timeout(
    site: Site,
) -> None:
    """ROBOTSTXT_UNAVAILABLE_TIMEOUT bounds the wait even when each try would hang for
    DOWNLOAD_TIMEOUT: tries are cut at the deadline."""
    site.add({"/robots.txt": hang, "/page": html("ok")})
    settings = {**FAST_RETRY, "ROBOTSTXT_UNAVAILABLE_TIMEOUT": 1.0, "DOWNLOAD_TIMEOUT": 60}
    result = await crawl([site.url("/page")], settings, spider_cls=ListSpider)
    assert result.stat("robotstxt/given_up") == 1
    assert result.stat("test/errback_count") == 1


@deferred_f_from_coro_f
async def test_outage_give_up_time_counts_from_its_first_try(site: Site) -> None:
    """RFC 9309 §2.3.1.4 lets a crawler wait out an unreachable robots.txt; the wait is
    bounded by ROBOTSTXT_UNAVAILABLE_TIMEOUT from the first try's start, so a first try that
    hangs until its own timeout uses that time up: no retry follows it."""
    site.add({"/robots.txt": hang, "/page": html("ok")})
    settings = {"ROBOTSTXT_UNAVAILABLE_TIMEOUT": 1.0, "ROBOTSTXT_RETRY_DELAY": 0.2}
    result = await crawl([site.url("/page")], {**settings, "DOWNLOAD_TIMEOUT": 60}, ListSpider)
    assert site.hits["/robots.txt"] == 1
    assert result.stat("robotstxt/given_up") == 1
    assert result.stat("test/errback_count") == 1
