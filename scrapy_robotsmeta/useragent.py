"""The crawler's name, the one definition of the package, and the robots.txt token taken from it.

Page-level rules (``<meta name="NAME">``, ``X-Robots-Tag: NAME: …``) address a crawler by its
name as it writes it (``archive.org_bot``); robots.txt ``User-agent`` lines by an RFC 9309
product token, the name cut to letters, ``_`` and ``-`` (``archive``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.settings import BaseSettings

# An HTTP product name (RFC 9110 §5.6.2 "token"): what a User-Agent calls its software.
_NAME = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_FIRST_PRODUCT = re.compile(rf"\s*({_NAME})")
# "compatible; Name/x.y" may open the comment or follow other items in it, as in
# "(KHTML, like Gecko; compatible; bingbot/2.0; …)".
_COMPATIBLE = re.compile(rf"[(;]\s*compatible\s*;\s*({_NAME})", re.IGNORECASE)
# RFC 9309 §2.2.1: a product token is made of letters, "_" and "-" only.
_RFC9309_TOKEN = re.compile(r"[A-Za-z_-]*")


@lru_cache(maxsize=256)
def crawler_name(user_agent: str) -> str:
    """The crawler's name in a bare name or a full User-Agent header, lowercased.

    ``Mozilla/5.0 (compatible; MyCrawler/1.0; +https://example.com)`` names its crawler after
    ``compatible;`` in a comment; any other header names it as its first product, before ``/``.
    """
    found = _COMPATIBLE.search(user_agent) or _FIRST_PRODUCT.match(user_agent)
    return found.group(1).lower() if found else ""


def rfc9309_token(name: str) -> str:
    """The RFC 9309 product token of a name: its leading run of letters, ``_`` and ``-``,
    lowercased. The same cut applies to robots.txt ``User-agent`` values."""
    if name.isascii() and name.isalpha():  # most names: letters only, a token whole
        return name.lower()
    match = _RFC9309_TOKEN.match(name)
    return match.group().lower() if match else ""


@lru_cache(maxsize=256)
def product_token(user_agent: str) -> str:
    """The robots.txt product token of a bare token or a full User-Agent header."""
    return rfc9309_token(crawler_name(user_agent))


class CrawlerToken:
    """Which crawler a request speaks for, per the package's one rule.

    ``ROBOTSTXT_USER_AGENT`` (Scrapy's setting) wins when set; otherwise the request's own
    ``User-Agent`` header, which UserAgentMiddleware fills from ``USER_AGENT``; and
    ``USER_AGENT`` for a request that has no header yet (one that has not reached
    UserAgentMiddleware, as in a downloader middleware placed before it).
    """

    def __init__(self, robotstxt_user_agent: str | None, default_user_agent: str) -> None:
        self._fixed = robotstxt_user_agent or None
        self._default = default_user_agent
        #: Where the name comes from, for messages: the setting that holds it.
        self.source = "ROBOTSTXT_USER_AGENT" if self._fixed is not None else "USER_AGENT"
        # Most crawls have one name: computed once rather than looked up per request.
        self._fixed_token = product_token(self._fixed) if self._fixed is not None else None

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> CrawlerToken:
        return cls(settings.get("ROBOTSTXT_USER_AGENT"), settings.get("USER_AGENT") or "")

    def user_agent(self, request: Request | None) -> str:
        """The User-Agent (or bare name) that names the crawler for *request*."""
        if self._fixed is not None:
            return self._fixed
        return self.header(request)

    def header(self, request: Request | None) -> str:
        """The User-Agent header *request* is sent with: its own, else ``USER_AGENT``'s."""
        header = request.headers.get(b"User-Agent") if request is not None else None
        return header.decode("latin-1") if header else self._default

    def for_request(self, request: Request | None) -> str:
        """The robots.txt product token for *request*."""
        if self._fixed_token is not None:
            return self._fixed_token
        return product_token(self.user_agent(request))

    def name_for_request(self, request: Request | None) -> str:
        """The crawler's name for *request*, as page-level rules address it."""
        return crawler_name(self.user_agent(request))
