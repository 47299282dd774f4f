"""Caching (RFC 9309 §2.4) in real crawls, with an injected clock instead of sleeping."""

from __future__ import annotations

from typing import Any, ClassVar

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy.utils.defer import deferred_f_from_coro_f
from twisted.internet.task import Clock

from scrapy_robotsmeta.reactor import CLOCK_ATTRIBUTE
from scrapy_robotsmeta.testing import Site, html, sequence, static
from tests.crawl import ListSpider, crawl

DAY = 86400


class StepSpider(ListSpider):
    """Walks /step/0, /step/1, … one page at a time. When the response of step i arrives, the
    clock moves `advance[i]` on (then, not in the callback: the next request may be downloaded
    before the callback runs); the callback asks for the next step first and for the paths
    `extra[i]` after it."""

    advance: ClassVar[list[float]] = []
    extra: ClassVar[list[list[str]]] = []

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
    StepSpider.advance = advance
    StepSpider.extra = extra or [[] for _ in advance]
    return await crawl([site.origin], {"CONCURRENT_REQUESTS": 1}, StepSpider, clock=clock)


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
    against the refreshed copy, and is parked again rather than holding a download slot."""
    step_site(site, sequence(ALLOW, DENY_P))
    # /p1…/p3 are scheduled at step 0, behind /step/1, which moves the clock a day on.
    result = await run_steps(site, clock, [0, DAY + 1], [["/p1", "/p2", "/p3"], []])
    paths = [path for _, path in site.log]
    refresh = paths.index("/robots.txt", 1)
    assert not [path for path in paths[refresh:] if path.startswith("/p")]
    assert result.stat("robotstxt/reparked") >= 1
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
