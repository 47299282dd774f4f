"""The crawler's product token: the name robots.txt groups and bot-named metas are matched to."""

from __future__ import annotations

import re
from functools import lru_cache

from scrapy import Request
from scrapy.settings import BaseSettings

# RFC 9309 §2.2.1: a product token is made of letters, "_" and "-" only.
_TOKEN = re.compile(r"[A-Za-z_-]*")
# "compatible; Name/x.y" may open the comment or follow other items in it, as in
# "(KHTML, like Gecko; compatible; bingbot/2.0; …)".
_COMPATIBLE = re.compile(r"[(;]\s*compatible\s*;\s*([^;/)\s]+)", re.IGNORECASE)


@lru_cache(maxsize=256)
def product_token(user_agent: str) -> str:
    """Reduce a bare token or a full User-Agent header to its product token, lowercased.

    ``Mozilla/5.0 (compatible; MyCrawler/1.0; +https://example.com)`` names its crawler after
    ``compatible;`` in a comment; any other header names it as its first product, before ``/``.
    The name is then cut to its leading run of ``[A-Za-z_-]``, the same cut that is applied
    to the ``User-agent`` lines of robots.txt, so that both sides compare the same way.
    """
    compatible = _COMPATIBLE.search(user_agent)
    name = compatible.group(1) if compatible else user_agent.strip().split("/", 1)[0]
    match = _TOKEN.match(name.strip())
    return match.group(0).lower() if match else ""


class CrawlerToken:
    """Which product token a request speaks for, per the package's one rule.

    ``ROBOTSTXT_USER_AGENT`` (Scrapy's setting) wins when set; otherwise the request's own
    ``User-Agent`` header, which UserAgentMiddleware fills from ``USER_AGENT`` or the spider.
    """

    def __init__(self, robotstxt_user_agent: str | None, default_user_agent: str) -> None:
        self._fixed = product_token(robotstxt_user_agent) if robotstxt_user_agent else None
        self._default = default_user_agent

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> CrawlerToken:
        return cls(settings.get("ROBOTSTXT_USER_AGENT"), settings.get("USER_AGENT") or "")

    def for_request(self, request: Request | None) -> str:
        if self._fixed is not None:
            return self._fixed
        header = request.headers.get(b"User-Agent") if request is not None else None
        return product_token(header.decode("latin-1") if header else self._default)
