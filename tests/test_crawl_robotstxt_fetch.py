"""Hardening of the robots.txt part (issue 5): any input, hostile files, network faults while
fetching, many requests at once, long crawls and a bounded cache.

Network faults already covered by test_robotstxt_crawl.py (a reset mid-body, a server that
never answers, a refused connection, a crawl closed while a retry is pending) are not repeated;
what is added here is the rest of the contract for each fault (nothing logged as an error, no
traceback, every dropped request logged) and the faults it did not cover.
"""

from __future__ import annotations

import logging
import re
import time
import tracemalloc
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.defer import deferred_f_from_coro_f
from twisted.internet.task import Clock
from twisted.web import server
from twisted.web.server import NOT_DONE_YET

from scrapy_robotsmeta import RobotsTxt
from scrapy_robotsmeta.robotstxt import MAX_BYTES
from scrapy_robotsmeta.testing import (
    Site,
    delayed,
    hang,
    html,
    reset_mid_body,
    sequence,
    static,
)
from tests.crawl import ListSpider, crawl, make_crawler

# --------------------------------------------------------------------------------------------
# Any input
# --------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(body=st.binary(max_size=2000), url=st.text(max_size=200), agent=st.text(max_size=60))
def test_any_bytes_any_url_any_agent(body: bytes, url: str, agent: str) -> None:
    """parse() never raises; allowed() is a bool, the one explain() gives; nothing else
    raises either."""
    rules = RobotsTxt.parse(body)
    allowed = rules.allowed(url, agent)
    assert isinstance(allowed, bool)
    assert rules.explain(url, agent).allowed is allowed
    delay = rules.crawl_delay(agent)
    assert delay is None or isinstance(delay, float)
    assert all(isinstance(sitemap, str) for sitemap in rules.sitemaps)


# Rule paths and URL paths from a small alphabet of characters that are canonical as they are,
# so that matches are frequent and an independent oracle needs no percent-encoding.
_PATH_TEXT = st.text(alphabet="ab/?=.", max_size=8)
_RULE = st.tuples(
    st.booleans(),
    st.builds(
        lambda body, anchored: "/" + body + ("$" if anchored else ""),
        st.text(alphabet="ab/?=.*", max_size=8),
        st.booleans(),
    ),
)


def _oracle(rules: list[tuple[bool, str]], path: str) -> bool:
    """RFC 9309 §2.2.2 read literally: the longest matching rule wins, allow on a tie."""
    best: tuple[int, bool] | None = None
    for allow, rule in rules:
        anchored = rule.endswith("$")
        body = rule[:-1] if anchored else rule
        regex = ".*".join(map(re.escape, body.split("*"))) + ("$" if anchored else "")
        if re.match(regex, path, re.DOTALL) and (best is None or (len(rule), allow) > best):
            best = (len(rule), allow)
    return best is None or best[1]


@settings(max_examples=150, deadline=None)
@given(rules=st.lists(_RULE, max_size=80), paths=st.lists(_PATH_TEXT, min_size=1, max_size=10))
def test_verdicts_match_a_literal_reading_of_the_rfc(
    rules: list[tuple[bool, str]], paths: list[str]
) -> None:
    """Small groups are scanned and groups of 32 rules or more are indexed: both give the
    verdict of the longest match."""
    lines = [f"{'Allow' if allow else 'Disallow'}: {path}" for allow, path in rules]
    parsed = RobotsTxt.parse("\n".join(["User-agent: *", *lines]).encode())
    for path in paths:
        url = "https://example.com/" + path
        assert parsed.allowed(url, "bot") is _oracle(rules, "/" + path), (path, lines)


# --------------------------------------------------------------------------------------------
# Hostile robots.txt files
# --------------------------------------------------------------------------------------------

