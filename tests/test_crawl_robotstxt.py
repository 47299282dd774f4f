"""robots.txt verdicts in real crawls (RFC 9309 §2.2-2.3): an origin's rules apply to its own
requests, every request waiting on a robots.txt is checked against it, and the crawler's name
selects its group."""

from __future__ import annotations

import logging
from typing import Any, cast

import pytest
from pydispatch import dispatcher
from scrapy import signals
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import deferred_f_from_coro_f
from twisted.web import server
from twisted.web.server import NOT_DONE_YET

from scrapy_robotsmeta import RobotsTxtMiddleware
from scrapy_robotsmeta.testing import Site, delayed, html, sequence, static
from tests.crawl import FAST_RETRY, ListSpider, crawl, make_crawler, pages_fetched, small_site
from tests.rules import NEAR_MISS_PATH, NEAR_MISSES

RULES = "User-agent: *\nDisallow: /private\n"


@deferred_f_from_coro_f
async def test_2xx_rules_apply(site: Site) -> None:
    """RFC 9309 §2.3.1.1: a successfully downloaded robots.txt is followed."""
    small_site(site, static(RULES))
    result = await crawl([site.url("/")])
    assert pages_fetched(site) == {"/", "/public/1", "/public/2"}
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


@deferred_f_from_coro_f
async def test_origins_differ_by_port(site: Site, other_site: Site) -> None:
    """RFC 9309 §2.3: a robots.txt applies to its own scheme, host and port only."""
    site.add({"/robots.txt": static(RULES), "/private": html("a")})
    other_site.add({"/private": html("b")})
    await crawl([site.url("/private"), other_site.url("/private")], spider_cls=ListSpider)
    assert pages_fetched(site) == set()
    assert pages_fetched(other_site) == {"/private"}
    assert site.hits["/robots.txt"] == other_site.hits["/robots.txt"] == 1


@deferred_f_from_coro_f
async def test_rules_after_500_kib_are_ignored(site: Site) -> None:
    """RFC 9309 §2.5: the parsing limit is 500 KiB; what follows is not read."""
    head = b"User-agent: *\nDisallow: /early\n"
    padding = b"#" * (512_000 - len(head) - 1) + b"\n"
    body = head + padding + b"Disallow: /late\n"
    site.add({"/robots.txt": static(body), "/early": html("e"), "/late": html("l")})
    result = await crawl([site.url("/early"), site.url("/late")], spider_cls=ListSpider)
    assert pages_fetched(site) == {"/late"}
    assert result.stat("robotstxt/truncated") == 1


@deferred_f_from_coro_f
async def test_full_user_agent_is_reduced_to_its_product_token(site: Site) -> None:
    """A URL inside the User-Agent header must not select the group it names."""
    robots = "User-agent: otherbot\nDisallow: /\n\nUser-agent: testbot\nDisallow: /mine\n"
    site.add({"/robots.txt": static(robots), "/page": html("a"), "/mine": html("b")})
    ua = "Mozilla/5.0 (compatible; TestBot/1.0; +http://example.com/otherbot)"
    await crawl([site.url("/page"), site.url("/mine")], {"USER_AGENT": ua}, ListSpider)
    assert pages_fetched(site) == {"/page"}


@deferred_f_from_coro_f
async def test_robotstxt_user_agent_setting_wins(site: Site) -> None:
    robots = "User-agent: special\nDisallow: /page\n"
    site.add({"/robots.txt": static(robots), "/page": html("a")})
    await crawl([site.url("/page")], {"ROBOTSTXT_USER_AGENT": "Special"}, ListSpider)
    assert pages_fetched(site) == set()


@deferred_f_from_coro_f
async def test_slow_robots_txt_is_fetched_once_and_every_waiting_request_checked(
    site: Site,
) -> None:
    """Scrapy's built-in checks only the first request waiting on a pending robots.txt. The
    requests that reached the downloader wait there for it, the others are parked."""
    site.add({"/robots.txt": delayed(0.3, static(RULES))})
    urls = [site.url(f"/private/{i}") for i in range(20)] + [
        site.url(f"/public/{i}") for i in range(20)
    ]
    site.add({f"/public/{i}": html("ok") for i in range(20)})
    result = await crawl(urls, spider_cls=ListSpider)
    assert site.hits["/robots.txt"] == 1
    assert pages_fetched(site) == {f"/public/{i}" for i in range(20)}
    assert result.stat("robotstxt/forbidden") == 20
    assert result.stat("robotstxt/held") >= 1
    assert result.stat("robotstxt/held") + result.stat("robotstxt/parked") == 40
    assert result.stat("robotstxt/reparked") == 0


async def wait_of_one_request(
    site: Site, robots: Any, settings: dict[str, Any] | None = None
) -> tuple[list[str], tuple[int, int, int, int]]:
    """Crawl one page of *site*, whose robots.txt answers with *robots*: the paths the site
    saw, and how often the request was held in the downloader, sent back from it, parked and
    scheduled."""
    site.add({"/robots.txt": robots, "/page": html("ok")})
    result = await crawl([site.url("/page")], settings, ListSpider)
    names = ("robotstxt/held", "robotstxt/reparked", "robotstxt/parked", "scheduler/enqueued")
    held, sent_back, parked, scheduled = (result.stat(name) for name in names)
    return [path for _, path in site.log], (held, sent_back, parked, scheduled)


