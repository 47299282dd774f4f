"""One canonical spelling of rule paths and URL paths (``robotstxt/_encoding.py``), seen
through the verdicts it gives: RFC 9309 §2.2.2-2.2.3 percent-encoding.
"""

from __future__ import annotations

from string import ascii_letters, digits

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_robotsmeta.robotstxt._encoding import (
    canonical_rule_path,
    canonical_rule_paths,
    rule_paths_canonical,
)
from tests.rules import allows, disallowing, parse


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("/foo/bar?baz=quz", "/foo/bar?baz=quz"),
        ("/foo/bar?baz=https%3A%2F%2Ffoo.bar", "/foo/bar?baz=https%3A%2F%2Ffoo.bar"),
        ("/foo/bar/\u30c4", "/foo/bar/%E3%83%84"),
        ("/foo/bar/\u30c4", "/foo/bar/\u30c4"),
        ("/foo/bar/%E3%83%84", "/foo/bar/\u30c4"),
        ("/foo/bar/%E3%83%84", "/foo/bar/%E3%83%84"),
        ("/foo/bar/%62%61%7A", "/foo/bar/baz"),
        ("/foo/bar/baz", "/foo/bar/%62%61%7A"),
    ],
)
def test_percent_encoding_rfc9309_table(pattern: str, path: str) -> None:
    """RFC 9309 §2.2.2 (Figure 4): non-ASCII is compared UTF-8 percent-encoded, percent-encoded
    unreserved characters are compared decoded."""
    rules = disallowing(pattern)
    assert not allows(rules, path)
    assert allows(rules, "/foo/other")


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("/foo/bar/%e3%83%84", "/foo/bar/%E3%83%84"),
        ("/foo/bar/%E3%83%84", "/foo/bar/%e3%83%84"),
        ("/foo/bar/%e3%83%84", "/foo/bar/\u30c4"),
        ("/a%2fb", "/a%2Fb"),
        ("/a%2Fb", "/a%2fb"),
        ("/q?u=https%3a%2f%2fx", "/q?u=https%3A%2F%2Fx"),
    ],
)
def test_percent_encoding_hex_case_insensitive(pattern: str, path: str) -> None:
    """RFC 9309 §2.2.2 with RFC 3986 §2.1: ``%xx`` hex digits are case-insensitive."""
    assert not allows(disallowing(pattern), path)


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("/%62az", "/baz"),
        ("/baz", "/%62az"),
        ("/~joe", "/%7Ejoe/index.html"),
        ("/%7ejoe", "/~joe/index.html"),
        ("/a-b_c.d", "/a%2Db%5Fc%2Ed"),
        ("/%41%42%43", "/ABC"),
    ],
)
def test_percent_encoded_unreserved_equals_character(pattern: str, path: str) -> None:
    """RFC 9309 §2.2.2: a percent-encoded unreserved character is the character itself."""
    assert not allows(disallowing(pattern), path)


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("/a/b", "/a%2Fb"),
        ("/a%2Fb", "/a/b"),
        ("/q?x=a&y", "/q?x=a%26y"),
    ],
)
def test_percent_encoded_reserved_is_not_decoded(pattern: str, path: str) -> None:
    """RFC 9309 §2.2.2: a percent-encoded reserved character (``%2F``, ``%26``) is not decoded,
    so it is not the same as the bare delimiter."""
    rules = disallowing(pattern)
    assert allows(rules, path)
    assert not allows(rules, pattern)


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("/path/file-with-a-%2A.html", "/path/file-with-a-*.html", True),
        ("/path/file-with-a-%2a.html", "/path/file-with-a-*.html", True),
        ("/path/file-with-a-%2A.html", "/path/file-with-a-x.html", False),
        ("/path/file-with-a-%2A.html", "/path/file-with-a-.html", False),
        ("/path/foo-%24", "/path/foo-$", True),
        ("/path/foo-%24", "/path/foo-", False),
        ("/path/foo-%24$", "/path/foo-$/more", False),
    ],
)
def test_percent_encoded_special_characters_match_literally(
    pattern: str, path: str, matches: bool
) -> None:
    """RFC 9309 §2.2.3 (Figure 6): ``%2A`` and ``%24`` in a rule stand for a literal ``*`` and
    ``$`` in the URL; they are neither a wildcard nor an anchor."""
    assert allows(disallowing(pattern), path) is not matches


