"""Crawl-delay as a floor of the download slot: the slot arithmetic, and real crawls."""

from __future__ import annotations

import itertools

import pytest
from scrapy.core.downloader import Slot
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robotsmeta._compat import slot_jitter
from scrapy_robotsmeta.crawldelay import raise_floor
from scrapy_robotsmeta.testing import Site, html, static
from tests.crawl import ListSpider, crawl, pages_fetched


def make_slot(delay: float, jitter: float) -> Slot:
    try:
        return Slot(1, delay, jitter=jitter)  # type: ignore[call-arg,unused-ignore]
    except TypeError:  # Scrapy < 2.19: a random variation of ±50 %, or none
        return Slot(1, delay, jitter >= 0.5)  # type: ignore[arg-type,unused-ignore]


@pytest.mark.parametrize(("delay", "jitter"), [(0.0, 0.0), (0.5, 0.5), (3.0, 0.5)])
def test_every_wait_of_a_slot_is_at_least_the_crawl_delay(delay: float, jitter: float) -> None:
    slot = make_slot(delay, jitter)
    raise_floor(slot, 2.0)
    assert slot.delay >= 2.0
    assert slot.delay * (1 - slot_jitter(slot)) >= 2.0 - 1e-9  # the shortest random wait


def test_a_slot_already_slower_is_left_as_it_is() -> None:
    slot = make_slot(5.0, 0.0)
    assert not raise_floor(slot, 2.0)
    assert slot.delay == 5.0


@deferred_f_from_coro_f
async def test_crawl_delay_sets_a_floor_on_the_download_slot(site: Site) -> None:
    """Every wait is at least the Crawl-delay, even with Scrapy's random variation of the
    delay on (its default), which would otherwise take waits down to half of it."""
    site.add({"/robots.txt": static("User-agent: *\nCrawl-delay: 0.2\n")})
    site.add({f"/p/{i}": html("ok") for i in range(4)})
    urls = [site.url(f"/p/{i}") for i in range(4)]
    result = await crawl(urls, {"ROBOTSTXT_OBEY_CRAWL_DELAY": True}, ListSpider)
    times = sorted(at for at, path in site.log if path.startswith("/p/"))
    assert len(times) == 4
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    assert min(gaps) >= 0.19  # the server's clock is read a little after the downloader's
    assert result.stat("robotstxt/crawl_delay_applied") >= 1


@deferred_f_from_coro_f
async def test_crawl_delay_ignored_unless_enabled(site: Site) -> None:
    site.add({"/robots.txt": static("User-agent: *\nCrawl-delay: 5\n"), "/p": html("ok")})
    result = await crawl([site.url("/p")], spider_cls=ListSpider)
    assert pages_fetched(site) == {"/p"}
    assert result.stat("robotstxt/crawl_delay_applied") == 0