@deferred_f_from_coro_f
async def test_request_waits_in_the_downloader_for_a_robots_txt_answered_in_time(
    site: Site,
) -> None:
    """Within ROBOTSTXT_HOLD_TIME, the first request of an origin waits inside the downloader
    for its robots.txt, as with Scrapy's built-in, and is downloaded as soon as it is known:
    it goes through the scheduler once."""
    paths, counts = await wait_of_one_request(site, delayed(0.2, static(RULES)))
    assert paths == ["/robots.txt", "/page"]
    assert counts == (1, 0, 0, 1)


@deferred_f_from_coro_f
async def test_request_held_past_the_hold_time_is_parked(site: Site) -> None:
    """A robots.txt slower than ROBOTSTXT_HOLD_TIME: the request stops holding a place of
    CONCURRENT_REQUESTS and is parked until it is known."""
    robots = delayed(0.6, static(RULES))
    paths, counts = await wait_of_one_request(site, robots, {"ROBOTSTXT_HOLD_TIME": 0.1})
    assert paths == ["/robots.txt", "/page"]
    assert counts == (1, 1, 1, 2)


@deferred_f_from_coro_f
async def test_held_request_is_parked_when_robots_txt_is_unreachable(site: Site) -> None:
    """RFC 9309 §2.3.1.4: an unreachable robots.txt is retried, which may take minutes: a
    request held for its first try is parked when that try fails, and goes on once a retry
    gets the rules."""
    robots = sequence(static("", status=503), static(RULES))
    paths, counts = await wait_of_one_request(site, robots, FAST_RETRY)
    assert paths == ["/robots.txt", "/robots.txt", "/page"]
    assert counts == (1, 1, 1, 2)


@deferred_f_from_coro_f
async def test_hold_time_zero_parks_every_waiting_request(site: Site) -> None:
    """ROBOTSTXT_HOLD_TIME = 0: no request waits inside the downloader."""
    robots = delayed(0.2, static(RULES))
    paths, counts = await wait_of_one_request(site, robots, {"ROBOTSTXT_HOLD_TIME": 0})
    assert paths == ["/robots.txt", "/page"]
    assert counts == (0, 1, 1, 2)


@deferred_f_from_coro_f
async def test_1000_requests_to_a_new_origin_one_fetch_every_request_checked(site: Site) -> None:
    """robots.txt answers only once all 1,000 requests are parked, however long the crawler
    takes to schedule them."""
    # Parked at once: requests held in the downloader would fill CONCURRENT_REQUESTS, and the
    # engine would schedule no more start requests until the hold time ran out.
    crawler = make_crawler(ListSpider, {"ROBOTSTXT_HOLD_TIME": 0})
    rules = static("User-agent: *\nDisallow: /private/\n")
    held: list[server.Request] = []

    def hold(request: server.Request) -> int:
        held.append(request)
        release_when_all_wait()
        return NOT_DONE_YET

    def release_when_all_wait() -> None:
        from twisted.internet import reactor  # noqa: PLC0415 (the installed reactor)

        assert crawler.stats is not None
        if crawler.stats.get_value("robotstxt/parked", 0) < 1000:
            later: Any = reactor.callLater  # typed as the interface's unbound method
            later(0.01, release_when_all_wait)
            return
        for request in held:
            request.write(cast(bytes, rules(request)))
            request.finish()

    site.add({"/robots.txt": hold})
    private = [site.url(f"/private/{i}") for i in range(900)]
    public = [site.url(f"/public/{i}") for i in range(100)]
    site.add({f"/public/{i}": html("ok") for i in range(100)})
    result = await crawl(private + public, crawler=crawler)
    assert site.hits["/robots.txt"] == 1
    assert result.stat("robotstxt/request_count") == 1
    assert result.stat("robotstxt/parked") == 1000
    assert result.stat("robotstxt/forbidden") == 900
    assert sorted(set(result.downloaded) - {site.url("/robots.txt")}) == sorted(public)
    assert not [path for path in site.requested() if path.startswith("/private/")]


@deferred_f_from_coro_f
async def test_check_past_the_work_bound_is_refused_counted_and_logged(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    """A URL whose check would take more work than one check may (a hostile robots.txt) is
    refused as disallowed, with a stat and an INFO line; its rules still decide other URLs."""
    site.add(
        {
            "/robots.txt": static(NEAR_MISSES),
            NEAR_MISS_PATH: html("long"),
            "/short": html("short"),
        }
    )
    urls = [site.url(NEAR_MISS_PATH), site.url("/short")]
    with caplog.at_level(logging.INFO, logger="scrapy_robotsmeta"):
        result = await crawl(urls, {"URLLENGTH_LIMIT": 20_000}, ListSpider)
    assert pages_fetched(site) == {"/short"}
    assert result.stat("robotstxt/undecided") == 1
    assert result.stat("robotstxt/forbidden") == 1
    assert "has too many rules to try for <GET" in caplog.text
