"""What a response says to robots: its X-Robots-Tag headers, its robots metas, its nofollow links.

HTML is read as the HTML parser behind ``response.selector`` (lxml with libxml2's HTML5
tokenizer) sees it: comments, script, style, textarea and title text hold no elements. The one
context that parser gets wrong is ``<template>``, whose content it keeps in the tree although
it is no part of the document, so elements under a template are skipped here. ``<noscript>``
content counts: a crawler that runs no script sees it as elements.

Every HTML page is parsed at most once: the selector the callback built is reused, and one
built here is left cached on the response for the callback and the link extractors. One
exception: when the only possible robots metas of a long page come early (in its head, as
usual), only that part is parsed, a fraction of the page, which a callback that reads no HTML
(regular expressions, another parser) never pays for in full.
"""

from __future__ import annotations

import codecs
import re
import weakref
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, TypeGuard
from urllib.parse import urljoin

import parsel
from lxml import etree  # type: ignore[import-untyped]
from scrapy.http import HtmlResponse, Response, TextResponse
from scrapy.utils.response import get_base_url
from w3lib.url import canonicalize_url

from scrapy_robotsmeta.robotsmeta.directives import ascii_lower
from scrapy_robotsmeta.usage.preferences import Statement, shown
from scrapy_robotsmeta.usage.tdmrep import HEADER_POLICY, HEADER_RESERVATION, META_NAMES
from scrapy_robotsmeta.usage.vocabulary import Reading, read_content_signal, read_content_usage

_HTML_MEDIA_TYPES = (b"text/html", b"application/xhtml+xml")
_USAGE_HEADERS = ((b"Content-Usage", read_content_usage), (b"Content-Signal", read_content_signal))
# HTML's "ASCII whitespace": what attribute values are trimmed and token lists split on.
_HTML_SPACE = " \t\n\f\r"
_HTML_SPACES = re.compile(r"[ \t\n\f\r]+")
# An attribute value can spell a name through character references: numeric ones for any
# character, and for "_" also &lowbar; and &UnderBar; (no named reference decodes to an ASCII
# letter or to "-", which is all a name of a robot or a rule is made of).
_CHARACTER_REFERENCES = (b"&#", b"&lowbar;", b"&underbar;")
# How much more of a page is parsed at a time, past its last "<meta": little at first (the
# element after a meta usually starts on the next line), then more and more, up to _CHUNK,
# when a long text follows it.
_FIRST_STEP = 512
_CHUNK = 4096
_REL_VALUES = etree.XPath("//a/@rel|//area/@rel")
# Characters that URL parsers drop, or read as "/" (ASCII whitespace and controls, backslash):
# a path holding one cannot be read from its text (see _path_tail).
_UNREADABLE_PATH = re.compile(r"[\x00-\x20\x7f\\]")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
# RFC 3986's unreserved characters: no canonicalisation escapes or unescapes them.
_UNRESERVED = re.compile(r"[A-Za-z0-9._~-]*")


def header_values(response: Response) -> list[str]:
    """Every X-Robots-Tag header value, whatever the type of the response."""
    headers = response.headers
    if b"X-Robots-Tag" not in headers:  # as in usage_header: most responses have none
        return []
    return [value.decode("latin-1") for value in headers.getlist(b"X-Robots-Tag")]


def read_usage_headers(response: Response) -> Reading:
    """What the ``Content-Usage`` and ``Content-Signal`` headers state, each statement's
    source quoting the header."""
    statements: list[Statement] = []
    ignored: list[str] = []
    for name, read in _USAGE_HEADERS:
        value = usage_header(response, name)
        if value is not None:
            reading = read(value, f"header {name.decode()}: {shown(value)}")
            statements += reading.statements
            ignored += reading.ignored
    return Reading(tuple(statements), tuple(ignored))


def usage_header(response: Response, name: bytes) -> str | None:
    """The value of the ``Content-Usage`` or ``Content-Signal`` header, its field lines
    joined by commas as RFC 9110 §5.3 combines them; None when the response has none."""
    headers = response.headers
    # Most responses have neither: a membership test answers that several times faster than
    # getlist(), which raises and catches a KeyError inside.
    if name not in headers:
        return None
    return ", ".join(value.decode("latin-1") for value in headers.getlist(name))


