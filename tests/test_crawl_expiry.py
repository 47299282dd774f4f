"""Caching (RFC 9309 §2.4) in real crawls, with a clock the test drives (``crawl(...,
clock=)``, the crawler attribute the robots.txt part reads its time from) instead of sleeping."""

from __future__ import annotations

from typing import Any

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy.utils.defer import deferred_f_from_coro_f
from twisted.internet.task import Clock

from scrapy_robotsmeta.reactor import CLOCK_ATTRIBUTE
from scrapy_robotsmeta.testing import Site, delayed, html, sequence, static
from tests.crawl import ListSpider, crawl

DAY = 86400


class StepSpider(ListSpider):
    """Walks /step/0, /step/1, … one page at a time. When the response of step i arrives, the
    clock moves `advance[i]` on (then, not in the callback: the next request may be downloaded
    before the callback runs); the callback asks for the next step first and for the paths
    `extra[i]` after it. Both lists are spider arguments."""

    advance: list[float]
    extra: list[list[str]]

    async def start(self) -> Any:
        yield Request(self.start_urls[0] + "/step/0", callback=self.step, cb_kwargs={"i": 0})

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> StepSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        assert isinstance(spider, StepSpider)
        crawler.signals.connect(spider.arrived, signals.response_received)
        return spider

    def arrived(self, response: Response) -> None:
        name, _, number = response.url.rpartition("/")
        if name.endswith("/step"):
            getattr(self.crawler, CLOCK_ATTRIBUTE).advance(self.advance[int(number)])

    def step(self, response: Response, i: int) -> Any:
        if i + 1 < len(self.advance):
            next_step = f"/step/{i + 1}"
            yield response.follow(next_step, self.step, priority=1, cb_kwargs={"i": i + 1})
        for path in self.extra[i]:
            yield response.follow(path, self.parse_page, errback=self.on_error, priority=-1)


def step_site(site: Site, robots: Any) -> None:
    site.add({"/robots.txt": robots})
    site.add({f"/step/{i}": html("step") for i in range(10)})
    site.add({f"/p{i}": html("page") for i in range(10)})


async def run_steps(
    site: Site, clock: Clock, advance: list[float], extra: list[list[str]] | None = None
) -> Any:
    extra = extra or [[] for _ in advance]
    settings = {"CONCURRENT_REQUESTS": 1}
    return await crawl(
        [site.origin], settings, StepSpider, clock=clock, advance=advance, extra=extra
    )


ALLOW = static("User-agent: *\nDisallow:\n")


DENY_P = static("User-agent: *\nDisallow: /p\n")


@deferred_f_from_coro_f
async def test_cached_copy_used_within_24_hours(site: Site, clock: Clock) -> None:
    step_site(site, sequence(ALLOW, DENY_P))
    await run_steps(site, clock, [0, DAY - 10, 5])
    assert site.hits["/robots.txt"] == 1


@deferred_f_from_coro_f
async def test_refetched_after_24_hours(site: Site, clock: Clock) -> None:
    """RFC 9309 §2.4: a cached robots.txt is not used for more than 24 hours."""
    step_site(site, sequence(ALLOW, DENY_P))
    result = await run_steps(site, clock, [0, DAY + 1], [[], ["/p1"]])
    assert site.hits["/robots.txt"] == 2
    assert site.hits["/p1"] == 0
    assert result.stat("robotstxt/forbidden") == 1


@deferred_f_from_coro_f
async def test_max_age_shortens_the_lifetime(site: Site, clock: Clock) -> None:
    """RFC 9309 §2.4: standard cache control (RFC 9111 max-age) may shorten caching."""
    robots = static("User-agent: *\nDisallow:\n", headers={"Cache-Control": "max-age=600"})
    step_site(site, robots)
    await run_steps(site, clock, [0, 500, 101, 10])
    assert site.hits["/robots.txt"] == 2


@deferred_f_from_coro_f
async def test_max_age_below_a_minute_is_raised_to_a_minute(site: Site, clock: Clock) -> None:
    robots = static("User-agent: *\nDisallow:\n", headers={"Cache-Control": "max-age=0"})
    step_site(site, robots)
    await run_steps(site, clock, [0, 30, 20, 20, 0])
    assert site.hits["/robots.txt"] == 2


@deferred_f_from_coro_f
async def test_requests_queued_before_expiry_wait_for_the_refresh(
    site: Site, clock: Clock
) -> None:
    """A request scheduled while the copy was fresh, downloaded after it expired, is checked
    against the refreshed copy: it waits in the downloader for the refresh it started."""
    step_site(site, sequence(ALLOW, DENY_P))
    # /p1…/p3 are scheduled at step 0, behind /step/1, which moves the clock a day on.
    result = await run_steps(site, clock, [0, DAY + 1], [["/p1", "/p2", "/p3"], []])
    paths = [path for _, path in site.log]
    refresh = paths.index("/robots.txt", 1)
    assert not [path for path in paths[refresh:] if path.startswith("/p")]
    assert result.stat("robotstxt/held") >= 1
    assert result.stat("robotstxt/forbidden") >= 1
    assert result.stat("robotstxt/forbidden") + refresh - 3 == 3  # each page fetched or refused


@deferred_f_from_coro_f
async def test_failed_refresh_keeps_the_cached_copy(site: Site, clock: Clock) -> None:
    """RFC 9309 §2.4: when robots.txt is unreachable, the cached copy may still be used."""
    step_site(site, sequence(DENY_P, static("", status=503)))
    result = await run_steps(site, clock, [0, DAY + 1], [[], ["/p1", "/step/9"]])
    assert site.hits["/p1"] == 0
    assert result.stat("robotstxt/kept_cached_copy") == 1
    assert result.stat("robotstxt/forbidden") == 1


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
