"""Real crawls against the local test site: RobotsTxtMiddleware per RFC 9309 §2.3-2.4."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from pydispatch import dispatcher
from scrapy import Request, signals
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as Builtin
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import deferred_f_from_coro_f, maybe_deferred_to_future

from scrapy_robotsmeta import RobotsTxtMiddleware
from scrapy_robotsmeta._compat import ROBOTS_PARSED, download
from scrapy_robotsmeta.testing import (
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
from tests.crawl import ListSpider, crawl

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
    # Once every origin is settled, nothing of ours listens to request_scheduled any more.
    listeners = dispatcher.getAllReceivers(
        result.crawler.signals.sender, signals.request_scheduled
    )
    assert not [
        f for f in listeners if getattr(f, "__self__", None).__class__ is RobotsTxtMiddleware
    ]


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


def chain(site: Site, hops: int, final: str = "/final.txt") -> None:
    """/robots.txt redirects *hops* times before reaching *final*."""
    steps = ["/robots.txt"] + [f"/hop{i}" for i in range(1, hops)] + [final]
    site.add({here: redirect(site.url(there)) for here, there in itertools.pairwise(steps)})
    site.add({final: static(RULES)})


@pytest.mark.parametrize("hops", [1, 5])
@deferred_f_from_coro_f
async def test_up_to_5_redirects_are_followed(site: Site, hops: int) -> None:
    """RFC 9309 §2.3.1.2: follow at least five consecutive redirects."""
    pages_site(site, None)
    chain(site, hops)
    result = await crawl([site.url("/")])
    assert page_hits(site) - {"/final.txt"} - {f"/hop{i}" for i in range(hops)} == {
        "/",
        "/public/1",
        "/public/2",
    }
    assert result.stat("robotstxt/request_count") == hops + 1


@deferred_f_from_coro_f
async def test_sixth_redirect_means_allow_all(site: Site) -> None:
    """More than five redirects: treated as a robots.txt that does not exist."""
    pages_site(site, None)
    chain(site, 6)
    result = await crawl([site.url("/")])
    assert {"/private/1", "/private/2"} <= page_hits(site)
    assert site.hits["/final.txt"] == 0
    assert result.stat("robotstxt/redirect_limit") == 1


@deferred_f_from_coro_f
async def test_redirect_loop_means_allow_all(site: Site) -> None:
    pages_site(site, redirect("/loop"))
    site.add({"/loop": redirect("/robots.txt")})
    result = await crawl([site.url("/")])
    assert {"/private/1", "/private/2"} <= page_hits(site)
    assert result.stat("robotstxt/redirect_loop") == 1


@deferred_f_from_coro_f
async def test_redirect_to_another_origin_applies_its_rules_here(
    site: Site, other_site: Site
) -> None:
    """RFC 9309 §2.3.1.2: rules reached through redirects apply to the initial authority."""
    other_site.add({"/shared-robots.txt": static(RULES)})
    pages_site(site, redirect(other_site.url("/shared-robots.txt")))
    await crawl([site.url("/")])
    assert page_hits(site) == {"/", "/public/1", "/public/2"}


@deferred_f_from_coro_f
async def test_redirects_followed_whatever_the_redirect_settings(site: Site) -> None:
    pages_site(site, None)
    chain(site, 3)
    settings = {"REDIRECT_ENABLED": False, "REDIRECT_MAX_TIMES": 1}
    await crawl([site.url("/")], settings)
    assert page_hits(site) & {"/private/1", "/private/2"} == set()


@deferred_f_from_coro_f
async def test_slow_robots_txt_is_fetched_once_and_every_waiting_request_checked(
    site: Site,
) -> None:
    """Scrapy's built-in checks only the first request waiting on a pending robots.txt."""
    site.add({"/robots.txt": delayed(0.3, static(RULES))})
    urls = [site.url(f"/private/{i}") for i in range(20)] + [
        site.url(f"/public/{i}") for i in range(20)
    ]
    site.add({f"/public/{i}": html("ok") for i in range(20)})
    result = await crawl(urls, spider_cls=ListSpider)
    assert site.hits["/robots.txt"] == 1
    assert page_hits(site) == {f"/public/{i}" for i in range(20)}
    assert result.stat("robotstxt/forbidden") == 20
    assert result.stat("robotstxt/parked") == 40


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


