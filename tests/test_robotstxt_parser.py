"""Reading a robots.txt body into groups (``robotstxt/_parser.py``), one test per rule.

Sources: RFC 9309 ("Robots Exclusion Protocol") sections 2.1-2.5, and Google's "How Google
interprets the robots.txt specification" (cited below as "Google spec"); where Google's parser
reads more than RFC 9309 says (a forgotten colon, misspelt field names, over-long lines), the
parser reads as Google does. Crawl-delay is not part of either; its rules are the package's own
(see the README).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_robotsmeta import RobotsTxt, Rule, Verdict
from tests.rules import BASE, UA, allows, deciding, parse
from tests.shared import CORPUS

CAP = 512_000
# Google's parser keeps this many bytes of a line (a buffer of 8 x 2,083 with its terminator).
GOOGLE_LINE_LIMIT = 16_663


# --------------------------------------------------------------------------------------------
# Line syntax: line endings, BOM, comments, whitespace, field names
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("newline", ["\n", "\r", "\r\n"], ids=["LF", "CR", "CRLF"])
def test_line_endings_lf_cr_crlf(newline: str) -> None:
    """RFC 9309 §2.2 (NL is CR, LF or CRLF); Google spec "File format": all three end a line."""
    rules = parse(newline.join(["User-agent: *", "Disallow: /a", "Allow: /a/b", ""]))
    assert not allows(rules, "/a/x")
    assert allows(rules, "/a/b/c")
    assert allows(rules, "/z")
    # CRLF is one line ending, not two: the rules sit on lines 2 and 3.
    assert deciding(rules, "/a/x").line == 2
    assert deciding(rules, "/a/b/c").line == 3


def test_mixed_line_endings() -> None:
    """RFC 9309 §2.2: CR, LF and CRLF may be mixed; LF followed by CR is two line endings."""
    body = "User-agent: *\r\nDisallow: /a\rDisallow: /b\nDisallow: /c\n\rDisallow: /d\r\nAllow: /e"
    rules = parse(body)
    lines = {path: deciding(rules, path).line for path in ("/a", "/b", "/c", "/d")}
    assert lines == {"/a": 2, "/b": 3, "/c": 4, "/d": 6}
    assert allows(rules, "/e")
    assert deciding(rules, "/e").line == 7
    assert allows(rules, "/f")


def test_utf8_bom_is_ignored() -> None:
    """Google spec "File format": a leading UTF-8 byte order mark is ignored (RFC 9309 §2.3)."""
    rules = RobotsTxt.parse(b"\xef\xbb\xbfUser-agent: *\nDisallow: /private\n")
    assert not allows(rules, "/private/x")
    assert allows(rules, "/public")
    assert deciding(rules, "/private").line == 2
    assert rules.explain(BASE + "/private", UA).agents == ("*",)


def test_comment_at_line_end() -> None:
    """RFC 9309 §2.2.3: ``#`` starts a comment, also after a value on the same line."""
    rules = parse(
        "User-agent: mybot # our crawler\n"
        "Disallow: /private # keep out\n"
        "Allow: /private/ok#no space before the hash\n"
    )
    assert not allows(rules, "/private/x")
    assert allows(rules, "/private/ok/1")
    rule = deciding(rules, "/private/x")
    assert (rule.allow, rule.path, rule.line) == (False, "/private", 2)
    assert deciding(rules, "/private/ok").path == "/private/ok"
    assert rules.explain(BASE + "/x", UA).agents == ("mybot",)


def test_comment_lines_are_ignored() -> None:
    """RFC 9309 §2.2.3: a line holding only a comment carries no record."""
    rules = parse("# Disallow: /\nUser-agent: *\n   # Disallow: /also-not\nDisallow: /private\n")
    assert allows(rules, "/")
    assert allows(rules, "/also-not")
    assert not allows(rules, "/private")
    assert deciding(rules, "/private").line == 4


def test_whitespace_around_values() -> None:
    """RFC 9309 §2.2 (ABNF ``*WS`` around key, colon and value): spaces and tabs are trimmed."""
    rules = parse("  User-agent \t:  MyBot  \n\tDisallow :\t/private \t\n Allow:/private/ok\n")
    assert not allows(rules, "/private/x")
    assert allows(rules, "/private/ok")
    rule = deciding(rules, "/private/x")
    assert (rule.path, rule.line) == ("/private", 2)
    assert rules.explain(BASE + "/x", UA).agents == ("mybot",)