def is_html(response: Response) -> TypeGuard[TextResponse]:
    """Whether the body is HTML by its Content-Type, or by Scrapy's guess when it has none."""
    if not isinstance(response, TextResponse):
        return False
    content_type = response.headers.get(b"Content-Type")
    if content_type is None:
        return isinstance(response, HtmlResponse)
    return content_type.split(b";", 1)[0].strip().lower() in _HTML_MEDIA_TYPES


def meta_contents(response: Response, crawler: str) -> list[str]:
    """The ``content`` of every ``<meta name="robots">`` and of every meta named after the
    *crawler* (its lowercased name, ``archive.org_bot``), in document order."""
    return [content for _, content in named_metas(response, robots_meta_names(crawler))]


def robots_meta_names(crawler: str) -> tuple[str, ...]:
    """The names of the metas that address the *crawler* (lowercased): robots, and its own."""
    return ("robots", crawler) if crawler else ("robots",)


def named_metas(response: Response, names: tuple[str, ...]) -> list[tuple[str, str]]:
    """The (lowercased name, ``content``) of every meta named one of *names* (lowercase), in
    document order: one parse, however many vocabularies ask."""
    if not is_html(response):
        return []
    if _parsed(response):
        metas = _every_meta(response)
    else:
        metas = _named_metas(response, _spellings(names))
    found = []
    for meta in metas:
        name = meta.get("name")
        if name is None:
            continue
        name = ascii_lower(name.strip(_HTML_SPACE))
        if name not in names:
            continue
        content = meta.get("content")
        if content is not None and not _in_template(meta):
            found.append((name, content))
    return found


@lru_cache(maxsize=64)
def _spellings(names: tuple[str, ...]) -> tuple[str, ...]:
    """What a page is searched for to tell whether it may hold a meta named one of *names*:
    each name, or the part of it up to its first hyphen, so that names sharing it
    (``tdm-reservation``, ``tdm-policy``) cost one search of the page."""
    return tuple(dict.fromkeys(name[: name.find("-") + 1] or name for name in names))


def tdmrep_values(
    response: Response, metas: list[tuple[str, str]]
) -> tuple[tuple[str | None, str | None], tuple[str | None, str | None]]:
    """The TDMRep values of *response*: its ``tdm-reservation`` and ``tdm-policy`` headers,
    then the same from *metas* (see :func:`named_metas`), each None when absent. A header of
    several field lines, or a meta written more than once, counts by its first value."""
    headers = tuple(_first_header(response, name) for name in (HEADER_RESERVATION, HEADER_POLICY))
    found = dict(reversed(metas))  # the first of each name
    values = tuple(found.get(name) for name in META_NAMES)
    return (headers[0], headers[1]), (values[0], values[1])


def _first_header(response: Response, name: bytes) -> str | None:
    headers = response.headers
    if name not in headers:  # as in usage_header: most responses have none
        return None
    values = headers.getlist(name)  # get() would give the last line
    return values[0].decode("latin-1") if values else None


def rel_nofollow_urls(response: Response) -> frozenset[str]:
    """Canonical URLs of the ``<a>``/``<area>`` links with rel ``nofollow``, minus those that
    another link of the page without that token points to as well."""
    if not is_html(response) or not _may_have_rel_nofollow(response):
        return frozenset()
    nofollow: list[Any] = []
    followed: list[tuple[Any, str]] = []
    for link in _root(response).iter("a", "area"):
        href = link.get("href")
        if href is not None:
            rel = link.get("rel")  # most links have none
            if rel is not None and "nofollow" in _HTML_SPACES.split(ascii_lower(rel)):
                nofollow.append(link)
            else:
                followed.append((link, href))
    resolve = _Resolver(response)
    urls = {url for link in nofollow if (url := resolve(link)) is not None}
    # Resolving and canonicalising a link costs more than all the rest, so a followed link is
    # resolved only when it may land on one of the few nofollow URLs.
    targets = NofollowTargets(frozenset(urls))
    for link, href in followed:
        if urls and targets.may_match(href.strip(_HTML_SPACE)):
            urls.discard(resolve(link))
    return frozenset(urls)


