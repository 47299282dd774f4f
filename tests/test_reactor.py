"""Time for the robots.txt part (``reactor.py``): the clock a crawler is given. (``Tasks``, which
holds background coroutines, is exercised by every crawl that fetches a robots.txt.)"""

from __future__ import annotations

from scrapy import Spider
from scrapy.utils.test import get_crawler
from twisted.internet.task import Clock

from scrapy_robotsmeta.reactor import CLOCK_ATTRIBUTE, crawler_clock
from scrapy_robotsmeta.testing import installed_reactor


def test_a_crawler_given_a_clock_runs_on_it() -> None:
    crawler = get_crawler(Spider)
    clock = Clock()
    setattr(crawler, CLOCK_ATTRIBUTE, clock)
    assert crawler_clock(crawler) is clock


def test_a_crawler_without_one_runs_on_the_reactor() -> None:
    assert crawler_clock(get_crawler(Spider)) is installed_reactor()
