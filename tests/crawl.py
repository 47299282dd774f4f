"""Run a real Scrapy crawl in the test's reactor and record what happened."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scrapy import Request, Spider, signals
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from scrapy.utils.test import get_crawler
from twisted.internet.task import LoopingCall, deferLater
from twisted.python.failure import Failure

from scrapy_robotsmeta.reactor import CLOCK_ATTRIBUTE
from scrapy_robotsmeta.testing import Site, html, installed_reactor, links_page

# What every test crawl uses unless it says otherwise: quiet, no network beyond 127.0.0.1,
# and the package enabled through its add-on, as a user would enable it.
BASE_SETTINGS: dict[str, Any] = {
    "ADDONS": {"scrapy_robotsmeta.Addon": 0},
    "ROBOTSTXT_OBEY": True,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "DEBUG",
    "RETRY_ENABLED": False,
    "DOWNLOAD_TIMEOUT": 5,
    "USER_AGENT": "TestBot/1.0 (+http://127.0.0.1/bot)",
}
#: Retries of an unavailable robots.txt that a test need not wait long for.
FAST_RETRY: dict[str, Any] = {"ROBOTSTXT_RETRY_DELAY": 0.05, "ROBOTSTXT_RETRY_MAX_DELAY": 0.1}


def one_page(site: Site) -> list[str]:
    """A site of one page, its root."""
    site.add({"/": html("<p>home</p>")})
    return [site.url("/")]


def small_site(site: Site, robots: Any) -> list[str]:
    """A small site: the root links to two public and two private pages."""
    paths = ["/public/1", "/public/2", "/private/1", "/private/2"]
    site.add({"/robots.txt": robots, "/": links_page(*paths)})
    site.add({path: html(f"<p>{path}</p>") for path in paths})
    return [site.url(path) for path in paths]


def pages_fetched(site: Site) -> set[str]:
    """The paths the site was asked for, its robots.txt aside."""
    return {path for path in site.requested() if path != "/robots.txt"}


class FollowAllSpider(CrawlSpider):
    """An ordinary CrawlSpider: follows every link and yields one dict item per page."""

    name = "follow_all"
    rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)

    def __init__(self, start_urls: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = start_urls

    def parse_start_url(self, response: Response, **kwargs: Any) -> Any:
        return self.parse_page(response)

    def parse_page(self, response: Response) -> Any:
        yield {"url": response.url}


class ListSpider(Spider):
    """Requests exactly the given URLs, each with an errback, and follows nothing."""

    name = "list"

    def __init__(self, start_urls: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = start_urls

    async def start(self) -> Any:
        for url in self.start_urls:
            yield Request(url, callback=self.parse_page, errback=self.on_error)

    def parse_page(self, response: Response) -> Any:
        yield {"url": response.url, "status": response.status}

    def on_error(self, failure: Failure) -> None:
        self.crawler.stats.inc_value("test/errback_count")
        self.errbacks.append(failure)

    errbacks: list[Failure]

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> ListSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.errbacks = []
        return spider


@dataclass
class CrawlResult:
    crawler: Crawler
    items: list[Any] = field(default_factory=list)
    downloaded: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    @property
    def stats(self) -> dict[str, Any]:
        assert self.crawler.stats is not None
        return self.crawler.stats.get_stats()

    def stat(self, name: str) -> Any:
        return self.stats.get(name, 0)

    @property
    def urls(self) -> set[str]:
        return {item["url"] for item in self.items if isinstance(item, dict)}


def make_crawler(
    spider_cls: type[Spider], settings: dict[str, Any] | None = None, clock: Any = None
) -> Crawler:
    """A crawler with the test settings; *clock* (a twisted.internet.task.Clock) drives the
    robots.txt part's time instead of the reactor."""
    crawler = get_crawler(spider_cls, {**BASE_SETTINGS, **(settings or {})})
    if clock is not None:
        setattr(crawler, CLOCK_ATTRIBUTE, clock)
    return crawler


async def crawl(
    start_urls: list[str],
    settings: dict[str, Any] | None = None,
    spider_cls: type[Spider] = FollowAllSpider,
    crawler: Crawler | None = None,
    clock: Any = None,
    **spider_kwargs: Any,
) -> CrawlResult:
    crawler = crawler or make_crawler(spider_cls, settings, clock)
    result = CrawlResult(crawler)

    def item_scraped(item: Any) -> None:
        result.items.append(item)

    def response_received(response: Response, request: Request) -> None:
        result.downloaded.append(request.url)

    def request_dropped(request: Request) -> None:
        result.dropped.append(request.url)

    crawler.signals.connect(item_scraped, signals.item_scraped, weak=False)
    crawler.signals.connect(response_received, signals.response_received, weak=False)
    crawler.signals.connect(request_dropped, signals.request_dropped, weak=False)
    if hasattr(crawler, "crawl_async"):
        await crawler.crawl_async(start_urls=start_urls, **spider_kwargs)
    else:  # Scrapy < 2.14
        await maybe_deferred_to_future(crawler.crawl(start_urls=start_urls, **spider_kwargs))
    return result


def stop_when(crawler: Crawler, condition: Callable[[dict[str, Any]], bool]) -> None:
    """Stop *crawler* as SIGINT does (a clean close) once *condition* holds for its stats."""

    def check() -> None:
        assert crawler.stats is not None
        if crawler.crawling and condition(crawler.stats.get_stats()):
            loop.stop()
            if hasattr(crawler, "stop_async"):
                deferred_from_coro(crawler.stop_async())
            else:  # Scrapy < 2.14
                crawler.stop()

    loop = LoopingCall(check)
    loop.clock = installed_reactor()
    loop.start(0.02, now=False)


async def wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    """Let the reactor run until *condition* holds (bounded: a test never hangs on it)."""
    from twisted.internet import reactor  # noqa: PLC0415

    waited = 0.0
    while not condition():
        assert waited < timeout, "condition not met in time"
        await maybe_deferred_to_future(deferLater(reactor, 0.02, lambda: None))
        waited += 0.02