def test_field_names_case_insensitive() -> None:
    """RFC 9309 §2.2 (ABNF literals are case-insensitive); Google spec: field names too."""
    rules = parse(
        "USER-AGENT: MyBot\nDISALLOW: /a\nallow: /a/b\nDiSaLlOw: /c\n"
        "SITEMAP: https://example.com/s.xml\nCRAWL-DELAY: 3\n"
    )
    assert not allows(rules, "/a/x")
    assert allows(rules, "/a/b")
    assert not allows(rules, "/c")
    assert rules.sitemaps == ["https://example.com/s.xml"]
    assert rules.crawl_delay(UA) == 3.0


# --------------------------------------------------------------------------------------------
# A line without its colon, misspelt field names (Google spec)
# --------------------------------------------------------------------------------------------


def test_missing_colon_two_words_is_a_key_and_value() -> None:
    """Google: a line without a colon that is exactly two words (``disallow /``) is read as
    ``key: value``; RFC 9309 would skip it."""
    rules = parse("user-agent FooBot\ndisallow /\n")
    assert not allows(rules, "/page", "foobot")
    assert rules.explain(BASE + "/page", "foobot").rule == Rule(False, "/", 2)
    assert allows(rules, "/page", "otherbot")


def test_missing_colon_tabs_and_surrounding_space() -> None:
    rules = parse("  User-agent\tfoobot  \n\tDisallow \t /private  \n")
    assert not allows(rules, "/private/1", "foobot")
    assert allows(rules, "/public", "foobot")


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
    assert not allows(rules, "/private/x", "foobot")
    assert allows(rules, "/private/ok", "foobot")
    assert allows(rules, "/private/x", "otherbot")


@pytest.mark.parametrize("key", ["user", "agent", "disallo", "alow", "deny", "noindex"])
def test_other_field_names_are_ignored(key: str) -> None:
    rules = parse(f"User-agent: *\n{key}: /\n")
    assert allows(rules, "/")


# --------------------------------------------------------------------------------------------
# Robustness: size cap, bad bytes, non-robots bodies, any input
# --------------------------------------------------------------------------------------------


def _filler(size: int) -> bytes:
    """``size`` bytes of comment lines, 100 bytes each (the last one shorter)."""
    whole, rest = divmod(size, 100)
    lines = [b"#" + b"x" * 98 + b"\n"] * whole
    if rest == 1:
        lines.append(b"\n")
    elif rest:
        lines.append(b"#" + b"x" * (rest - 2) + b"\n")
    return b"".join(lines)


def test_only_first_512000_bytes_are_parsed() -> None:
    """RFC 9309 §2.5 (limit of at least 500 KiB), Google spec (500 KiB): the rest is ignored."""
    head = b"User-agent: *\nDisallow: /first\n"
    before = b"Disallow: /before\n"
    parsed = head + _filler(CAP - len(head) - len(before)) + before
    assert len(parsed) == CAP
    after = (
        b"Disallow: /after\n"
        b"Sitemap: https://example.com/after.xml\n"
        b"User-agent: mybot\n"
        b"Disallow: /\n"
    )
    rules = RobotsTxt.parse(parsed + after)
    assert not allows(rules, "/first")
    assert not allows(rules, "/before")
    assert deciding(rules, "/before").line == parsed.count(b"\n")
    assert allows(rules, "/after")
    assert allows(rules, "/other")
    assert rules.sitemaps == []
    # The mybot group lies beyond the cap: mybot still obeys the "*" group.
    assert rules.explain(BASE + "/before", UA).agents == ("*",)


def test_invalid_utf8_does_not_abort_parsing() -> None:
    """RFC 9309 §2.3.1.5: parse every line and use the parseable rules, whatever the bytes."""
    body = (
        b"User-agent: *\n"
        b"# menu du caf\xe9\n"  # Latin-1 e-acute in a comment
        b"Disallow: /menu # caf\xe9\n"
        b"Disallow: /caf\xe9\n"  # Latin-1 e-acute in a path
        b"Disallow: /after\n"
        b"Sitemap: https://example.com/sitemap.xml\n"
    )
    rules = RobotsTxt.parse(body)
    assert not allows(rules, "/menu")
    assert not allows(rules, "/after")
    assert deciding(rules, "/after").line == 5
    assert allows(rules, "/other")
    assert rules.sitemaps == ["https://example.com/sitemap.xml"]


