"""Crawl-delay (``ROBOTSTXT_OBEY_CRAWL_DELAY``): the group's delay as a floor of the download
slot of every request it applies to.

Crawl-delay is no part of RFC 9309; Google ignores it, Bing and Yandex read it as the seconds
between two requests, which is what a download slot's delay is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.signals import request_reached_downloader

from scrapy_robotsmeta._compat import set_slot_jitter, slot_jitter
from scrapy_robotsmeta.robotstxt.origin import origin_of

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler

    from scrapy_robotsmeta.robotstxt.core import RobotsTxtCore
    from scrapy_robotsmeta.useragent import CrawlerToken


class CrawlDelay:
    """A ``request_reached_downloader`` receiver: it reads the rules the core already holds,
    and never fetches."""

    def __init__(self, crawler: Crawler, core: RobotsTxtCore, token: CrawlerToken) -> None:
        assert crawler.stats is not None
        self.crawler, self.core, self.token, self.stats = crawler, core, token, crawler.stats

    @classmethod
    def connect(cls, crawler: Crawler, core: RobotsTxtCore, token: CrawlerToken) -> CrawlDelay:
        """One made and connected: keep it (signals hold their receivers weakly)."""
        delay = cls(crawler, core, token)
        crawler.signals.connect(delay.request_reached_downloader, request_reached_downloader)
        return delay

    def request_reached_downloader(self, request: Request, spider: Any) -> None:
        origin = origin_of(request.url)
        if origin is None:
            return
        # peek, not check: a request that is not checked (robots.txt itself, dont_obey)
        # must not add an empty origin to the cache, nor push a real one out of it.
        state = self.core.peek(origin)
        if state is None or state.rules is None:
            return
        delay = state.rules.crawl_delay(self.token.for_request(request))
        slot = self.crawler.engine.downloader.slots.get(request.meta.get("download_slot", ""))
        if delay is not None and slot is not None and raise_floor(slot, delay):
            self.stats.inc_value("robotstxt/crawl_delay_applied")


def raise_floor(slot: Slot, floor: float) -> bool:
    """Make every wait of the slot at least ``floor``: its delay, and also the random variation
    Scrapy adds to it (RANDOMIZE_DOWNLOAD_DELAY, DOWNLOAD_DELAY_JITTER), which would otherwise
    take half of the waits under the Crawl-delay. True if the slot changed."""
    changed = slot.delay < floor
    if changed:
        slot.delay = floor
    if slot.delay * (1 - slot_jitter(slot)) < floor:
        set_slot_jitter(slot, 1 - floor / slot.delay)
        changed = True
    return changed