class NofollowTargets:
    """Canonical URLs that a page links to only with rel ``nofollow``, and a cheap test of
    another URL against them."""

    __slots__ = ("_tails", "urls")

    def __init__(self, urls: frozenset[str]) -> None:
        self.urls = urls
        tails = [_path_tail(url) for url in urls]
        # None: the path of some URL cannot be read from its text, so no tail rules one out.
        self._tails = None if None in tails else frozenset(t for t in tails if t is not None)

    def __bool__(self) -> bool:
        return bool(self.urls)

    def __contains__(self, url: str) -> bool:
        """Whether *url* (absolute) has one of the canonical URLs."""
        return self.may_match(url) and canonical_url(url) in self.urls

    def may_match(self, url: str) -> bool:
        """False only when *url*, absolute or relative to any base, cannot canonicalise to one
        of the URLs: the last segment of its path, read from its text, is no URL's last one."""
        if not self.urls:
            return False
        if self._tails is None:
            return True
        tail = _cached_link_tail(url) if len(url) <= _CACHED_URL_LENGTH else _link_tail(url)
        return tail is None or tail in self._tails


def canonical_url(url: str, encoding: str = "utf-8") -> str:
    """The form under which a link and a request compare equal: Scrapy's canonical URL, as for
    request fingerprints (query sorted, escapes normalised, fragment dropped)."""
    return canonicalize_url(url, encoding=encoding)


class _Resolver:
    """The canonical absolute URL of a link of *response*; None for a link in a template or
    whose href is not a URL."""

    def __init__(self, response: TextResponse) -> None:
        self._encoding = response.encoding
        try:
            self._base_url = get_base_url(response)
        except ValueError:  # an unusable <base href> is ignored, as browsers ignore it
            self._base_url = response.url

    def __call__(self, link: Any) -> str | None:
        if _in_template(link):
            return None
        href = link.get("href").strip(_HTML_SPACE)
        try:
            return canonical_url(urljoin(self._base_url, href), self._encoding)
        except ValueError:  # not a URL (e.g. "http://[::1"); no request can be made from it
            return None


def _may_have_rel_nofollow(response: TextResponse) -> bool:
    """False only when no link of the page can have the ``nofollow`` token: read from the
    rel values when the page is parsed, else from the body's bytes."""
    if _parsed(response):
        return any("nofollow" in ascii_lower(rel) for rel in _REL_VALUES(_root(response)))
    return _may_spell(response, ("nofollow",), after=b"<a")


def _path_tail(url: str) -> str | None:
    """The last segment of the path of *url* (absolute or relative) as written, or None when
    the text alone does not tell it (no path: a relative one is the base's; another scheme)."""
    path = url.partition("#")[0].partition("?")[0]
    if not path or not path.isascii() or _UNREADABLE_PATH.search(path):
        return None
    scheme = _SCHEME.match(path)
    if scheme is not None:
        path = path[scheme.end() :]
        if not path.startswith("//"):
            return None
    if path.startswith("//"):
        authority, _, path = path[2:].partition("/")
        if not authority:  # parsers tell an empty authority from none in their own ways
            return None
    return path.rpartition("/")[2]  # an authority without a path has the canonical "/"


def _link_tail(url: str) -> str | None:
    """The last segment of the canonical form of *url*'s path when it is that of *url* as
    written (unreserved characters only, no dot segment), else None."""
    tail = _path_tail(url)
    if tail is None or tail in (".", "..") or not _UNRESERVED.fullmatch(tail):
        return None
    return tail


# Pages of a site link to the same URLs (navigation, other pages' links): many a link and
# request is read again here, on another page. Only URLs of a usual length are kept, so that
# hostile pages cannot fill the memory with them.
_cached_link_tail = lru_cache(maxsize=4096)(_link_tail)
_CACHED_URL_LENGTH = 2048


def _parsed(response: TextResponse) -> bool:
    # Scrapy caches the selector in this slot; reading it tells whether parsing is free.
    return getattr(response, "_cached_selector", None) is not None


def _root(response: TextResponse) -> Any:
    """The lxml root of ``response.selector``, building (and so caching) it when needed."""
    try:
        return response.selector.root
    except ValueError:
        # Scrapy cannot build the selector of a page whose <base href> is not a URL; such a
        # base is ignored, as browsers ignore it, and the page is parsed without it.
        return parsel.Selector(text=response.text, type="html").root


