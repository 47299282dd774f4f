"""Where Googlebot reads robots.txt beyond RFC 9309, and Google's verdicts on real files.

Site owners test their robots.txt against Googlebot, so where Google's parser reads more than
RFC 9309 says (a forgotten colon, ``Allow: /dir/index.html``, over-long lines), the matcher
reads as Google does; where RFC 9309 and Google agree (a ``User-agent`` glued to ``*``, literal
ASCII in rules), it follows them both. The probes of ``../shared/conformance/`` hold the
verdicts of Google's open-source matcher on real files.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest

from scrapy_robotsmeta import RobotsTxt, Rule
from tests.shared import CONFORMANCE_PROBES, CORPUS

BASE = "https://example.com"
# Google's parser keeps this many bytes of a line (a buffer of 8 x 2,083 with its terminator).
GOOGLE_LINE_LIMIT = 16_663


def parse(text: str) -> RobotsTxt:
    return RobotsTxt.parse(text.encode("utf-8"))


def allows(rules: RobotsTxt, path: str, agent: str = "foobot") -> bool:
    return rules.allowed(BASE + path, agent)


# --------------------------------------------------------------------------------------------
# A line without its colon
# --------------------------------------------------------------------------------------------


def test_missing_colon_two_words_is_a_key_and_value() -> None:
    """Google: a line without a colon that is exactly two words (``disallow /``) is read as
    ``key: value``; RFC 9309 would skip it."""
    rules = parse("user-agent FooBot\ndisallow /\n")
    assert not allows(rules, "/page")
    assert rules.explain(BASE + "/page", "foobot").rule == Rule(False, "/", 2)
    assert allows(rules, "/page", "otherbot")


def test_missing_colon_tabs_and_surrounding_space() -> None:
    rules = parse("  User-agent\tfoobot  \n\tDisallow \t /private  \n")
    assert not allows(rules, "/private/1")
    assert allows(rules, "/public")


@pytest.mark.parametrize(
    "line",
    [
        "disallow / now",  # three words
        "disallow",  # one word
        "disallow /a:b",  # split at its colon: "Disallow: b", which no path matches
    ],
)
def test_missing_colon_other_lines_are_skipped(line: str) -> None:
    """Google: only a line of exactly two words stands for a missing colon; a line with a colon
    is always split at it."""
    rules = parse(f"User-agent: *\n{line}\n")
    assert allows(rules, "/a:b")
    assert allows(rules, "/")


# --------------------------------------------------------------------------------------------
# Misspelt field names
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("user_agent", ["user-agent", "useragent", "User Agent", "user-agents"])
@pytest.mark.parametrize(
    "disallow",
    ["disallow", "dissallow", "dissalow", "Disalow", "diasllow", "disallaw", "disallowed"],
)
def test_misspelt_field_names_read_as_google_does(user_agent: str, disallow: str) -> None:
    """Google: a field name that starts with the field's name or one of its frequent
    misspellings is that field (RFC 9309 §2.2.4 lets a crawler read records beyond the
    protocol's)."""
    rules = parse(f"{user_agent}: foobot\n{disallow}: /private\nallowed: /private/ok\n")
    assert not allows(rules, "/private/x")
    assert allows(rules, "/private/ok")
    assert allows(rules, "/private/x", "otherbot")


@pytest.mark.parametrize("key", ["user", "agent", "disallo", "alow", "deny", "noindex"])
def test_other_field_names_are_ignored(key: str) -> None:
    rules = parse(f"User-agent: *\n{key}: /\n")
    assert allows(rules, "/")


# --------------------------------------------------------------------------------------------
# Allow: /dir/index.html
# --------------------------------------------------------------------------------------------


def test_allow_index_html_also_allows_exactly_its_directory() -> None:
    """Google: ``Allow: /dir/index.html`` also allows ``/dir/``, the URL that serves that page,
    as if ``Allow: /dir/$`` were written on the same line; nothing else under ``/dir/``."""
    rules = parse("User-agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n")
    assert allows(rules, "/allowed-slash/")
    assert allows(rules, "/allowed-slash/index.html")
    assert not allows(rules, "/allowed-slash/index.htm")
    assert not allows(rules, "/allowed-slash/other.html")
    assert not allows(rules, "/allowed-slash/?q=1")
    assert not allows(rules, "/anyother-url")
    verdict = rules.explain(BASE + "/allowed-slash/", "foobot")
    assert verdict.rule == Rule(True, "/allowed-slash/index.html", 2)


@pytest.mark.parametrize(
    ("allow", "directory"),
    [
        ("/index.html", "/"),
        ("/d/index.htm", "/d/"),
        ("/d/index.html$", "/d/"),
        ("/d/index.html?x=1", "/d/"),
        ("/*/index.html", "/any/"),
    ],
)
def test_allow_index_htm_variants(allow: str, directory: str) -> None:
    """Google: any allow path whose last segment starts with ``index.htm``."""
    assert allows(parse(f"User-agent: *\nAllow: {allow}\nDisallow: /\n"), directory)


def test_disallow_index_html_does_not_disallow_the_directory() -> None:
    """Google: only ``allow`` rules are read so; ``Disallow: /d/index.html`` is as written."""
    rules = parse("User-agent: *\nDisallow: /d/index.html\n")
    assert allows(rules, "/d/")
    assert not allows(rules, "/d/index.html")


def test_allow_index_html_directory_precedence_is_its_own_length() -> None:
    """Google: the added ``/d/$`` competes by its own length (4): a longer matching disallow
    wins, an equal one loses to it (allow wins a tie), a shorter one loses."""
    index = "User-agent: *\nAllow: /d/index.html\n"
    assert not allows(parse(index + "Disallow: /d/*$\n"), "/d/")
    assert allows(parse(index + "Disallow: /d/$\n"), "/d/")
    assert allows(parse(index + "Disallow: /d\n"), "/d/")


# --------------------------------------------------------------------------------------------
# Over-long lines
# --------------------------------------------------------------------------------------------


def test_long_disallow_line_is_cut_at_google_limit() -> None:
    """Google: a line longer than its limit is read up to the limit; the rest of the line is
    dropped, so the rule is the part of the path that fits."""
    prefix = "Disallow: "
    kept = "/x/" + "a" * (GOOGLE_LINE_LIMIT - len(prefix) - 3)
    rules = parse(f"User-agent: FooBot\n{prefix}{kept}/qux\n")
    assert len(prefix + kept) == GOOGLE_LINE_LIMIT
    assert allows(rules, "/fux")
    assert not allows(rules, kept + "/fux")
    assert not allows(rules, kept)
    assert allows(rules, kept[:-1])


def test_long_allow_lines_are_cut_at_google_limit() -> None:
    """Google: two allow lines that differ only past the limit are the same rule."""
    prefix = "Allow: "
    filler = GOOGLE_LINE_LIMIT - len(prefix) - 3
    kept_a, kept_b = "/x/" + "a" * filler, "/x/" + "b" * filler
    rules = parse(f"User-agent: FooBot\nDisallow: /\n{prefix}{kept_a}/qux\n{prefix}{kept_b}/qux\n")
    assert not allows(rules, "/")
    assert allows(rules, kept_a + "/qux")
    assert allows(rules, kept_b + "/fux")
    assert not allows(rules, kept_b[:-1])


def test_long_line_limit_counts_bytes() -> None:
    """Google counts the line in bytes: two-byte UTF-8 characters fill it twice as fast."""
    prefix = "Disallow: /"
    room = GOOGLE_LINE_LIMIT - len(prefix)
    kept = "é" * (room // 2)
    rules = parse(f"User-agent: *\n{prefix}{kept}é\n")
    assert not allows(rules, "/" + kept + "x")
    assert not allows(rules, "/" + kept + "é")


def test_line_at_the_limit_is_whole() -> None:
    path = "/" + "a" * (GOOGLE_LINE_LIMIT - len("Disallow: /") - 1) + "b"
    rules = parse(f"User-agent: *\nDisallow: {path}\n")
    assert not allows(rules, path)
    assert allows(rules, path[:-1] + "c")


# --------------------------------------------------------------------------------------------
# User-agent values glued to "*"
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["*WordPress*", "*OrkashBot*", "**", "*bot"])
def test_star_glued_to_a_name_names_no_crawler(value: str) -> None:
    """RFC 9309 §2.2.1 and Google: only ``*`` alone is the global agent, and ``*WordPress*``
    holds no product token, so its group applies to no crawler (not to every one)."""
    rules = parse(f"User-agent: {value}\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n")
    for agent in ("foobot", "wordpress", "googlebot"):
        assert allows(rules, "/page", agent)
        assert not allows(rules, "/private", agent)


def test_star_glued_alone_in_the_file_allows_everything() -> None:
    assert allows(parse("User-agent: *WordPress*\nDisallow: /\n"), "/")


@pytest.mark.parametrize("value", ["*", "* ", "* everyone else", "*\tbots"])
def test_star_then_space_is_the_global_agent(value: str) -> None:
    """Google: ``*`` followed by whitespace and more text still names every crawler."""
    assert not allows(parse(f"User-agent: {value}\nDisallow: /\n"), "/page")


def test_star_then_non_ascii_byte_names_no_crawler() -> None:
    """Google: a byte such as 0xA0 (a Latin-1 no-break space) after ``*`` is not whitespace."""
    rules = RobotsTxt.parse(b"User-Agent: *\xa0\r\nAllow: /\r\nDisallow: /private\r\n")
    assert allows(rules, "/private")


# --------------------------------------------------------------------------------------------
# Google's verdicts on real files
# --------------------------------------------------------------------------------------------

# RFC 9309 §2.2.2 compares "%61" and "a" as one character; Google's matcher does not. The
# package follows the RFC, so these probes are expected to disagree (see probes.md).
CONTESTED_KIND = "rule_path_pct_encoded_letter"


def _probes() -> list[dict[str, Any]]:
    if not CONFORMANCE_PROBES.is_file():
        pytest.skip(f"conformance probes absent: {CONFORMANCE_PROBES}")
    with CONFORMANCE_PROBES.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def test_agrees_with_google_on_every_uncontested_probe() -> None:
    """Every probe of Google's matcher over the corpus, but the contested kind, gets Google's
    verdict: the rules above, on real files."""
    parsed: dict[str, RobotsTxt] = {}
    checked: Counter[str] = Counter()
    disagreements = []
    for probe in _probes():
        if probe["kind"] == CONTESTED_KIND:
            continue
        name = probe["file"]
        if name not in parsed:
            parsed[name] = RobotsTxt.parse((CORPUS / name).read_bytes())
        checked[probe["kind"]] += 1
        if parsed[name].allowed(probe["url"], probe["user_agent"]) != probe["google_allowed"]:
            disagreements.append(probe)
    assert sum(checked.values()) > 50_000, checked
    assert disagreements == [], f"{len(disagreements)} disagreements, e.g. {disagreements[:5]}"


def _decode_letters(url: str) -> str:
    return re.sub(
        r"%([0-9A-Fa-f]{2})",
        lambda m: chr(int(m.group(1), 16)) if chr(int(m.group(1), 16)).isalnum() else m.group(),
        url,
    )


def test_contested_probes_read_as_the_decoded_url() -> None:
    """RFC 9309 §2.2.2: a URL with a letter written as ``%xx`` gets the verdict Google gives the
    same URL with the letter written plainly (where the probes hold that URL too): the one
    class where the package parts from Google, on purpose."""
    probes = _probes()
    google = {
        (p["file"], p["user_agent"], p["url"]): p["google_allowed"]
        for p in probes
        if p["kind"] != CONTESTED_KIND
    }
    parsed: dict[str, RobotsTxt] = {}
    compared = 0
    for probe in probes:
        if probe["kind"] != CONTESTED_KIND:
            continue
        plain = google.get((probe["file"], probe["user_agent"], _decode_letters(probe["url"])))
        if plain is None:
            continue
        name = probe["file"]
        if name not in parsed:
            parsed[name] = RobotsTxt.parse((CORPUS / name).read_bytes())
        assert parsed[name].allowed(probe["url"], probe["user_agent"]) is plain, probe
        compared += 1
    assert compared > 1_000