def test_nul_bytes_do_not_abort_parsing() -> None:
    """RFC 9309 §2.3.1.5: a line of NUL bytes is skipped, the rules around it still apply."""
    body = (
        b"User-agent: *\n"
        b"Disallow: /private\n"
        b"\x00\x00\x00\n"
        b"# a NUL \x00 in a comment\n"
        b"Disallow: /secret\n"
    )
    rules = RobotsTxt.parse(body)
    assert not allows(rules, "/private")
    assert not allows(rules, "/secret")
    assert deciding(rules, "/secret").line == 5
    assert allows(rules, "/public")


def test_html_body_allows_everything() -> None:
    """RFC 9309 §2.3.1.5: an HTML page has no parseable rule, so nothing is disallowed."""
    body = (
        b"<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>\n"
        b"<body><h1>Not Found</h1>\n<p>User-agent: * Disallow: /</p>\n"
        b"<p>Disallow: /</p></body></html>\n"
    )
    rules = RobotsTxt.parse(body)
    assert allows(rules, "/")
    assert allows(rules, "/page")
    assert rules.sitemaps == []
    assert rules.crawl_delay(UA) is None
    assert rules.explain(BASE + "/page", UA).agents is None


def test_empty_body_allows_everything() -> None:
    """RFC 9309 §2.2.1: no groups at all means no rules apply."""
    rules = RobotsTxt.parse(b"")
    assert allows(rules, "/")
    assert allows(rules, "/anything?x=1")
    assert rules.sitemaps == []
    assert rules.crawl_delay(UA) is None
    verdict = rules.explain(BASE + "/anything", UA)
    assert isinstance(verdict, Verdict)
    assert (verdict.allowed, verdict.rule, verdict.agents) == (True, None, None)


@pytest.mark.parametrize(
    "body",
    [
        b"\xff\xfe\x00U\x00s\x00e\x00r",
        b"\xef\xbb\xbf",
        b"\r\r\n\n\r",
        b":::\n: :\nUser-agent\nDisallow\nAllow:\n",
        b"User-agent: \xc3\x28\nDisallow: /\xf0\x28\x8c\x28\n",
        b"User-agent: *\nDisallow: /" + b"*" * 5000 + b"\n",
        b"User-agent: *\nDisallow: /%\nDisallow: /%4\nDisallow: /%zz\nAllow: /%%%\n",
        b"Crawl-delay: 1e999\nUser-agent: *\nCrawl-delay: nan\n",
        bytes(range(256)) * 4,
    ],
)
def test_parse_never_raises_on_odd_input(body: bytes) -> None:
    """RFC 9309 §2.3.1.5 and the contract: ``parse`` never raises, queries answer with a bool."""
    rules = RobotsTxt.parse(body)
    assert isinstance(rules.allowed(BASE + "/a/b?q=1", UA), bool)
    assert isinstance(rules.allowed(BASE + "/", "Mozilla/5.0 (compatible; MyBot/1.0)"), bool)
    delay = rules.crawl_delay(UA)
    assert delay is None or delay >= 0
    assert all(isinstance(sitemap, str) for sitemap in rules.sitemaps)


