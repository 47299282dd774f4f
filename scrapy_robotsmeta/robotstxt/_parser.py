"""robots.txt bytes → groups of rules, as RFC 9309 §2.1-2.2 and Google's parser read them."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import NamedTuple

# RFC 9309 §2.5: parse at least 500 KiB; everything after that is ignored.
MAX_BYTES = 512_000

_BOM = b"\xef\xbb\xbf"
# RFC 9309 §2.2.1: the product token of a user-agent line is its leading run of these.
_AGENT = re.compile(r"[A-Za-z_-]+")


class Rule(NamedTuple):
    """One ``allow`` or ``disallow`` line: its verdict, its path as written, its line number."""

    allow: bool
    path: str
    line: int


@dataclass
class GroupSpec:
    """A group as written: the agents its user-agent lines name, then its rules."""

    agents: list[str] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    crawl_delay: float | None = None


@dataclass
class ParsedFile:
    groups: list[GroupSpec]
    sitemaps: list[str]
    truncated: bool


def _agent_of(value: str) -> str | None:
    if value.startswith("*"):
        return "*"
    match = _AGENT.match(value)
    return match.group().lower() if match else None


def _crawl_delay(value: str) -> float | None:
    try:
        delay = float(value)
    except ValueError:
        return None
    return delay if math.isfinite(delay) and delay >= 0 else None


def _readable(value: str) -> str:
    """Undo ``surrogateescape`` for values read as text (sitemap URLs)."""
    if value.isascii():
        return value
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def parse_file(body: bytes) -> ParsedFile:
    truncated = len(body) > MAX_BYTES
    head = body[:MAX_BYTES]
    if head.startswith(_BOM):
        head = head[len(_BOM) :]
    # surrogateescape: bytes that are not UTF-8 survive, to be escaped as they are in rules.
    text = head.decode("utf-8", "surrogateescape")
    groups: list[GroupSpec] = []
    sitemaps: list[str] = []
    group: GroupSpec | None = None
    # A group's user-agent lines end where its first allow/disallow line is; only a
    # user-agent line after that starts a new group (RFC 9309 §2.1).
    group_has_rules = False

    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for number, line in enumerate(lines, 1):
        comment = line.find("#")
        if comment >= 0:
            line = line[:comment]  # noqa: PLW2901
        colon = line.find(":")
        if colon < 0:
            continue
        key = line[:colon].strip(" \t").lower()
        value = line[colon + 1 :].strip(" \t")
        if key == "user-agent":
            if group is None or group_has_rules:
                group = GroupSpec()
                groups.append(group)
                group_has_rules = False
            agent = _agent_of(value)
            if agent is not None:
                group.agents.append(agent)
        elif key in ("allow", "disallow"):
            if group is None:
                continue  # RFC 9309 §2.2.2: rules outside any group are ignored
            group_has_rules = True
            if value:  # an empty path matches nothing
                group.rules.append(Rule(key == "allow", value, number))
        elif key == "crawl-delay":
            if group is not None and group.crawl_delay is None:
                group.crawl_delay = _crawl_delay(value)
        elif key == "sitemap" and value:
            sitemaps.append(_readable(value))
    return ParsedFile(groups, sitemaps, truncated)