@pytest.mark.parametrize(
    "robots",
    [pytest.param(reset_mid_body, id="reset-mid-body"), pytest.param(hang, id="hang")],
)
@deferred_f_from_coro_f
async def test_network_failures_make_the_origin_unavailable(site: Site, robots: Any) -> None:
    site.add({"/robots.txt": robots, "/page": html("ok")})
    settings = {**FAST_RETRY, "ROBOTSTXT_UNAVAILABLE_TIMEOUT": 0.5, "DOWNLOAD_TIMEOUT": 0.3}
    result = await crawl([site.url("/page")], settings, spider_cls=ListSpider)
    assert page_hits(site) == set()
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


@deferred_f_from_coro_f
async def test_origins_differ_by_port(site: Site, other_site: Site) -> None:
    """RFC 9309 §2.3: a robots.txt applies to its own scheme, host and port only."""
    site.add({"/robots.txt": static(RULES), "/private": html("a")})
    other_site.add({"/private": html("b")})
    await crawl([site.url("/private"), other_site.url("/private")], spider_cls=ListSpider)
    assert page_hits(site) == set()
    assert page_hits(other_site) == {"/private"}
    assert site.hits["/robots.txt"] == other_site.hits["/robots.txt"] == 1


@deferred_f_from_coro_f
async def test_rules_after_500_kib_are_ignored(site: Site) -> None:
    """RFC 9309 §2.5: the parsing limit is 500 KiB; what follows is not read."""
    head = b"User-agent: *\nDisallow: /early\n"
    padding = b"#" * (512_000 - len(head) - 1) + b"\n"
    body = head + padding + b"Disallow: /late\n"
    site.add({"/robots.txt": static(body), "/early": html("e"), "/late": html("l")})
    result = await crawl([site.url("/early"), site.url("/late")], spider_cls=ListSpider)
    assert page_hits(site) == {"/late"}
    assert result.stat("robotstxt/truncated") == 1


@deferred_f_from_coro_f
async def test_dont_obey_robotstxt_meta_bypasses_the_check(site: Site) -> None:
    site.add({"/robots.txt": static("User-agent: *\nDisallow: /\n"), "/page": html("ok")})

    class BypassSpider(ListSpider):
        async def start(self) -> Any:
            yield Request(site.url("/page"), meta={"dont_obey_robotstxt": True})

    await crawl([], spider_cls=BypassSpider)
    assert page_hits(site) == {"/page"}
    assert site.hits["/robots.txt"] == 0


@deferred_f_from_coro_f
async def test_full_user_agent_is_reduced_to_its_product_token(site: Site) -> None:
    """A URL inside the User-Agent header must not select the group it names."""
    robots = "User-agent: otherbot\nDisallow: /\n\nUser-agent: testbot\nDisallow: /mine\n"
    site.add({"/robots.txt": static(robots), "/page": html("a"), "/mine": html("b")})
    ua = "Mozilla/5.0 (compatible; TestBot/1.0; +http://example.com/otherbot)"
    await crawl([site.url("/page"), site.url("/mine")], {"USER_AGENT": ua}, ListSpider)
    assert page_hits(site) == {"/page"}


@deferred_f_from_coro_f
async def test_robotstxt_user_agent_setting_wins(site: Site) -> None:
    robots = "User-agent: special\nDisallow: /page\n"
    site.add({"/robots.txt": static(robots), "/page": html("a")})
    await crawl([site.url("/page")], {"ROBOTSTXT_USER_AGENT": "Special"}, ListSpider)
    assert page_hits(site) == set()


