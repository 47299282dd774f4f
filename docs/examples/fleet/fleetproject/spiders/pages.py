"""A fleet worker's spider: its start URLs come from Redis; it follows every link."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scrapy import Request
from scrapy.http import Response, TextResponse
from scrapy_redis.spiders import RedisSpider


# scrapy-redis has no type hints: to mypy, RedisSpider is Any.
class PagesSpider(RedisSpider):  # type: ignore[misc]
    """``scrapy crawl pages`` on every worker; ``LPUSH pages:start_urls URL`` to feed them."""

    name = "pages"
    redis_key = "pages:start_urls"

    def make_request_from_data(self, data: bytes) -> Request:
        # A start URL becomes an ordinary request, checked by the shared duplicate filter
        # like any link: scrapy-redis's own would bypass it, and a page both pushed and
        # linked to would be downloaded twice.
        return Request(data.decode(), callback=self.parse)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        if not isinstance(response, TextResponse):
            return  # an image, a PDF: no title, no links
        yield {"url": response.url, "title": response.css("title::text").get()}
        yield from response.follow_all(css="a", callback=self.parse)
