"""A spider that knows nothing of robots rules: scrapy-robotsmeta obeys them for it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scrapy import Spider
from scrapy.http import Response, TextResponse


class PagesSpider(Spider):
    """Follows every link from the page it starts on: ``scrapy crawl pages -a start_url=URL``;
    one item per page."""

    name = "pages"

    def __init__(self, start_url: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.start_urls = [start_url]

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        if not isinstance(response, TextResponse):
            return  # an image, a PDF: no title, no links
        yield {
            "url": response.url,
            "title": response.css("title::text").get(),
            "description": response.css('meta[name="description"]::attr(content)').get(),
        }
        yield from response.follow_all(css="a", callback=self.parse)