@pytest.mark.skipif(ROBOTS_PARSED is None, reason="Scrapy < 2.18 has no robots_parsed signal")
@deferred_f_from_coro_f
async def test_robots_parsed_signal_is_sent(site: Site) -> None:
    from tests.crawl import make_crawler  # noqa: PLC0415

    site.add({"/robots.txt": static(RULES), "/page": html("a")})
    crawler = make_crawler(ListSpider)
    seen: list[Any] = []
    crawler.signals.connect(
        lambda robotparser, request: seen.append((robotparser, request.url)),
        ROBOTS_PARSED,
        weak=False,
    )
    await crawl([site.url("/page")], crawler=crawler)
    [(parser, url)] = seen
    assert url == site.url("/robots.txt")
    assert parser.allowed(site.url("/private"), "testbot") is False


@deferred_f_from_coro_f
async def test_crawl_delay_sets_a_floor_on_the_download_slot(site: Site) -> None:
    site.add({"/robots.txt": static("User-agent: *\nCrawl-delay: 0.25\n")})
    site.add({f"/p/{i}": html("ok") for i in range(3)})
    urls = [site.url(f"/p/{i}") for i in range(3)]
    result = await crawl(urls, {"ROBOTSTXT_OBEY_CRAWL_DELAY": True}, ListSpider)
    times = sorted(at for at, path in site.log if path.startswith("/p/"))
    assert len(times) == 3
    assert times[2] - times[0] >= 0.45  # two gaps of at least 0.25 s, less jitter
    assert result.stat("robotstxt/crawl_delay_applied") >= 1


@deferred_f_from_coro_f
async def test_crawl_delay_ignored_unless_enabled(site: Site) -> None:
    site.add({"/robots.txt": static("User-agent: *\nCrawl-delay: 5\n"), "/p": html("ok")})
    result = await crawl([site.url("/p")], spider_cls=ListSpider)
    assert page_hits(site) == {"/p"}
    assert result.stat("robotstxt/crawl_delay_applied") == 0


@deferred_f_from_coro_f
async def test_crawl_closing_while_requests_wait_drops_them_counted(site: Site) -> None:
    """A crawl stopped while robots.txt is pending closes cleanly, every request counted."""
    site.add({"/robots.txt": static("", status=503)})
    urls = [site.url(f"/w/{i}") for i in range(7)]
    settings = {**FAST_RETRY, "CLOSESPIDER_TIMEOUT": 0.5}
    result = await crawl(urls, settings, spider_cls=ListSpider)
    assert result.stats["finish_reason"] == "closespider_timeout"
    assert result.stat("robotstxt/dropped_on_close") == 7
    assert page_hits(site) == set()


@deferred_f_from_coro_f
async def test_hanging_robots_txt_does_not_keep_the_crawl_open_past_the_timeout(
    site: Site,
) -> None:
    """ROBOTSTXT_UNAVAILABLE_TIMEOUT bounds the wait even when each try would hang for
    DOWNLOAD_TIMEOUT: tries are cut at the deadline."""
    site.add({"/robots.txt": hang, "/page": html("ok")})
    settings = {**FAST_RETRY, "ROBOTSTXT_UNAVAILABLE_TIMEOUT": 1.0, "DOWNLOAD_TIMEOUT": 60}
    result = await crawl([site.url("/page")], settings, spider_cls=ListSpider)
    elapsed = result.stats["elapsed_time_seconds"]
    assert elapsed < 10  # far below the 60 s a single hanging try could take
    assert result.stat("robotstxt/given_up") == 1
    assert result.stat("test/errback_count") == 1


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

    result = await crawl([site.url("/start")], spider_cls=DirectSpider)
    assert outcomes == ["200", "Forbidden by robots.txt: Disallow: /private (line 2, group *)"]
    assert other_site.hits["/robots.txt"] == other_site.hits["/ok"] == 1
    # Sent back once each, on reaching an unknown origin: the start request and /ok.
    assert result.stat("robotstxt/reparked") == 2
