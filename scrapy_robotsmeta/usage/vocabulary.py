"""What each syntax's labels say about which use: the one table to edit when a draft changes.

- ``Content-Usage`` (robots.txt rule and response header): the labels of
  draft-ietf-aipref-vocab-08 in an RFC 9651 Dictionary, each ``y`` or ``n`` (its §6), attached
  as draft-ietf-aipref-attach-05 says.
- ``Content-Signal`` (robots.txt line, and a header some servers send): Cloudflare's Content
  Signals Policy (September 2025), ``name=yes|no`` items separated by commas.
- ``noai`` / ``noimageai`` page rules (meta robots, X-Robots-Tag), as DeviantArt defined them in
  2022: no use in AI training data, of the page / of its images.

A label speaks for every use it lists: IETF ``ai-use`` (any input of the content into a
generative model) covers Cloudflare's narrower ``ai-input`` (retrieval, grounding), and training
on a page is training on its images too.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple, TypeAlias, cast

import http_sf

from scrapy_robotsmeta.usage.preferences import Statement

_AI_TRAIN = ("ai_train", "ai_train_images")

#: draft-ietf-aipref-vocab-08 §4: its three categories (case-sensitive labels, §6.1).
CONTENT_USAGE_LABELS: dict[str, tuple[str, ...]] = {
    "search": ("search",),
    "train-ai": _AI_TRAIN,
    "ai-use": ("ai_use", "ai_input"),
}
_CONTENT_USAGE_VALUES = {http_sf.Token("y"): True, http_sf.Token("n"): False}

#: Cloudflare's Content Signals Policy: its three signals.
CONTENT_SIGNAL_NAMES: dict[str, tuple[str, ...]] = {
    "search": ("search",),
    "ai-input": ("ai_input",),
    "ai-train": _AI_TRAIN,
}
_CONTENT_SIGNAL_VALUES = {"yes": True, "no": False}

#: Page rules → the uses they refuse.
PAGE_RULES: dict[str, tuple[str, ...]] = {
    "noai": _AI_TRAIN,
    "noimageai": ("ai_train_images",),
}


class Reading(NamedTuple):
    """The statements one value makes, and what in it was left out and why (for the log)."""

    statements: tuple[Statement, ...]
    ignored: tuple[str, ...]


def read_content_usage(value: str, source: str) -> Reading:
    """A ``Content-Usage`` value: an RFC 9651 Dictionary of the vocabulary's labels.

    As draft-ietf-aipref-vocab-08 §6 processes it: a value that is not a Dictionary (an
    uppercase label included) states nothing; a label's value other than the token ``y`` or
    ``n`` states nothing about it; parameters and unknown labels are ignored; a repeated label
    keeps its last value.
    """
    return _content_usage(value, source)


@lru_cache(maxsize=1024)  # one site's robots.txt line or header is read again for each page
def _content_usage(value: str, source: str) -> Reading:
    members = _dictionary(value)
    if members is None:
        return Reading((), (f"{source}: not a structured-field dictionary; it states nothing",))
    statements: list[Statement] = []
    ignored: list[str] = []
    for label, (token, _parameters) in members.items():
        uses = CONTENT_USAGE_LABELS.get(label)
        if uses is None:
            ignored.append(f"{source}: unknown label {label!r}")
            continue
        allowed = _CONTENT_USAGE_VALUES.get(token) if isinstance(token, http_sf.Token) else None
        if allowed is None:
            ignored.append(f"{source}: {label}: not the token y or n")
            continue
        statements.extend(Statement(use, allowed, source) for use in uses)
    return Reading(tuple(statements), tuple(ignored))


#: What http-sf gives for a parsed Dictionary: each member as its value and its parameters.
_Members: TypeAlias = dict[str, tuple[object, dict[str, object]]]


def _dictionary(value: str) -> _Members | None:
    """*value* as an RFC 9651 Dictionary, or None where it fails to parse: any failure
    anywhere fails the whole value (§4.2), and structured fields are ASCII only. SP and HTAB
    around the value are dropped first, as HTTP drops them around a field value (RFC 9110
    §5.5); RFC 9651 itself would refuse a leading HTAB."""
    value = value.strip(" \t")
    if not value:
        return {}  # an empty Dictionary is a field left out (§3.2); http-sf < 1.4 refuses it
    if not value.isascii():
        return None
    try:
        return cast(_Members, http_sf.parse(value.encode("ascii"), tltype="dictionary"))
    except http_sf.StructuredFieldError:
        return None


def read_content_signal(value: str, source: str) -> Reading:
    """A ``Content-Signal`` value: ``name=value`` items separated by commas.

    The policy gives no grammar beyond its examples, so it is read leniently: spaces around
    names, values and commas are dropped, names and values compare case-insensitively, a
    repeated name keeps its last value (as a dictionary would), and unknown names (``use``)
    or values other than ``yes`` / ``no`` state nothing.
    """
    return _content_signal(value, source)


@lru_cache(maxsize=1024)
def _content_signal(value: str, source: str) -> Reading:
    found: dict[str, bool] = {}
    ignored: list[str] = []
    for item in value.split(","):
        name, equals, setting = item.partition("=")
        name, setting = name.strip(" \t").lower(), setting.strip(" \t").lower()
        if not name and not equals:
            continue  # an empty item: a stray comma
        if name not in CONTENT_SIGNAL_NAMES:
            ignored.append(f"{source}: unknown signal {name!r}")
        elif setting not in _CONTENT_SIGNAL_VALUES:
            ignored.append(f"{source}: {name}: expected yes or no")
        else:
            found[name] = _CONTENT_SIGNAL_VALUES[setting]
    statements = tuple(
        Statement(use, allowed, source)
        for name, allowed in found.items()
        for use in CONTENT_SIGNAL_NAMES[name]
    )
    return Reading(statements, tuple(ignored))


def read_page_rule(rule: str, source: str) -> tuple[Statement, ...]:
    """The statements of a ``noai`` / ``noimageai`` page rule (lowercased); () for others."""
    return tuple(Statement(use, False, source) for use in PAGE_RULES.get(rule, ()))
