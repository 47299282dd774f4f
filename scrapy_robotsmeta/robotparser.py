"""The package's rules behind Scrapy's ``RobotParser`` interface, for the ``robots_parsed``
signal's receivers.

Scrapy's interface takes URLs and user agents as ``str`` or ``bytes``; :class:`RobotsTxt` takes
``str`` only, and its checks stay free of that test: they run for every request of a crawl,
while a receiver asks a few questions per origin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.robotstxt import RobotParser

from scrapy_robotsmeta.robotstxt import RobotsTxt

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


def _text(value: str | bytes) -> str:
    # surrogateescape: bytes that are not UTF-8 are matched as the bytes they are, as the
    # parser keeps them in rules; Scrapy's own parsers would raise on them.
    return value if isinstance(value, str) else value.decode("utf-8", "surrogateescape")


class ScrapyRobotParser(RobotParser):
    """*rules* answering Scrapy's ``RobotParser`` methods; ``rules`` is the
    :class:`RobotsTxt` itself, for the rest of its interface (``explain``, ``sitemaps``…)."""

    def __init__(self, rules: RobotsTxt) -> None:
        self.rules = rules

    @classmethod
    def from_crawler(cls, crawler: Crawler, robotstxt_body: bytes) -> ScrapyRobotParser:
        return cls(RobotsTxt.parse(robotstxt_body))

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        return self.rules.allowed(_text(url), _text(user_agent))

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        """The largest ``Crawl-delay`` of the group that applies (see
        :meth:`RobotsTxt.crawl_delay`). Reading it applies nothing."""
        return self.rules.crawl_delay(_text(user_agent))
