"""A parser for Structured Field Value Dictionaries (RFC 9651).

Only the Dictionary top-level type is parsed, following the parsing algorithms of
RFC 9651 §4.2 (Dictionary, Inner List, Item, Parameters, Key and every bare item
type, including Date and Display String).  Any failure anywhere makes the whole
value fail, as §4.2 requires, and :func:`parse_dictionary` then returns ``None``.
"""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass
from typing import TypeAlias


class Token(str):
    """An sf-token (RFC 9651 §3.3.4), told apart from an sf-string."""

    __slots__ = ()


class DisplayString(str):
    """An sf-displaystring (RFC 9651 §3.3.8): Unicode text, already decoded."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Date:
    """An sf-date (RFC 9651 §3.3.7): seconds since the Unix epoch."""

    seconds: int


BareItem: TypeAlias = int | float | str | Token | bytes | bool | Date | DisplayString
Parameters: TypeAlias = dict[str, BareItem]
InnerList: TypeAlias = tuple[tuple[BareItem, Parameters], ...]


@dataclass(frozen=True, slots=True)
class Member:
    """A dictionary member: an item or an inner list, with its parameters."""

    value: BareItem | InnerList
    params: Parameters


class _Fail(Exception):
    """Raised inside the parser only; the whole field value then fails (§4.2)."""


# Every pattern is a fixed sequence of character classes and runs of them, with no
# alternation or nested repetition, so matching is linear and cannot backtrack badly.
_KEY = re.compile(r"[a-z*][a-z0-9_.*-]*")
_TOKEN = re.compile(r"[A-Za-z*][!#$%&'*+.^_`|~0-9A-Za-z:/-]*")
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]*)?")
_STRING_STOP = re.compile(r"[^ !#-\[\]-~]")  # not printable ASCII, or DQUOTE or backslash
_DISPLAY_STOP = re.compile(r"[^ !#$&-~]")  # not printable ASCII, or DQUOTE or "%"
_LOWER_HEX = re.compile(r"[0-9a-f]{2}")
_BASE64 = re.compile(r"[A-Za-z0-9+/=]*")
_OWS = " \t"


def _key(s: str, i: int) -> tuple[str, int]:
    m = _KEY.match(s, i)
    if m is None:
        raise _Fail
    return m.group(), m.end()


def _run_end(stop: re.Pattern[str], s: str, i: int) -> int:
    m = stop.search(s, i)
    return len(s) if m is None else m.start()


def _number(s: str, i: int) -> tuple[int | float, int]:
    m = _NUMBER.match(s, i)
    if m is None:
        raise _Fail
    text, frac = m.group(), m.group(1)
    digits = len(text) - (text[0] == "-")
    if frac is None:
        if digits > 15:
            raise _Fail
        return int(text), m.end()
    # frac includes the "."; §4.2.4 caps the integer part at 12 and the fraction at 3.
    if digits - len(frac) > 12 or not 2 <= len(frac) <= 4:
        raise _Fail
    return float(text), m.end()


def _string(s: str, i: int) -> tuple[str, int]:
    parts: list[str] = []
    i += 1
    while True:
        j = _run_end(_STRING_STOP, s, i)
        parts.append(s[i:j])
        c = s[j : j + 1]
        if c == '"':
            return "".join(parts), j + 1
        if c == "\\" and s[j + 1 : j + 2] in ('"', "\\"):
            parts.append(s[j + 1])
            i = j + 2
            continue
        raise _Fail  # end of input, control character, or a bad escape


def _display_string(s: str, i: int) -> tuple[DisplayString, int]:
    if s[i + 1 : i + 2] != '"':
        raise _Fail
    out = bytearray()
    i += 2
    while True:
        j = _run_end(_DISPLAY_STOP, s, i)
        out += s[i:j].encode("ascii")
        c = s[j : j + 1]
        if c == '"':
            try:
                return DisplayString(out.decode("utf-8")), j + 1
            except UnicodeDecodeError:
                raise _Fail from None
        # §4.2.10 accepts only lowercase hex, so the serialisation stays canonical.
        if c == "%" and _LOWER_HEX.match(s, j + 1):
            out.append(int(s[j + 1 : j + 3], 16))
            i = j + 3
            continue
        raise _Fail


def _byte_sequence(s: str, i: int) -> tuple[bytes, int]:
    end = s.find(":", i + 1)
    if end < 0:
        raise _Fail
    content = s[i + 1 : end]
    core = content.rstrip("=")
    padding = -len(core) % 4
    # §4.2.7 asks to tolerate missing padding; wrong padding or "=" inside cannot decode.
    if (
        _BASE64.fullmatch(content) is None
        or "=" in core
        or len(core) % 4 == 1
        or len(content) - len(core) not in (0, padding)
    ):
        raise _Fail
    return binascii.a2b_base64(core + "=" * padding), end + 1


def _bare_item(s: str, i: int) -> tuple[BareItem, int]:
    c = s[i : i + 1]
    if c == "-" or "0" <= c <= "9":
        return _number(s, i)
    if c == '"':
        return _string(s, i)
    if c == ":":
        return _byte_sequence(s, i)
    if c == "?":
        flag = s[i + 1 : i + 2]
        if flag not in ("0", "1"):
            raise _Fail
        return flag == "1", i + 2
    if c == "@":
        seconds, j = _number(s, i + 1)
        if isinstance(seconds, float):
            raise _Fail
        return Date(seconds), j
    if c == "%":
        return _display_string(s, i)
    m = _TOKEN.match(s, i)
    if m is None:
        raise _Fail
    return Token(m.group()), m.end()


def _parameters(s: str, i: int) -> tuple[Parameters, int]:
    params: Parameters = {}
    n = len(s)
    while i < n and s[i] == ";":
        i += 1
        while i < n and s[i] == " ":
            i += 1
        key, i = _key(s, i)
        value: BareItem = True
        if i < n and s[i] == "=":
            value, i = _bare_item(s, i + 1)
        params[key] = value
    return params, i


def _inner_list(s: str, i: int) -> tuple[InnerList, Parameters, int]:
    items: list[tuple[BareItem, Parameters]] = []
    n = len(s)
    i += 1
    while i < n:
        while i < n and s[i] == " ":
            i += 1
        if i < n and s[i] == ")":
            params, i = _parameters(s, i + 1)
            return tuple(items), params, i
        item, i = _bare_item(s, i)
        item_params, i = _parameters(s, i)
        items.append((item, item_params))
        if i >= n or s[i] not in " )":
            raise _Fail
    raise _Fail


def _dictionary(s: str) -> dict[str, Member]:
    members: dict[str, Member] = {}
    n, i = len(s), 0
    while i < n:
        key, i = _key(s, i)
        value: BareItem | InnerList = True
        if i < n and s[i] == "=":
            if s[i + 1 : i + 2] == "(":
                value, params, i = _inner_list(s, i + 1)
            else:
                value, i = _bare_item(s, i + 1)
                params, i = _parameters(s, i)
        else:
            params, i = _parameters(s, i)
        # Assigning to an existing key keeps its first position, as §4.2.2 asks.
        members[key] = Member(value, params)
        while i < n and s[i] in _OWS:
            i += 1
        if i >= n:
            break
        if s[i] != ",":
            raise _Fail
        i += 1
        while i < n and s[i] in _OWS:
            i += 1
        if i >= n:
            raise _Fail  # a trailing comma
    return members


def parse_dictionary(text: str) -> dict[str, Member] | None:
    """Parse an RFC 9651 Dictionary, or return ``None`` if the value fails to parse.

    Leading and trailing SP and HTAB are ignored (HTTP strips OWS around field
    values).  Structured fields are ASCII only, so any other character fails.
    """
    if not text.isascii():
        return None
    try:
        return _dictionary(text.strip(_OWS))
    except _Fail:
        return None
