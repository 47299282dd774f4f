"""Page-level robots rules: the value grammar of meta robots / X-Robots-Tag and their merge.

References: Google's "Robots meta tag, data-nosnippet and X-Robots-Tag specifications" and
MDN's X-Robots-Tag page. Pure functions over strings; the response is read elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, fields
from datetime import datetime, timedelta, timezone
from typing import Any, Literal, NamedTuple

from scrapy_robotsmeta.usage.preferences import Statement
from scrapy_robotsmeta.usage.vocabulary import PAGE_RULES, read_page_rule

ImagePreview = Literal["none", "standard", "large"]

# Integer limits: each sets the Directives field named like it (max_snippet...).
_LIMIT_RULES = frozenset({"max-snippet", "max-video-preview"})
_VALUED_RULES = _LIMIT_RULES | {"max-image-preview", "unavailable_after"}
# Each rule without a value → the Directives fields it sets, and to what. "all", "index" and
# "follow" are the defaults: they never lift a restriction.
_FLAG_RULES: dict[str, dict[str, bool]] = {
    "all": {},
    "index": {},
    "follow": {},
    "none": {"index": False, "follow": False},
    "noindex": {"index": False},
    "nofollow": {"follow": False},
    "noarchive": {"archive": False},
    "nocache": {"archive": False},
    "nosnippet": {"snippet": False},
    "notranslate": {"translate": False},
    "noimageindex": {"imageindex": False},
    "indexifembedded": {"indexifembedded": True},
}
# noai and noimageai say nothing of these fields but of the uses of the page (usage.vocabulary).
_KNOWN_RULES = _VALUED_RULES | _FLAG_RULES.keys() | PAGE_RULES.keys()

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_BOT_NAME = re.compile(r"[^\s:]+")


def ascii_lower(text: str) -> str:
    """Lowercase A-Z only: names compare ASCII case-insensitively (the Kelvin sign is no "k")."""
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)


@dataclass(frozen=True, slots=True)
class Directives:
    """The effective page-level rules for one crawler; the defaults are "no restriction"."""

    index: bool = True
    follow: bool = True
    archive: bool = True
    snippet: bool = True
    max_snippet: int | None = None
    max_image_preview: ImagePreview = "large"
    max_video_preview: int | None = None
    translate: bool = True
    imageindex: bool = True
    indexifembedded: bool = False
    unavailable_after: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        """The item field value, in field order: JSON-ready, ``unavailable_after`` as an
        ISO 8601 UTC string."""
        values = _fields_of(self)
        if self.unavailable_after is not None:
            values["unavailable_after"] = self.unavailable_after.isoformat()
        return values


_FIELD_NAMES = tuple(field.name for field in fields(Directives))


def _fields_of(directives: Directives) -> dict[str, Any]:
    """Field name → value, in field order."""
    return {name: getattr(directives, name) for name in _FIELD_NAMES}


NO_RULES = Directives()
_NO_RULES_FIELDS = _fields_of(NO_RULES)


class Reading(NamedTuple):
    """The merged rules, the usage statements of ``noai`` / ``noimageai``, and why each rule
    that was left out was left out (for the log)."""

    directives: Directives
    usage: tuple[Statement, ...]
    ignored: tuple[str, ...]


def read_rules(
    header_values: Collection[str], meta_contents: Collection[str], crawler: str
) -> Reading:
    """Merge every X-Robots-Tag value and every meta content that applies to *crawler*.

    *meta_contents* are the contents of the metas already chosen by name (``robots`` or the
    crawler's): a meta's scope is its ``name`` attribute. *crawler* is the crawler's lowercased
    name as it writes it (``archive.org_bot``), not its robots.txt token (``archive``): RFC 9309's
    token alphabet governs robots.txt lines, not meta names nor header scopes.
    """
    if not header_values and not meta_contents:  # most pages: nothing to merge
        return _NOTHING_READ
    merge = _Merge()
    for value in header_values:
        for scope, name, argument in _rules(value, scoped=True):
            if scope is None or scope == crawler:
                merge.add(name, argument, "X-Robots-Tag")
    for content in meta_contents:
        for scope, name, argument in _rules(content, scoped=False):
            if scope is None:
                merge.add(name, argument, "meta robots")
            else:
                rule = _text(name, argument)
                merge.ignored.append(
                    f"{scope}: {rule}: a bot prefix has no meaning in a meta content"
                )
    return Reading(merge.result(), tuple(merge.usage), tuple(merge.ignored))


_NOTHING_READ = Reading(NO_RULES, (), ())


def _rules(value: str, *, scoped: bool) -> Iterator[tuple[str | None, str, str | None]]:
    """Split one value into (bot scope or None, lowercased rule name, value or None) triples.

    With *scoped* (a header value), ``TOKEN: rule`` switches the scope of that rule and of the
    following items to bot TOKEN. Without it (a meta content), the prefix is still recognised and
    returned as the scope, so that the rule is reported rather than read as an unknown one.
    ``unavailable_after`` dates keep the commas they contain.
    """
    pieces = value.split(",")
    scope: str | None = None
    position = 0
    while position < len(pieces):
        piece = pieces[position]
        position += 1
        name, argument = _split(piece)
        prefix = None
        if argument is not None and _is_bot_name(name):
            prefix = name
            name, argument = _split(argument)
            if scoped:
                scope = prefix
        if name == "unavailable_after" and argument is not None:
            while position < len(pieces) and _continues_date(pieces[position]):
                argument += "," + pieces[position]
                position += 1
        argument = None if argument is None else argument.strip()
        if not scoped and prefix is not None:
            yield prefix, name, argument  # for the caller to report, even when nothing follows
        elif name or argument is not None:
            yield scope, name, argument


def _split(item: str) -> tuple[str, str | None]:
    """``name: value`` as (lowercased trimmed name, value as written), value None without colon."""
    name, colon, argument = item.partition(":")
    return ascii_lower(name.strip()), (argument if colon else None)


def _is_bot_name(name: str) -> bool:
    # A valued rule's name before its colon is that rule, never a bot.
    return name not in _VALUED_RULES and _BOT_NAME.fullmatch(name) is not None


def _continues_date(piece: str) -> bool:
    name, argument = _split(piece)
    starts_rule_or_prefix = name in _KNOWN_RULES or (argument is not None and _is_bot_name(name))
    return bool(name) and not starts_rule_or_prefix


def _text(name: str, argument: str | None) -> str:
    return name if argument is None else f"{name}: {argument}"


class _Merge:
    """Folds rules into one Directives; each field only ever moves towards "more restrictive"."""

    def __init__(self) -> None:
        #: Directives field → value so far, from NO_RULES's; ``Directives(**values)`` at the end.
        self.values: dict[str, Any] = dict(_NO_RULES_FIELDS)
        self.usage: list[Statement] = []
        self.ignored: list[str] = []

    def add(self, name: str, argument: str | None, source: str) -> None:
        """Fold in rule *name* read from *source* (``X-Robots-Tag`` or ``meta robots``)."""
        if (flag := _FLAG_RULES.get(name)) is not None:
            self.values.update(flag)
        elif name in PAGE_RULES and argument is None:
            self.usage += read_page_rule(name, f"{source}: {name}")
        elif name not in _VALUED_RULES:
            self.ignored.append(f"{_text(name, argument)}: unknown rule")
        elif not argument:
            self.ignored.append(f"{_text(name, argument)}: missing value")
        elif name in _LIMIT_RULES:
            field = name.replace("-", "_")
            self.values[field] = self._limit(name, argument, self.values[field])
        elif name == "max-image-preview":
            self._image_preview(argument)
        else:
            self._unavailable_after(argument)

    def _limit(self, name: str, value: str, current: int | None) -> int | None:
        if not _INTEGER.fullmatch(value):
            self.ignored.append(f"{name}: {value}: not an integer")
            return current
        try:
            number = int(value)
        except ValueError:  # more digits than the interpreter converts
            self.ignored.append(f"{name}: {value}: integer too long")
            return current
        if number < 0:  # a negative limit is "no limit"
            return current
        return number if current is None else min(current, number)

    def _image_preview(self, value: str) -> None:
        setting = ascii_lower(value)
        if setting == "none":
            self.values["max_image_preview"] = "none"
        elif setting == "standard":
            if self.values["max_image_preview"] == "large":
                self.values["max_image_preview"] = "standard"
        elif setting != "large":
            self.ignored.append(f"max-image-preview: {value}: expected none, standard or large")

    def _unavailable_after(self, value: str) -> None:
        moment = parse_date(value)
        if moment is None:
            self.ignored.append(f"unavailable_after: {value}: not a valid date")
        else:
            current = self.values["unavailable_after"]
            if current is None or moment < current:
                self.values["unavailable_after"] = moment

    def result(self) -> Directives:
        found = self.values
        # nosnippet and max-snippet:0 say the same thing: keep both fields in step.
        if not found["snippet"] or found["max_snippet"] == 0:
            found["snippet"], found["max_snippet"] = False, 0
        return Directives(**found)


_MONTHS = {
    name: number
    for number, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
        start=1,
    )
}
# RFC 822 §5.1 zones; single military letters other than Z are unreliable (RFC 1123 §5.2.14)
# and are refused. UTC is not in RFC 822 but is what people write.
_ZONES = {
    "ut": 0,
    "utc": 0,
    "gmt": 0,
    "z": 0,
    "edt": -4,
    "est": -5,
    "cdt": -5,
    "cst": -6,
    "mdt": -6,
    "mst": -7,
    "pdt": -7,
    "pst": -8,
}
_WEEKDAY = (
    r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|mon|tue|wed|thu|fri|sat|sun)"
)
_TIME = r"(?P<hour>[0-9]{1,2}):(?P<minute>[0-9]{2})(?::(?P<second>[0-9]{2}))?"
# RFC 822/1123 "[Wed,] 03 Dec 2025 13:09:53 GMT" and RFC 850 "Wednesday, 03-Dec-25 13:09:53 GMT",
# each with the time and the zone optional.
_RFC_DATE = re.compile(
    rf"(?:{_WEEKDAY}\s*,\s*)?(?P<day>[0-9]{{1,2}})(?P<sep>[\s-])\s*(?P<month>[a-z]{{3}})"
    rf"(?P=sep)\s*(?P<year>[0-9]{{4}}|[0-9]{{2}})(?:\s+{_TIME})?"
    r"(?:\s*(?P<zone>[a-z]+|[+-][0-9]{4}))?"
)
# ISO 8601 calendar dates, extended or basic format, with an optional time and zone.
_ISO_DATE = re.compile(
    r"(?P<year>[0-9]{4})(?P<sep>-?)(?P<month>[0-9]{2})(?P=sep)(?P<day>[0-9]{2})"
    r"(?:[t ](?P<hour>[0-9]{2})(?P<tsep>:?)(?P<minute>[0-9]{2})"
    r"(?:(?P=tsep)(?P<second>[0-9]{2})(?:[.,][0-9]+)?)?"
    r"(?P<zone>z|[+-][0-9]{2}(?::?[0-9]{2})?)?)?"
)


def parse_date(text: str) -> datetime | None:
    """An RFC 822/1123, RFC 850 or ISO 8601 date-time as aware UTC, or None when it is not one.

    No zone means UTC, no time means midnight; fractions of a second are dropped. Impossible
    dates (31 Feb, 25:00) are None.
    """
    text = ascii_lower(text.strip())
    try:
        if match := _ISO_DATE.fullmatch(text):
            return _moment(match, int(match["month"]), int(match["year"]), _iso_offset(match))
        if (match := _RFC_DATE.fullmatch(text)) and match["month"] in _MONTHS:
            offset = _rfc_offset(match["zone"])
            if offset is None:
                return None
            return _moment(match, _MONTHS[match["month"]], _rfc_year(match["year"]), offset)
    except (ValueError, OverflowError):  # out-of-range fields or a year past 1..9999 in UTC
        return None
    return None


def _moment(match: re.Match[str], month: int, year: int, offset: timedelta) -> datetime:
    local = datetime(
        year,
        month,
        int(match["day"]),
        int(match["hour"] or 0),
        int(match["minute"] or 0),
        int(match["second"] or 0),
        tzinfo=timezone(offset),
    )
    return local.astimezone(timezone.utc)


def _rfc_year(digits: str) -> int:
    # RFC 5322 §4.3: two-digit years 00-49 are 2000-2049, 50-99 are 1950-1999.
    year = int(digits)
    if len(digits) == 2:
        year += 2000 if year < 50 else 1900
    return year


def _rfc_offset(zone: str | None) -> timedelta | None:
    if zone is None:
        return timedelta(0)
    if zone[0] in "+-":
        return _signed_offset(zone[0], zone[1:3], zone[3:5])
    hours = _ZONES.get(zone)
    return None if hours is None else timedelta(hours=hours)


def _iso_offset(match: re.Match[str]) -> timedelta:
    zone = match["zone"]
    if zone is None or zone == "z":
        return timedelta(0)
    digits = zone[1:].replace(":", "")
    return _signed_offset(zone[0], digits[:2], digits[2:] or "0")


def _signed_offset(sign: str, hours: str, minutes: str) -> timedelta:
    if int(minutes) > 59:
        raise ValueError("zone minutes out of range")
    offset = timedelta(hours=int(hours), minutes=int(minutes))
    return -offset if sign == "-" else offset