_LINES = st.sampled_from(
    [
        "User-agent: *",
        "User-agent: mybot",
        "user-agent: MyBot/1.0",
        "Disallow: /",
        "Disallow: /a*b$",
        "Allow: /a",
        "Allow:",
        "Crawl-delay: 2",
        "Sitemap: https://example.com/s.xml",
        "# comment",
        "",
        "junk line",
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(st.one_of(_LINES, st.text(max_size=30)), max_size=25),
    noise=st.binary(max_size=64),
)
def test_parse_never_raises_on_generated_input(lines: list[str], noise: bytes) -> None:
    """The contract: ``parse`` never raises on any input, and ``allowed`` returns a bool."""
    rules = RobotsTxt.parse("\n".join(lines).encode("utf-8", "surrogatepass") + noise)
    assert isinstance(rules.allowed(BASE + "/a/b?c", UA), bool)
    assert rules.allowed(BASE + "/robots.txt", UA)


@settings(max_examples=200, deadline=None)
@given(body=st.binary(max_size=2000), url=st.text(max_size=200), agent=st.text(max_size=60))
def test_any_bytes_any_url_any_agent(body: bytes, url: str, agent: str) -> None:
    """parse() never raises; allowed() is a bool, the one explain() gives; nothing else
    raises either."""
    rules = RobotsTxt.parse(body)
    allowed = rules.allowed(url, agent)
    assert isinstance(allowed, bool)
    assert rules.explain(url, agent).allowed is allowed
    delay = rules.crawl_delay(agent)
    assert delay is None or isinstance(delay, float)
    assert all(isinstance(sitemap, str) for sitemap in rules.sitemaps)


def test_corpus_parses_without_error() -> None:
    """RFC 9309 §2.3.1.5: every real-world robots.txt of the corpus parses; queries answer."""
    if not CORPUS.is_dir():
        pytest.skip(f"corpus folder absent: {CORPUS}")
    files = sorted(path for path in CORPUS.iterdir() if path.is_file())
    assert files, f"corpus folder is empty: {CORPUS}"
    for path in files:
        rules = RobotsTxt.parse(path.read_bytes())
        assert isinstance(rules.allowed("https://example.com/", "scrapy"), bool), path.name


# --------------------------------------------------------------------------------------------
# Over-long lines (Google spec)
# --------------------------------------------------------------------------------------------


def test_long_disallow_line_is_cut_at_google_limit() -> None:
    """Google: a line longer than its limit is read up to the limit; the rest of the line is
    dropped, so the rule is the part of the path that fits."""
    prefix = "Disallow: "
    kept = "/x/" + "a" * (GOOGLE_LINE_LIMIT - len(prefix) - 3)
    rules = parse(f"User-agent: FooBot\n{prefix}{kept}/qux\n")
    assert len(prefix + kept) == GOOGLE_LINE_LIMIT
    assert allows(rules, "/fux", "foobot")
    assert not allows(rules, kept + "/fux", "foobot")
    assert not allows(rules, kept, "foobot")
    assert allows(rules, kept[:-1], "foobot")


def test_long_allow_lines_are_cut_at_google_limit() -> None:
    """Google: two allow lines that differ only past the limit are the same rule."""
    prefix = "Allow: "
    filler = GOOGLE_LINE_LIMIT - len(prefix) - 3
    kept_a, kept_b = "/x/" + "a" * filler, "/x/" + "b" * filler
    rules = parse(f"User-agent: FooBot\nDisallow: /\n{prefix}{kept_a}/qux\n{prefix}{kept_b}/qux\n")
    assert not allows(rules, "/", "foobot")
    assert allows(rules, kept_a + "/qux", "foobot")
    assert allows(rules, kept_b + "/fux", "foobot")
    assert not allows(rules, kept_b[:-1], "foobot")


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
# Grouping
# --------------------------------------------------------------------------------------------


def test_consecutive_user_agent_lines_form_one_group() -> None:
    """RFC 9309 §2.1 and §5.1: several user-agent lines then rules form one group."""
    rules = parse("User-agent: e\nUser-agent: f\nDisallow: /g\n\nUser-agent: *\nDisallow: /star\n")
    for agent in ("e", "f"):
        assert not allows(rules, "/g", agent)
        assert allows(rules, "/star", agent)
        verdict = rules.explain(BASE + "/g", agent)
        assert verdict.agents is not None
        assert sorted(verdict.agents) == ["e", "f"]
        assert verdict.rule is not None
        assert verdict.rule.line == 3


def test_group_not_ended_by_unknown_line() -> None:
    """Google spec "Grouping of lines and rules": lines other than allow/disallow/user-agent
    are ignored, so an unknown line between two user-agent lines keeps them one group
    (Protego ends the group there)."""
    rules = parse("User-agent: a\nfoo: bar\nUser-agent: b\nDisallow: /\n")
    assert not allows(rules, "/x", "a")
    assert not allows(rules, "/x", "b")
    assert allows(rules, "/x", "c")


def test_group_not_ended_by_crawl_delay_line() -> None:
    """RFC 9309 §2.2.4: a record outside the protocol (crawl-delay) must not end a group."""
    rules = parse("User-agent: a\nCrawl-delay: 4\nUser-agent: b\nDisallow: /\n")
    assert not allows(rules, "/x", "a")
    assert not allows(rules, "/x", "b")
    assert rules.crawl_delay("a") == 4.0
    assert rules.crawl_delay("b") == 4.0


def test_group_not_ended_by_sitemap_line() -> None:
    """RFC 9309 §2.2.4: a sitemap record must not end a group, between user-agents or rules."""
    rules = parse(
        "User-agent: a\nSitemap: https://example.com/1.xml\nUser-agent: b\n"
        "Disallow: /x\nSitemap: https://example.com/2.xml\nDisallow: /y\n"
    )
    for agent in ("a", "b"):
        assert not allows(rules, "/x", agent)
        assert not allows(rules, "/y", agent)
    assert allows(rules, "/z", "a")


def test_group_not_ended_by_blank_or_comment_line() -> None:
    """RFC 9309 §2.2 (ABNF allows empty lines inside a group): only a user-agent line after a
    rule ends a group."""
    rules = parse(
        "User-agent: a\n\n# comment\nUser-agent: b\nDisallow: /x\n\n# more\nDisallow: /y\n"
    )
    for agent in ("a", "b"):
        assert not allows(rules, "/x", agent)
        assert not allows(rules, "/y", agent)
    assert deciding(rules, "/y", "a").line == 8


def test_group_ended_by_user_agent_after_rule() -> None:
    """RFC 9309 §2.1: a group ends at a user-agent line that follows its rules."""
    rules = parse("User-agent: a\nAllow: /x\nUser-agent: b\nDisallow: /\n")
    assert allows(rules, "/y", "a")
    assert not allows(rules, "/y", "b")
    assert rules.explain(BASE + "/y", "a").agents == ("a",)
    assert rules.explain(BASE + "/y", "b").agents == ("b",)


def test_rules_before_first_user_agent_are_ignored() -> None:
    """RFC 9309 §2.2.2: allow/disallow lines outside any group are ignored."""
    rules = parse("Disallow: /secret\nAllow: /other/open\nUser-agent: *\nDisallow: /other\n")
    assert allows(rules, "/secret")
    assert not allows(rules, "/other/open")
    assert deciding(rules, "/other/open").line == 4
    assert allows(parse("Disallow: /\n"), "/page")


def test_empty_path_is_ignored() -> None:
    """RFC 9309 §2.2.2 (ABNF empty-pattern), Google spec "disallow": an empty value matches
    nothing, so ``Disallow:`` alone disallows nothing."""
    rules = parse("User-agent: *\nDisallow:\n")
    assert allows(rules, "/")
    assert allows(rules, "/anything")
    assert rules.explain(BASE + "/anything", UA).rule is None
    rules = parse("User-agent: *\nDisallow: /private\nAllow:\n")
    assert not allows(rules, "/private")
    assert deciding(rules, "/private").line == 2


def test_sitemaps_are_global_and_in_file_order() -> None:
    """RFC 9309 §2.2.4 and Google spec "sitemap": sitemap lines belong to no group."""
    rules = parse(
        "Sitemap: https://example.com/1.xml\n"
        "User-agent: a\nDisallow: /a\n"
        "sitemap: https://example.com/2.xml\n"
        "User-agent: *\nDisallow: /star\n"
        "Sitemap:   https://other.example/3.xml  \n"
        "Sitemap: https://example.com/caf\u00e9.xml\n"
    )
    assert rules.sitemaps == [
        "https://example.com/1.xml",
        "https://example.com/2.xml",
        "https://other.example/3.xml",
        "https://example.com/caf\u00e9.xml",
    ]
    # Sitemap lines did not split or end the groups around them.
    assert not allows(rules, "/a", "a")
    assert not allows(rules, "/star", "b")
    assert parse("User-agent: *\nDisallow: /\n").sitemaps == []


# --------------------------------------------------------------------------------------------
# The agent a user-agent line names
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "token"),
    [
        ("Foo Bar", "foo"),
        ("googlebot/1.2", "googlebot"),
        ("MyBot; v2", "mybot"),
        ("my_bot-x (beta)", "my_bot-x"),
    ],
)
def test_group_agent_is_leading_token_of_value(value: str, token: str) -> None:
    """RFC 9309 §2.2.1 (a product token is letters, ``_`` and ``-``): the group's agent is the
    value's leading run of those; Protego keeps the whole ``Foo Bar``."""
    rules = parse(f"User-agent: {value}\nDisallow: /\n")
    assert not allows(rules, "/page", token)
    assert rules.explain(BASE + "/page", token).agents == (token,)
    assert allows(rules, "/page", "someone-else")


