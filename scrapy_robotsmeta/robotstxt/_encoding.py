"""One canonical spelling for rule paths and URL paths, so that comparing them is string work.

RFC 9309 §2.2.2: octets outside ASCII are compared percent-encoded (UTF-8), a percent-encoded
unreserved character is compared as the character itself, and hex digits are case-insensitive.
Printable ASCII is compared as written, on both sides: a rule's literal space, ``{``, ``}`` or
``|`` only matches that same character in a URL, never its escape (Google reads it so too).
Control characters are the exception: no URL can hold one literally, so a rule's control byte
is compared percent-encoded, as the byte it is, like any byte outside ASCII.
RFC 9309 §2.2.3: a literal "*" or "$" in a URL is matched by "%2A" or "%24" in a rule.
"""

from __future__ import annotations

import re

from scrapy_robotsmeta.robotstxt.origin import SCHEME_AUTHORITY

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

# Characters a canonical path keeps as they are: printable ASCII, except "%" (which may start
# an escape to normalise) and "*" and "$", which only rules may use as operators.
_KEEP_BUT_HASH = r"\x20-\x22\x26-\x29\x2b-\x7e"
_KEEP = _KEEP_BUT_HASH + "#"
_CANONICAL_URL_PATH = re.compile(f"[{_KEEP}]*")
# An absolute URL whose path and query are canonical already and that has no fragment: most
# URLs a crawler checks. Group 1 is the path and query.
_PLAIN_URL = re.compile(f"{SCHEME_AUTHORITY.pattern}(/[{_KEEP_BUT_HASH}]*)")
_CANONICAL_RULE_PATH = re.compile(f"[{_KEEP}*]*")
# Everything that needs rewriting: a %XX escape, a character outside printable ASCII, or a
# literal "*" or "$". A "%" that starts no escape stays as written, as any other ASCII does.
_REWRITE = re.compile(r"%[0-9A-Fa-f]{2}|[^\x20-\x7e]|[*$]")


def _rewrite(match: re.Match[str]) -> str:
    text = match.group()
    if len(text) == 3:
        decoded = chr(int(text[1:], 16))
        return decoded if decoded in _UNRESERVED else text.upper()
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that no byte decoded to (URLs built in code)
        raw = text.encode("utf-8", "surrogatepass")
    return "".join(f"%{byte:02X}" for byte in raw)


#: A match whose group 1 is the canonical path and query of a URL, when the URL is that
#: simple (see _PLAIN_URL); None otherwise. The bound method itself: every check calls it.
match_plain_url = _PLAIN_URL.fullmatch


def canonical_url_path(path: str) -> str:
    """Canonical form of a URL's path and query; text that is not ASCII is encoded as UTF-8."""
    if _CANONICAL_URL_PATH.fullmatch(path):
        return path
    return _REWRITE.sub(_rewrite, path)


#: A match when rule paths joined by newlines are all canonical as written and plain prefixes
#: (no ``*``, no ``$``), each its own pattern; None otherwise.
match_plain_rule_paths = re.compile(f"[{_KEEP}\n]*").fullmatch


# The bytes a canonical rule path keeps as written (printable ASCII but "%"), and newlines.
_RULE_PATH_BYTES = bytes([*range(0x20, 0x25), *range(0x26, 0x7F), 0x0A])


def rule_path_characters_kept(joined: str) -> bool:
    """Whether rule paths joined by newlines hold only characters a canonical rule path keeps
    as written (``*``, and ``$``, canonical only as a path's last character, included)."""
    # Deleting the bytes kept leaves nothing: a C loop, twice as fast as a regular expression.
    return joined.isascii() and not joined.encode().translate(None, _RULE_PATH_BYTES)


def canonical_rule_path(path: str) -> str:
    """Canonical form of a rule path: ``*`` stays a wildcard, a final ``$`` stays an anchor, any
    other ``$`` is literal.

    robots.txt is decoded with ``surrogateescape``, so bytes that are not UTF-8 come back here
    as the very bytes the file held and are escaped as such: they still match the same bytes
    percent-encoded in a URL.
    """
    anchored = path.endswith("$")
    body = path[:-1] if anchored else path
    if not _CANONICAL_RULE_PATH.fullmatch(body):
        body = "*".join(_REWRITE.sub(_rewrite, piece) for piece in body.split("*"))
    return body + "$" if anchored else body
