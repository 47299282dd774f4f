"""robots.txt bytes → groups of rules, as RFC 9309 §2.1-2.2 and Google's parser read them.

Where Googlebot reads more than RFC 9309 says, and what site owners test their files against
reads the same, this parser reads as Googlebot: a line whose colon was forgotten
(``disallow /``), a misspelt or lengthened field name (``useragent``, ``dissallow``,
``disallowed``) and a line longer than Google's limit (cut at it).
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from scrapy_robotsmeta.usage.preferences import shown
from scrapy_robotsmeta.useragent import rfc9309_token

# RFC 9309 §2.5: parse at least 500 KiB; everything after that is ignored.
MAX_BYTES = 512_000

_BOM = b"\xef\xbb\xbf"
# Googlebot keeps the first 16,663 bytes of a line (its buffer is 8 x 2,083, the longest URL it
# handles, with one byte for the terminator) and ignores the rest of the line.
MAX_LINE_BYTES = 8 * 2083 - 1
# A line of fewer characters cannot hold more bytes than that, however it is encoded.
_SHORT_LINE = MAX_LINE_BYTES // 4
# Googlebot's reading of a line that has no colon: exactly two words, a key and its value.
_TWO_WORDS = re.compile(r"[ \t]*([^ \t]+)[ \t]+([^ \t]+)[ \t]*")
# Googlebot's reading of field names: any name that starts with one of these spellings (its
# own list of frequent misspellings included) is that field.
_SPELLINGS = (
    ("user-agent", ("user-agent", "useragent", "user agent")),
    ("allow", ("allow",)),
    ("disallow", ("disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw")),
    ("sitemap", ("sitemap", "site-map")),
)
# The spelling of the usage lines' fields in sources and logs.
_USAGE_FIELDS = {"content-usage": "Content-Usage", "content-signal": "Content-Signal"}
_RULE_FIELDS = frozenset(("allow", "disallow"))
# The field names most lines spell so, before their colon: found without stripping or
# lowering them.
_AS_WRITTEN = {
    spelt: name
    for name in ("allow", "disallow", "user-agent", "sitemap", "crawl-delay")
    for spelt in (name, name.capitalize(), name.title(), name.upper())
}
_FIELDS = frozenset(("user-agent", "allow", "disallow", "sitemap", "crawl-delay", *_USAGE_FIELDS))
# What ends a Content-Usage path (draft-ietf-aipref-attach-05 §3), with the blanks after it.
_BLANK = re.compile(r"[ \t]+")
# A comment: from a "#" to the end of its line.
_COMMENT = re.compile(r"#[^\n]*")
# What may follow "*" in a user-agent line naming every crawler: nothing, or whitespace as
# Google's parser sees it ("* anything" still names every crawler).
_AFTER_STAR = frozenset(("", " ", "\t", "\v", "\f"))


class Rule(NamedTuple):
    """One ``allow`` or ``disallow`` line: its verdict, its path as written, its line number."""

    allow: bool
    path: str
    line: int

    @property
    def field(self) -> str:
        return "Allow" if self.allow else "Disallow"

    def __str__(self) -> str:
        return f"{self.field}: {self.path} (line {self.line})"


class UsageLine(NamedTuple):
    """A ``Content-Usage`` or ``Content-Signal`` line: a usage preference, not an access rule.

    ``path`` is the path a Content-Usage rule is scoped to (draft-ietf-aipref-attach-05 §3: a
    value that starts with "/" starts with one, ended by the first space or tab); None for a
    Content-Signal line and for a Content-Usage rule written without one, which apply to the
    whole group.
    """

    field: str
    path: str | None
    value: str
    line: int

    def __str__(self) -> str:
        path = f"{_readable(self.path)} " if self.path is not None else ""
        return f"robots.txt line {self.line}: {self.field}: {shown(path + self.value)}"


#: A rule as parsed: what a :class:`Rule` holds, as a plain tuple. A file's every rule is one,
#: and most are never looked at again: a Rule (made by a Python-level ``__new__``) is built
#: only to explain a verdict.
RuleRow = tuple[bool, str, int]


class GroupSpec:
    """A group as written: the agents its user-agent lines name, then its rules."""

    # Slots and a plain __init__: a file's groups are made on every parse.
    __slots__ = ("agents", "crawl_delay", "rules", "usage")

    def __init__(self) -> None:
        self.agents: list[str] = []
        self.rules: list[RuleRow] = []
        self.crawl_delay: float | None = None
        self.usage: list[UsageLine] = []


class ParsedFile(NamedTuple):
    groups: list[GroupSpec]
    sitemaps: list[str]
    truncated: bool
    #: How many characters the paths of the groups' rules hold in all.
    rule_chars: int


def _agent_of(value: str) -> str | None:
    """The agent a user-agent line names: ``*``, a product token, or None for no crawler.

    Only a ``*`` that stands alone is the global agent: ``*WordPress*`` is not a product token,
    so (as Googlebot reads it) its group applies to no crawler, rather than to every one.
    """
    if value[:1] == "*" and value[1:2] in _AFTER_STAR:
        return "*"
    return rfc9309_token(value) or None


def _key_and_value(line: str) -> tuple[str, str] | None:
    colon = line.find(":")
    if colon >= 0:
        return _field(line[:colon].strip(" \t").lower()), line[colon + 1 :].strip(" \t")
    # Googlebot: a forgotten colon ("disallow /") is read as one, when the line is two words.
    words = _TWO_WORDS.fullmatch(line)
    if words is None:
        return None
    return _field(words.group(1).lower()), words.group(2)


def _field(key: str) -> str:
    if key in _FIELDS:
        return key
    for name, spellings in _SPELLINGS:
        if key.startswith(spellings):
            return name
    return key


def _cut(line: str) -> str:
    """The part of *line* that Googlebot reads: its first MAX_LINE_BYTES bytes."""
    if len(line) <= _SHORT_LINE:
        return line
    raw = line.encode("utf-8", "surrogateescape")
    if len(raw) <= MAX_LINE_BYTES:
        return line
    return raw[:MAX_LINE_BYTES].decode("utf-8", "surrogateescape")


def _crawl_delay(value: str) -> float | None:
    try:
        delay = float(value)
    except ValueError:
        return None
    return delay if math.isfinite(delay) and delay >= 0 else None


def _usage_line(key: str, value: str, number: int) -> UsageLine | None:
    # The path keeps the bytes as written (canonicalised as a rule's path is); the preference
    # is ASCII when well formed, shown readable when not.
    path = None
    if key == "content-usage" and value.startswith("/"):
        end = _BLANK.search(value)
        path, value = (value, "") if end is None else (value[: end.start()], value[end.end() :])
    if not value:
        return None
    return UsageLine(_USAGE_FIELDS[key], path, _readable(value), number)


def _readable(value: str) -> str:
    """Undo ``surrogateescape`` for values read as text (sitemap URLs)."""
    if value.isascii():
        return value
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _lines(head: bytes) -> list[str]:
    """The lines of *head* (a body's first MAX_BYTES bytes) as Googlebot reads them: without
    their comments, and cut at MAX_LINE_BYTES."""
    if head.startswith(_BOM):
        head = head[len(_BOM) :]
    # surrogateescape: bytes that are not UTF-8 survive, to be escaped as they are in rules.
    text = head.decode("utf-8", "surrogateescape")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "#" in text:
        # Every comment at once, rather than a search in each line: a line ends at its
        # first "#", and cutting a long line (below) keeps the same text either way.
        text = _COMMENT.sub("", text)
    lines = text.split("\n")
    if len(text) > _SHORT_LINE:  # only then can a line be longer than Googlebot reads
        lines = [line if len(line) <= _SHORT_LINE else _cut(line) for line in lines]
    return lines


def parse_file(body: bytes) -> ParsedFile:
    """The groups (with their rules and usage lines) and the sitemaps of a robots.txt body.
    The common line is read inline: a call costs as much as the rest of the line's work."""
    groups: list[GroupSpec] = []
    sitemaps: list[str] = []
    group: GroupSpec | None = None
    # A group's user-agent lines end where its first allow/disallow line is; only a
    # user-agent line after that starts a new group (RFC 9309 §2.1).
    group_has_rules = False
    rule_chars = 0
    for number, line in enumerate(_lines(body[:MAX_BYTES]), 1):
        if not line:
            continue  # a blank line, or a comment
        # The common line: a colon right after a field name spelt right.
        key, colon, value = line.partition(":")
        field = _AS_WRITTEN.get(key)
        if field is not None and colon:
            value = value.strip(" \t")
        elif (key_and_value := _key_and_value(line)) is None:
            continue  # no field at all
        else:
            field, value = key_and_value
        if field in _RULE_FIELDS:
            if group is None:
                continue  # RFC 9309 §2.2.2: rules outside any group are ignored
            group_has_rules = True
            if value:  # an empty path matches nothing
                group.rules.append((field == "allow", value, number))
                rule_chars += len(value)
        elif field == "user-agent":
            if group is None or group_has_rules:
                group = GroupSpec()
                groups.append(group)
                group_has_rules = False
            agent = _agent_of(value)
            if agent is not None:
                group.agents.append(agent)
        elif field == "crawl-delay":
            # Like a usage line, it does not end the group's user-agent lines. Of several, the
            # largest applies: the politest reading of what the site asked.
            delay = _crawl_delay(value) if group is not None else None
            if group is not None and delay is not None:
                group.crawl_delay = max(delay, group.crawl_delay or 0.0)
        elif field == "sitemap" and value:
            sitemaps.append(_readable(value))
        elif field in _USAGE_FIELDS:
            # A preference about use, not a rule of access: it belongs to the group it is in
            # but does not end the group's user-agent lines (only allow/disallow do), and
            # like them it means nothing outside a group.
            usage = _usage_line(field, value, number)
            if usage is not None and group is not None:
                group.usage.append(usage)
    # tuple.__new__: the named tuple's own __new__ is a Python function.
    return tuple.__new__(ParsedFile, (groups, sitemaps, len(body) > MAX_BYTES, rule_chars))
