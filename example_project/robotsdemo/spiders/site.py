"""An ordinary CrawlSpider: it knows nothing of robots rules; scrapy-robotsmeta obeys them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class SiteSpider(CrawlSpider):
    """Follows every link of the site it starts on: ``scrapy crawl site -a start_url=URL``."""

    name = "site"
    # deny_extensions=(): documents (the PDF) are followed too, not only pages.
    rules = (Rule(LinkExtractor(deny_extensions=()), callback="parse_page", follow=True),)

    def __init__(self, start_url: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.start_urls = [start_url]

    def parse_start_url(self, response: Response, **kwargs: Any) -> Iterator[dict[str, Any]]:
        return self.parse_page(response)

    def parse_page(self, response: Response) -> Iterator[dict[str, Any]]:
        title = response.css("title::text").get() if isinstance(response, TextResponse) else None
        yield {"url": response.url, "title": title}
