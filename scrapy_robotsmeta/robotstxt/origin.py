"""The scope of one robots.txt: scheme, host and port (RFC 9309 §2.3)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple
from urllib.parse import SplitResult, urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443, "ftp": 21}
# "scheme://authority": all of a URL that its origin depends on; its path starts after it.
SCHEME_AUTHORITY = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*")


class Origin(NamedTuple):
    scheme: str
    host: str
    port: int | None

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        if self.port is None or self.port == _DEFAULT_PORTS.get(self.scheme):
            return f"{self.scheme}://{host}"
        return f"{self.scheme}://{host}:{self.port}"

    @property
    def robots_url(self) -> str:
        return f"{self}/robots.txt"


#: Schemes of URLs that have no robots.txt, whatever their authority says.
_NO_ROBOTS_TXT = ("data:", "file:")


def checked_origin(url: str) -> Origin | None:
    """The origin whose robots.txt applies to *url*; None for a URL none applies to (data:,
    file:, no host: its download succeeds or fails on its own)."""
    return None if url.startswith(_NO_ROBOTS_TXT) else origin_of(url)


def origin_of(url: str) -> Origin | None:
    """The origin of *url*: scheme and host lowercased, an IDN host in punycode, the default
    port made explicit. None for a URL without a host or with an invalid port."""
    prefix = SCHEME_AUTHORITY.match(url)
    if prefix is None:
        return _origin_of_parts(urlsplit(url))
    # Every request of a crawl asks this, and the requests of one origin share their prefix:
    # splitting each whole URL cost more than the rest of the robots.txt check.
    return _origin_of_prefix(prefix.group())


@lru_cache(maxsize=4096)
def _origin_of_prefix(scheme_authority: str) -> Origin | None:
    return _origin_of_parts(urlsplit(scheme_authority))


def _origin_of_parts(parts: SplitResult) -> Origin | None:
    host = parts.hostname
    if not host:
        return None
    try:
        port = parts.port
        if not host.isascii():
            host = host.encode("idna").decode("ascii")
    except (ValueError, UnicodeError):
        return None
    scheme = parts.scheme.lower()
    return Origin(scheme, host, port if port is not None else _DEFAULT_PORTS.get(scheme))