def test_foo_bar_agent_does_not_match_bar() -> None:
    """RFC 9309 §2.2.1: ``User-agent: Foo Bar`` names ``foo``; ``bar`` is not in the group."""
    rules = parse("User-agent: Foo Bar\nDisallow: /\n")
    assert allows(rules, "/page", "bar")
    assert allows(rules, "/page", "foobar")
    assert not allows(rules, "/page", "Foo/1.0")


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
# Crawl-delay values (beyond the spec: the package's own rules, see the README)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [("5", 5.0), ("2.5", 2.5), ("0", 0.0), ("0.25", 0.25), ("  7  ", 7.0), ("3 # slow", 3.0)],
)
def test_crawl_delay_valid_values(value: str, expected: float) -> None:
    """Contract: a non-negative number, int or float."""
    delay = parse(f"User-agent: *\nCrawl-delay: {value}\n").crawl_delay(UA)
    assert delay == expected
    assert isinstance(delay, float)


@pytest.mark.parametrize("value", ["", "-1", "-0.5", "abc", "5s", "1,5", "one", "nan"])
def test_crawl_delay_invalid_values_are_none(value: str) -> None:
    """Contract: an invalid crawl-delay is None."""
    assert parse(f"User-agent: *\nCrawl-delay: {value}\nDisallow: /x\n").crawl_delay(UA) is None