@pytest.mark.parametrize("char", ["|", "{", "}"])
def test_unsafe_ascii_in_rule_matches_same_character_in_url(char: str) -> None:
    """RFC 9309 §2.2.2: a rule and a URL holding the same character match. Protego encodes
    ``|``, ``{`` and ``}`` in rules only, so they stop matching the same character in URLs."""
    rules = disallowing(f"/a{char}b")
    assert not allows(rules, f"/a{char}b")
    assert not allows(rules, f"/a{char}b/c?d")
    assert allows(rules, "/ab")
    rules = disallowing(f"/*{char}")
    assert not allows(rules, f"/x?q={char}")
    assert allows(rules, "/x?q=1")


@pytest.mark.parametrize(
    ("char", "encoded"), [("|", "%7C"), ("{", "%7B"), ("}", "%7D"), (" ", "%20"), ("^", "%5E")]
)
def test_printable_ascii_in_rule_is_not_percent_encoded(char: str, encoded: str) -> None:
    """RFC 9309 §2.2.2 percent-encodes only octets outside ASCII (and reserved characters), so a
    rule's literal ``|``, ``{``, ``}`` or space is compared as that character, never as its
    escape: ``Disallow: /a|b`` does not reach ``/a%7Cb``, the form Scrapy requests carry, and
    ``Disallow: /a%7Cb`` does not reach ``/a|b``. Googlebot compares them the same way."""
    assert allows(disallowing(f"/a{char}b"), f"/a{encoded}b")
    assert allows(disallowing(f"/a{encoded}b"), f"/a{char}b")
    assert not allows(disallowing(f"/a{encoded}b"), f"/a{encoded.lower()}b")


# Pieces of rule paths that a canonical path writes otherwise, or keeps: escapes of unreserved
# and reserved characters in either case, a "%" that starts no escape, text outside ASCII,
# control characters, bytes that are not UTF-8 (read with surrogateescape), "$" and "*".
_PATH_PIECES = [
    *("a", "/", "~", "*", "$", "%", "%4", "%%", "%zz"),
    *("%41", "%2f", "%2F", "%7e", "%e9", "%E9", "%24", "%2A"),
    *("é", "\u30c4", "\x01", "\t", "\x7f", "\udcff"),
]


@settings(max_examples=500, deadline=None)
@given(
    paths=st.lists(
        st.lists(st.sampled_from(_PATH_PIECES), max_size=6).map("".join), min_size=1, max_size=6
    )
)
def test_rule_paths_written_canonical_together_as_each_alone(paths: list[str]) -> None:
    """RFC 9309 §2.2.2-2.2.3: the canonical form of a group's rule paths, rewritten all at once
    when a check first scans them, is each path's own; and they are found canonical as written
    exactly when none changes."""
    joined = "\n".join(paths)
    alone = [canonical_rule_path(path) for path in paths]
    assert canonical_rule_paths(joined).split("\n") == alone
    assert rule_paths_canonical(joined) is (alone == paths)


@pytest.mark.parametrize("escape", [f"%{a}{b}" for a in "0123456789ABCDEFabcdef" for b in "0Aa"])
def test_escape_compared_decoded_or_uppercase_in_a_group_scanned(escape: str) -> None:
    """RFC 9309 §2.2.2: in a group whose rules are rewritten together (one of them holds text
    outside ASCII), an escape of an unreserved character matches the character, any other its
    uppercase spelling."""
    rules = parse(f"User-agent: *\nDisallow: /x{escape}y\nDisallow: /\u30c4\n")
    char = chr(int(escape[1:], 16))
    spelled = char if char in ascii_letters + digits + "-._~" else escape.upper()
    assert not allows(rules, f"/x{spelled}y")
    assert not allows(rules, f"/x{escape}y")
    assert allows(rules, "/xy")