HEAD = b"User-agent: *\nDisallow: /private\n"
HOSTILE = {
    "5000-stars": HEAD + b"Disallow: /" + b"*a" * 5000 + b"b\n",
    "5000-stars-anchored": HEAD + b"Disallow: /" + b"*a" * 5000 + b"$\n",
    "100000-wildcard-rules": HEAD + b"".join(b"Disallow: /*b%d\n" % i for i in range(100_000)),
    "100000-rules-one-prefix": HEAD + b"".join(b"Disallow: /aaaa%d\n" % i for i in range(100_000)),
    "50-MB": HEAD + b"Disallow: /x\n" * (50_000_000 // 13),
    "nul-bytes": HEAD + b"Disallow: /\x00a\x00\nAllow: /\x00\n" + b"\x00" * 100_000,
    "invalid-utf-8": HEAD + b"Disallow: /\xff\xfe\xc3(\n\xed\xa0\x80: \xf8\x88\x80\x80\x80\n",
    "one-1-MB-line": b"User-agent: *\nDisallow: /" + b"a" * 1_000_000,
}
URLS = [
    "https://example.com/" + "a" * 8000,
    "https://example.com/" + "ab/*$?%00&%FF" * 600,
    "https://example.com/private/page",
    "https://example.com/aaaa5/x",
]
CHECK_BOUND = 0.010  # seconds
CHECK_RUNS = 5
# What parsing and compiling 500 KiB may allocate at its peak, whatever the body's size.
PEAK_BOUND = 40 * MAX_BYTES


@pytest.fixture(scope="module")
def hostile_rules() -> dict[str, RobotsTxt]:
    """Each hostile file, parsed and with its group compiled (the first check compiles it)."""
    parsed = {name: RobotsTxt.parse(body) for name, body in HOSTILE.items()}
    for rules in parsed.values():
        rules.allowed(URLS[0], "bot")
    return parsed


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_file_checks_stay_under_10_ms(
    name: str, hostile_rules: dict[str, RobotsTxt]
) -> None:
    """The issue's one timed bound. Each URL is checked once to warm up, then CHECK_RUNS times;
    its cost is the fastest of those runs (a run slowed by the machine's other work says
    nothing about the check), and the costliest URL must stay under 10 ms. The worst case
    measured on the development machine was about 3 ms."""
    rules = hostile_rules[name]
    costs = {}
    for url in URLS:
        rules.allowed(url, "bot")
        runs = []
        for _ in range(CHECK_RUNS):
            started = time.perf_counter()
            rules.allowed(url, "bot")
            runs.append(time.perf_counter() - started)
        costs[url[:40]] = min(runs)
    assert max(costs.values()) < CHECK_BOUND, costs


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_file_verdicts(name: str, hostile_rules: dict[str, RobotsTxt]) -> None:
    rules = hostile_rules[name]
    assert rules.truncated is (len(HOSTILE[name]) > MAX_BYTES)
    assert all(isinstance(rules.allowed(url, "bot"), bool) for url in URLS)
    if name != "one-1-MB-line":
        assert not rules.allowed("https://example.com/private/page", "bot")
    assert rules.allowed("https://example.com/robots.txt", "bot")


def test_nul_and_invalid_utf_8_rules_match_their_bytes(
    hostile_rules: dict[str, RobotsTxt],
) -> None:
    """Bytes are matched as the bytes they are, percent-encoded (RFC 9309 §2.2.2)."""
    assert not hostile_rules["nul-bytes"].allowed("https://example.com/%00a%00b", "bot")
    assert hostile_rules["nul-bytes"].allowed("https://example.com/%00b", "bot")
    assert not hostile_rules["invalid-utf-8"].allowed("https://example.com/%FF%FE%C3(x", "bot")


def test_only_the_first_500_kib_is_parsed() -> None:
    rules = RobotsTxt.parse(HOSTILE["100000-wildcard-rules"] + b"Disallow: /late\n")
    assert rules.truncated
    assert not rules.allowed("https://example.com/private", "bot")
    assert rules.allowed("https://example.com/late", "bot")


def _retained_and_peak(body: bytes) -> tuple[int, int]:
    """Bytes a parsed and compiled file keeps, and the most allocated on the way."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        rules = RobotsTxt.parse(body)
        rules.allowed(URLS[0], "bot")
        retained, peak = tracemalloc.get_traced_memory()
        del rules
        return retained - before, peak - before
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", ["50-MB", "100000-wildcard-rules", "one-1-MB-line"])
def test_memory_is_what_the_first_500_kib_need(name: str) -> None:
    """Whatever the body's size, a parsed file keeps what its first 500 KiB alone would, and
    parsing never allocates more than a bounded multiple of them."""
    retained, peak = _retained_and_peak(HOSTILE[name])
    retained_cut, _ = _retained_and_peak(HOSTILE[name][:MAX_BYTES])
    # tracemalloc's figures for the same work vary by a few per cent from run to run.
    assert abs(retained - retained_cut) < 0.05 * retained_cut + 64 * 1024
    assert peak < PEAK_BOUND


# --------------------------------------------------------------------------------------------
# Faults while fetching robots.txt, in real crawls
# --------------------------------------------------------------------------------------------

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


@deferred_f_from_coro_f
async def test_crawl_closed_during_a_robots_txt_download_closes_cleanly(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    """The crawl closes while the robots.txt download itself is still in flight (the existing
    crawl test closes it between two tries): without JOBDIR the waiting requests are dropped,
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


# --------------------------------------------------------------------------------------------
# Many requests at once
# --------------------------------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_1000_requests_to_a_new_origin_one_fetch_every_request_checked(site: Site) -> None:
    """robots.txt answers only once all 1,000 requests wait for it, however long the crawler
    takes to schedule them."""
    crawler = make_crawler(ListSpider)
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


# --------------------------------------------------------------------------------------------
# Long crawls
# --------------------------------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_expired_origin_is_refreshed_while_others_keep_crawling(
    site: Site, other_site: Site, clock: Clock
) -> None:
    """Origin A's robots.txt (max-age 600) expires 700 s into the crawl; B's (24 h) does not.
    A's refresh takes 1 s: B's pages are fetched meanwhile, A's wait for it and obey the
    refreshed rules."""
    refresh_delay = 1.0
    first = static("User-agent: *\nDisallow:\n", headers={"Cache-Control": "max-age=600"})
    refreshed_rules = delayed(refresh_delay, static("User-agent: *\nDisallow: /p\n"))
    site.add({"/robots.txt": sequence(first, refreshed_rules)})
    site.add({"/start": html("a"), "/p1": html("p"), "/q1": html("q")})
    other_site.add({"/robots.txt": static("User-agent: *\nDisallow:\n"), "/start": html("b")})
    other_site.add({f"/b/{i}": html("b") for i in range(30)})

    class TwoOrigins(ListSpider):
        async def start(self) -> Any:
            yield Request(other_site.url("/start"), callback=self.b_started)

        def b_started(self, response: Any) -> Any:
            yield Request(site.url("/start"), callback=self.a_started)

        def a_started(self, response: Any) -> Any:
            clock.advance(700)
            # A's requests first: reaching the downloader, they find A expired and start the
            # refresh; B's pages come after them.
            yield Request(
                site.url("/p1"), callback=self.parse_page, errback=self.on_error, priority=1
            )
            yield Request(site.url("/q1"), callback=self.parse_page, priority=1)
            for i in range(30):
                yield Request(other_site.url(f"/b/{i}"), callback=self.parse_page)

    result = await crawl([], {}, TwoOrigins, clock=clock)
    assert site.hits["/robots.txt"] == 2
    assert other_site.hits["/robots.txt"] == 1
    refresh_asked = [at for at, path in site.log if path == "/robots.txt"][1]
    refreshed = refresh_asked + refresh_delay
    b_pages = [at for at, path in other_site.log if path.startswith("/b/")]
    assert len(b_pages) == 30
    assert [at for at in b_pages if refresh_asked < at < refreshed]  # B went on meanwhile
    assert site.hits["/p1"] == 0
    assert result.stat("robotstxt/forbidden") == 1
    [q1_asked] = [at for at, path in site.log if path == "/q1"]
    assert q1_asked >= refreshed - 0.05
