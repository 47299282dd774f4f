"""Ask the robots.txt middleware of a running crawl why it allows or refuses URLs.

    python docs/examples/explain.py URL [URL ...]

The spider downloads the root of the first URL's origin, which fetches its robots.txt, then
prints the middleware's explanation of each URL. The documentation shows its output for the
demo site (``python example_project/demosite.py`` serves it).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urljoin

from scrapy import Request, Spider
from scrapy.crawler import CrawlerProcess
from scrapy.http import Response

from scrapy_robotsmeta import RobotsTxtMiddleware

SETTINGS = {
    "ADDONS": {"scrapy_robotsmeta.Addon": 0},
    "ROBOTSTXT_OBEY": True,
    "USER_AGENT": "ExampleBot/1.0 (+https://example.com/bot)",
    "LOG_LEVEL": "ERROR",
}


class ExplainSpider(Spider):
    name = "explain"

    def __init__(self, urls: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.urls = urls

    async def start(self) -> AsyncIterator[Request]:
        yield Request(urljoin(self.urls[0], "/"))

    def parse(self, response: Response) -> None:
        middleware = self.crawler.get_downloader_middleware(RobotsTxtMiddleware)
        assert middleware is not None  # robots.txt is obeyed: the add-on enabled it
        for url in self.urls:
            explanation = middleware.explain(url)
            print(explanation)  # as the DEBUG line of a refusal cites it
            print(explanation.policy, explanation.allowed, explanation.reason)
            print(repr(explanation.verdict))
            print(explanation.tries)  # each try of the fetch: its requests, redirects included


if __name__ == "__main__":
    process = CrawlerProcess(SETTINGS)
    process.crawl(ExplainSpider, urls=sys.argv[1:])
    process.start()