def test_crawl_delay_absent_is_none() -> None:
    """Contract: no crawl-delay, or no group for the crawler, gives None."""
    assert parse("User-agent: *\nDisallow: /x\n").crawl_delay(UA) is None
    assert parse("User-agent: otherbot\nCrawl-delay: 5\n").crawl_delay(UA) is None
    assert parse("Crawl-delay: 5\nUser-agent: *\nDisallow: /x\n").crawl_delay(UA) is None


# Which Crawl-delay applies when a crawler's group has several (the package's own reading:
# the largest, the politest reading of what the site asked; Protego reads each line apart)


def test_crawl_delay_largest_of_one_group() -> None:
    """A group whose Crawl-delay lines say 1 and 12 waits 12, whatever their order."""
    assert parse("User-agent: *\nCrawl-delay: 1\nCrawl-delay: 12\n").crawl_delay(UA) == 12.0
    assert parse("User-agent: *\nCrawl-delay: 12\nCrawl-delay: 1\n").crawl_delay(UA) == 12.0


def test_crawl_delay_between_user_agent_lines_is_one_group() -> None:
    """RFC 9309 §2.2.4: a Crawl-delay line does not end a run of user-agent lines, so
    ``one / 1 / two / 12`` is one group, and both of its agents wait its largest delay."""
    rules = parse("User-agent: one\nCrawl-delay: 1\nUser-agent: two\nCrawl-delay: 12\n")
    assert rules.crawl_delay("one") == 12.0
    assert rules.crawl_delay("two") == 12.0


def test_crawl_delay_largest_of_merged_groups() -> None:
    """RFC 9309 §2.2.1: groups naming the same agent are merged; the largest of their
    Crawl-delays applies, whichever group comes first."""
    body = (
        "User-agent: mybot\nCrawl-delay: 2\nDisallow: /a\n\n"
        "User-agent: *\nCrawl-delay: 30\nDisallow: /b\n\n"
        "User-agent: mybot\nCrawl-delay: 9\nDisallow: /c\n\n"
        "User-agent: mybot\nDisallow: /d\n"
    )
    assert parse(body).crawl_delay(UA) == 9.0
    assert parse(body).crawl_delay("otherbot") == 30.0


def test_crawl_delay_invalid_lines_do_not_count() -> None:
    """Non-numeric and negative Crawl-delays are ignored beside valid ones, not read as 0."""
    body = "User-agent: *\nCrawl-delay: abc\nCrawl-delay: 3\nCrawl-delay: -50\nCrawl-delay: 0\n"
    assert parse(body).crawl_delay(UA) == 3.0
    assert parse("User-agent: *\nCrawl-delay: -1\nCrawl-delay: 0\n").crawl_delay(UA) == 0.0