def _may_spell(response: TextResponse, words: tuple[str, ...], after: bytes) -> bool:
    """Whether an attribute value of the body may decode to one of *words*.

    Only the part from the first *after* on counts: an element starts with its tag name, which
    cannot be escaped (``<meta``, ``<a``), so its attributes come after the first one.
    """
    lowered = _lowered(response)
    start = lowered.find(after)
    if start < 0:
        return False
    if not all(word.isascii() for word in words) or _has_character_reference(lowered, start):
        return True
    # The first spelling will do: forward searches stop there, most often in the head.
    return any(lowered.find(word.encode(), start) >= 0 for word in words)


def _has_character_reference(lowered: bytes, start: int) -> bool:
    """Whether the lowered bytes hold, from *start* on, a character reference that may spell
    a name (see _CHARACTER_REFERENCES)."""
    # From one "&" to the next: the search runs at memchr's speed, and pages hold few of them.
    at = lowered.find(b"&", start)
    while at >= 0:
        if lowered.startswith(_CHARACTER_REFERENCES, at):
            return True
        at = lowered.find(b"&", at + 1)
    return False


class _LastLowered:
    """The lowered ASCII bytes of the last response asked for: its metas and then its links
    are checked on the same bytes, which are lowered once."""

    __slots__ = ("_lowered", "_response")

    def __init__(self) -> None:
        self._response: weakref.ref[TextResponse] | None = None
        self._lowered = b""

    def __call__(self, response: TextResponse) -> bytes:
        if self._response is None or self._response() is not response:
            self._lowered = _ascii_bytes(response).lower()
            self._response = weakref.ref(response)
        return self._lowered


_lowered = _LastLowered()


def _named_metas(response: TextResponse, names: tuple[str, ...]) -> Iterable[Any]:
    """The meta elements that may be named one of *names*, parsing no more than needed:
    nothing when no attribute value can spell a name; else the part of a long page up to its
    last ``<meta`` when it is plain ASCII (every meta element starts at one, and HTML is parsed
    from start to end, so the meta elements there are those of the whole page); else the whole
    page (kept as the selector)."""
    if not _may_spell(response, names, after=b"<meta"):
        return ()
    metas = None
    if _ascii_transparent(response.encoding):
        last = _lowered(response).rfind(b"<meta")
        # A meta in the page's last chunk would have most of the page parsed: the whole of
        # it is parsed instead, and kept for the callback.
        if last + _CHUNK < len(response.body):
            metas = _metas_before(response.body, last)
    return _every_meta(response) if metas is None else metas


def _every_meta(response: TextResponse) -> Iterable[Any]:
    metas: Iterable[Any] = _root(response).iter("meta")
    return metas


def _metas_before(body: bytes, position: int) -> list[Any] | None:
    """The meta elements of *body* up to the tag that holds *position* at least, fed to the
    parser chunk by chunk until it starts an element on a later line (by then every tag before
    is whole). None when what would be fed is not what the selector parses: the body must
    start with its markup and be ASCII without NUL as far as it is read."""
    if not body.startswith(b"<"):
        return None
    line = body.count(b"\n", 0, position) + 1
    # The options of parsel's parser, whose selector the whole page gets.
    parser = etree.HTMLPullParser(events=("start",), encoding="utf8", recover=True, huge_tree=True)
    metas: list[Any] = []
    fed = 0
    step = _FIRST_STEP
    while fed < len(body):
        chunk = body[fed : max(position + 1, fed + step)]
        step = min(2 * step, _CHUNK)
        if not chunk.isascii() or b"\x00" in chunk:
            return None
        parser.feed(chunk)
        fed += len(chunk)
        passed = False
        for _, element in parser.read_events():
            if element.tag == "meta":
                metas.append(element)
            passed = passed or element.sourceline > line
        if passed:
            return metas
    parser.close()
    metas.extend(element for _, element in parser.read_events() if element.tag == "meta")
    return metas


def _ascii_bytes(response: TextResponse) -> bytes:
    """Bytes in which each ASCII character of the text is that same byte: the body itself when
    its encoding allows (lowering bytes is much cheaper than lowering non-ASCII text)."""
    if _ascii_transparent(response.encoding):
        return response.body
    return response.text.encode("utf-8", "replace")


@lru_cache(maxsize=64)
def _ascii_transparent(encoding: str) -> bool:
    """Whether ASCII characters and ASCII bytes are the same thing both ways in *encoding*."""
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return False
    return name in ("utf-8", "ascii") or name.startswith(("iso8859-", "cp125"))


def _in_template(element: Any) -> bool:
    return next(element.iterancestors("template"), None) is not None
