"""Unit tests for the robots.txt matcher, one test per rule of the contract.

Sources: RFC 9309 ("Robots Exclusion Protocol") sections 2.1-2.5 and 5, and Google's
"How Google interprets the robots.txt specification" (cited below as "Google spec").
Crawl-delay is not part of either; its rules are the package's own (see the README).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_robotsmeta import RobotsTxt, Rule, Verdict
from scrapy_robotsmeta.useragent import product_token
from tests.shared import CORPUS

BASE = "https://example.com"
UA = "mybot"
CAP = 512_000


def parse(text: str) -> RobotsTxt:
    return RobotsTxt.parse(text.encode("utf-8"))


def allows(rules: RobotsTxt, path: str, agent: str = UA) -> bool:
    return rules.allowed(BASE + path, agent)


def deciding(rules: RobotsTxt, path: str, agent: str = UA) -> Rule:
    """The rule that decided ``path``; fails the test when no rule decided."""
    verdict = rules.explain(BASE + path, agent)
    assert verdict.rule is not None, f"no rule decided {path!r}"
    return verdict.rule


def disallowing(pattern: str) -> RobotsTxt:
    return parse(f"User-agent: *\nDisallow: {pattern}\n")


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
# Robustness: size cap, bad bytes, non-robots bodies
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


def test_groups_naming_same_agent_are_merged() -> None:
    """RFC 9309 §2.2.1: groups that match the same agent are combined; Google spec example
    (googlebot-news with /fish and /shrimp)."""
    rules = parse(
        "user-agent: googlebot-news\ndisallow: /fish\n\n"
        "user-agent: *\ndisallow: /carrots\n\n"
        "User-Agent: GoogleBot-News\ndisallow: /shrimp\n"
    )
    news = "googlebot-news"
    assert not allows(rules, "/fish", news)
    assert not allows(rules, "/shrimp", news)
    assert allows(rules, "/carrots", news)
    assert deciding(rules, "/shrimp", news).line == 8
    agents = rules.explain(BASE + "/shrimp", news).agents
    assert agents is not None
    assert news in agents
    assert not allows(rules, "/carrots", "otherbot")
    assert allows(rules, "/fish", "otherbot")


def test_star_groups_are_merged() -> None:
    """RFC 9309 §2.2.1: two ``*`` groups are combined into one."""
    rules = parse(
        "User-agent: *\nDisallow: /one\n\n"
        "User-agent: a\nAllow: /\n\n"
        "User-agent: *\nDisallow: /two\n"
    )
    assert not allows(rules, "/one")
    assert not allows(rules, "/two")
    assert deciding(rules, "/two").line == 8
    assert allows(rules, "/one", "a")


# --------------------------------------------------------------------------------------------
# Agent selection
# --------------------------------------------------------------------------------------------


def test_no_matching_group_uses_star_group() -> None:
    """RFC 9309 §2.2.1: with no group for the crawler, the ``*`` group applies."""
    rules = parse("User-agent: otherbot\nDisallow: /other\n\nUser-agent: *\nDisallow: /star\n")
    assert not allows(rules, "/star")
    assert allows(rules, "/other")
    verdict = rules.explain(BASE + "/star", UA)
    assert verdict.agents == ("*",)
    assert verdict.rule is not None
    assert (verdict.rule.allow, verdict.rule.path, verdict.rule.line) == (False, "/star", 5)


def test_no_star_group_allows_everything() -> None:
    """RFC 9309 §2.2.1: no group for the crawler and no ``*`` group: no rules apply."""
    rules = parse("User-agent: otherbot\nDisallow: /\n")
    assert allows(rules, "/")
    assert allows(rules, "/private")
    assert not allows(rules, "/private", "otherbot")
    verdict = rules.explain(BASE + "/private", UA)
    assert (verdict.allowed, verdict.rule, verdict.agents) == (True, None, None)


def test_matching_group_replaces_star_group() -> None:
    """RFC 9309 §2.2.1: the crawler obeys its own group only; ``*`` rules do not add to it."""
    rules = parse("User-agent: *\nDisallow: /\n\nUser-agent: mybot\nDisallow: /private\n")
    assert allows(rules, "/public")
    assert not allows(rules, "/private")
    assert rules.explain(BASE + "/public", UA).agents == ("mybot",)
    assert not allows(rules, "/public", "otherbot")


def test_empty_group_allows_everything() -> None:
    """RFC 9309 §2.1 and §2.2.2: a group with no rules (the last one) allows everything, and
    the ``*`` group does not step in."""
    rules = parse("User-agent: *\nDisallow: /\n\nUser-agent: mybot\n")
    assert allows(rules, "/anything")
    verdict = rules.explain(BASE + "/anything", UA)
    assert (verdict.allowed, verdict.rule, verdict.agents) == (True, None, ("mybot",))


@pytest.mark.parametrize(
    ("group_agent", "crawler"),
    [
        ("googlebot", "googlebot-news"),
        ("googlebot-news", "googlebot"),
        ("googlebot", "googlebotnews"),
        ("bot", "mybot"),
        ("my", "mybot"),
        ("mybot", "mybot_two"),
    ],
)
def test_agent_match_is_exact(group_agent: str, crawler: str) -> None:
    """RFC 9309 §2.2.1 and the contract: the product token equals the group's agent; no
    prefix or substring match, so a googlebot group does not apply to googlebot-news."""
    rules = parse(f"User-agent: {group_agent}\nDisallow: /\n\nUser-agent: *\nDisallow: /star\n")
    assert allows(rules, "/page", crawler)
    assert not allows(rules, "/star", crawler)
    assert rules.explain(BASE + "/page", crawler).agents == ("*",)
    assert not allows(rules, "/page", group_agent)


@pytest.mark.parametrize(
    "crawler",
    [
        "googlebot-news",
        "GOOGLEBOT-NEWS",
        "Googlebot-News",
        "Googlebot-News/2.1",
        "Mozilla/5.0 (compatible; Googlebot-News/2.1; +http://www.google.com/bot.html)",
    ],
)
def test_agent_match_is_case_insensitive(crawler: str) -> None:
    """RFC 9309 §2.2.1: product tokens are matched case-insensitively."""
    rules = parse("User-agent: GoogleBot-NEWS\nDisallow: /news\n\nUser-agent: *\nDisallow: /\n")
    assert not allows(rules, "/news", crawler)
    assert allows(rules, "/other", crawler)
    assert rules.explain(BASE + "/other", crawler).agents == ("googlebot-news",)


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


def test_agent_not_matched_inside_full_user_agent() -> None:
    """RFC 9309 §2.2.1: only the crawler's product token is compared, never a substring of
    its full User-Agent header (Protego obeys ``otherbot`` found in the crawler's URL)."""
    header = "Mozilla/5.0 (compatible; MyCrawler/1.0; +http://example.com/otherbot)"
    rules = parse("User-agent: otherbot\nDisallow: /\n")
    assert allows(rules, "/page", header)
    assert rules.explain(BASE + "/page", header).agents is None
    rules = parse("User-agent: otherbot\nDisallow: /\n\nUser-agent: mycrawler\nDisallow: /mine\n")
    assert allows(rules, "/page", header)
    assert not allows(rules, "/mine", header)
    assert rules.explain(BASE + "/page", header).agents == ("mycrawler",)
    # Not Mozilla either: the token inside "(compatible; ...)" is the crawler's name.
    assert allows(parse("User-agent: mozilla\nDisallow: /\n"), "/page", header)


@pytest.mark.parametrize(
    ("header", "group_agent"),
    [
        ("Scrapy/2.19 (+https://scrapy.org)", "scrapy"),
        ("Mozilla/5.0 (compatible; MyCrawler/1.0; +http://example.com/bot)", "MyCrawler"),
        ("mycrawler", "MYCRAWLER"),
    ],
)
def test_full_user_agent_reduced_to_product_token(header: str, group_agent: str) -> None:
    """RFC 9309 §2.2.1: a full User-Agent header is reduced to its product token first."""
    rules = parse(f"User-agent: {group_agent}\nDisallow: /private\n\nUser-agent: *\nDisallow: /\n")
    assert not allows(rules, "/private", header)
    assert allows(rules, "/public", header)


# --------------------------------------------------------------------------------------------
# Matching: precedence
# --------------------------------------------------------------------------------------------


def test_longest_match_wins() -> None:
    """RFC 9309 §2.2.2 and §5.2: the most specific (longest) matching rule decides."""
    rules = parse(
        "User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n"
    )
    assert allows(rules, "/example/page/", "foobot")
    assert allows(rules, "/example/page/other.gif", "foobot")
    assert not allows(rules, "/example/page/disallowed.gif", "foobot")
    verdict = rules.explain(BASE + "/example/page/disallowed.gif", "foobot")
    assert verdict.allowed is False
    assert verdict.agents == ("foobot",)
    assert verdict.rule is not None
    assert (verdict.rule.allow, verdict.rule.path, verdict.rule.line) == (
        False,
        "/example/page/disallowed.gif",
        3,
    )


@pytest.mark.parametrize(
    ("allow", "disallow", "path", "expected"),
    [
        ("/p", "/", "/page", True),
        ("/page", "/*.htm", "/page.htm", False),
        ("/$", "/", "/", True),
        ("/$", "/", "/page.htm", False),
        ("/folder/", "/folder", "/folder/page", True),
        ("/folder", "/folder/", "/folder/page", False),
    ],
)
def test_longest_match_wins_google_examples(
    allow: str, disallow: str, path: str, expected: bool
) -> None:
    """Google spec "Order of precedence for rules": the rule with the longest path wins."""
    for body in (
        f"User-agent: *\nAllow: {allow}\nDisallow: {disallow}\n",
        f"User-agent: *\nDisallow: {disallow}\nAllow: {allow}\n",
    ):
        rules = parse(body)
        assert allows(rules, path) is expected
        assert deciding(rules, path).allow is expected


def test_longest_match_counts_pattern_length() -> None:
    """RFC 9309 §2.2.2, Google spec "Order of precedence for rules": specificity is the length
    of the rule's path, not the length of URL text a wildcard happened to cover."""
    rules = parse("User-agent: *\nDisallow: /*x\nAllow: /abc\n")
    # /*x (3) covers all of /abcx, /abc (4) covers less of it, yet /abc is the longer rule.
    assert allows(rules, "/abcx")
    assert deciding(rules, "/abcx").path == "/abc"
    assert not allows(rules, "/zzzx")


@pytest.mark.parametrize(
    ("allow", "disallow", "path"),
    [
        ("/folder", "/folder", "/folder/page"),
        ("/page", "/*.ph", "/page.php"),
        ("/a*", "/ab", "/abc"),
    ],
)
def test_equal_length_allow_wins(allow: str, disallow: str, path: str) -> None:
    """RFC 9309 §2.2.2 and Google spec "Order of precedence for rules": of two equally long
    matching rules, allow (the least restrictive) wins, whatever their order."""
    for body, allow_line in (
        (f"User-agent: *\nAllow: {allow}\nDisallow: {disallow}\n", 2),
        (f"User-agent: *\nDisallow: {disallow}\nAllow: {allow}\n", 3),
    ):
        rules = parse(body)
        assert allows(rules, path)
        rule = deciding(rules, path)
        assert (rule.allow, rule.path, rule.line) == (True, allow, allow_line)


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


def test_robots_txt_always_allowed() -> None:
    """RFC 9309 §2.2.2: the /robots.txt URI is implicitly allowed, even under ``Disallow: /``."""
    for body in (
        "User-agent: *\nDisallow: /\n",
        "User-agent: *\nDisallow: /robots.txt\n",
        "User-agent: *\nDisallow: /*.txt$\n",
    ):
        rules = parse(body)
        assert allows(rules, "/robots.txt")
        assert rules.explain(BASE + "/robots.txt", UA).allowed is True
    assert not allows(parse("User-agent: *\nDisallow: /robots.txt\n"), "/robots.txt/more")
    assert not allows(parse("User-agent: *\nDisallow: /\n"), "/Robots.txt")


def test_matching_is_case_sensitive() -> None:
    """RFC 9309 §2.2.2 (matching is case sensitive), Google spec path examples."""
    rules = disallowing("/Private")
    assert not allows(rules, "/Private/x")
    assert allows(rules, "/private/x")
    assert allows(rules, "/PRIVATE/x")


def test_matching_starts_at_first_octet_of_path() -> None:
    """RFC 9309 §2.2.2: a rule matches from the start of the path, not anywhere in it."""
    rules = disallowing("/fish")
    assert not allows(rules, "/fish/1")
    assert allows(rules, "/desert/fish")
    assert allows(rules, "/catfish")


# --------------------------------------------------------------------------------------------
# Matching: wildcards, anchors, query and fragment
# --------------------------------------------------------------------------------------------

_GOOGLE_PATH_EXAMPLES = [
    ("/", ["/", "/anything", "/a/b?c=d"], []),
    ("/*", ["/", "/anything", "/a/b?c=d"], []),
    ("/$", ["/"], ["/anything", "/?x=1"]),
    (
        "/fish",
        [
            "/fish",
            "/fish.html",
            "/fish/salmon.html",
            "/fishheads",
            "/fishheads/yummy.html",
            "/fish.php?id=anything",
        ],
        ["/Fish.asp", "/catfish", "/?id=fish", "/desert/fish"],
    ),
    (
        "/fish*",
        [
            "/fish",
            "/fish.html",
            "/fish/salmon.html",
            "/fishheads",
            "/fishheads/yummy.html",
            "/fish.php?id=anything",
        ],
        ["/Fish.asp", "/catfish", "/?id=fish", "/desert/fish"],
    ),
    (
        "/fish/",
        ["/fish/", "/fish/?id=anything", "/fish/salmon.htm"],
        ["/fish", "/fish.html", "/animals/fish/", "/Fish/Salmon.asp"],
    ),
    (
        "/*.php",
        [
            "/index.php",
            "/filename.php",
            "/folder/filename.php",
            "/folder/filename.php?parameters",
            "/folder/any.php.file.html",
            "/filename.php/",
        ],
        ["/", "/windows.PHP"],
    ),
    (
        "/*.php$",
        ["/filename.php", "/folder/filename.php"],
        ["/filename.php?parameters", "/filename.php/", "/filename.php5", "/windows.PHP"],
    ),
    ("/fish*.php", ["/fish.php", "/fishheads/catfish.php?parameters"], ["/Fish.PHP"]),
]


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        (pattern, path, matches)
        for pattern, hits, misses in _GOOGLE_PATH_EXAMPLES
        for paths, matches in ((hits, True), (misses, False))
        for path in paths
    ],
)
def test_path_matching_google_examples(pattern: str, path: str, matches: bool) -> None:
    """Google spec "URL matching based on path values": the examples table."""
    assert allows(disallowing(pattern), path) is not matches


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("/*/private/*.pdf", "/a/b/private/c/d.pdf", True),
        ("/*/private/*.pdf", "/a/private/d.pdf", True),
        ("/*/private/*.pdf", "/private/d.pdf", False),
        ("/*/private/*.pdf", "/a/private.pdf", False),
        ("/a**b", "/a-x-b", True),
        ("/a**b", "/ab", True),
        ("/a**b", "/a-x-c", False),
        ("/this/*/exactly", "/this/a/b/exactly", True),
        ("/this/*/exactly", "/this//exactly", True),
        ("/this/*/exactly", "/this/exactly", False),
        ("*.gif$", "/images/a.gif", True),
        ("*.gif$", "/a.gif?x=1", False),
        ("/*a*a*a*a*a*b", "/" + "a" * 30, False),
        ("/*a*a*a*a*a*b", "/" + "a" * 30 + "b", True),
    ],
)
def test_wildcard_matches_any_run_of_characters(pattern: str, path: str, matches: bool) -> None:
    """RFC 9309 §2.2.3 (``*`` is 0 or more of any character) and §5.1 (``*.gif$``): several
    wildcards in one rule, including a leading one."""
    assert allows(disallowing(pattern), path) is not matches


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("/this/path/exactly$", "/this/path/exactly", True),
        ("/this/path/exactly$", "/this/path/exactly/more", False),
        ("/this/path/exactly$", "/this/path/exactly?x=1", False),
        ("/*.pdf$", "/docs/a.pdf", True),
        ("/*.pdf$", "/docs/a.pdf.html", False),
    ],
)
def test_dollar_anchors_end(pattern: str, path: str, matches: bool) -> None:
    """RFC 9309 §2.2.3: a final ``$`` marks the end of the pattern: the URL must end there."""
    assert allows(disallowing(pattern), path) is not matches


def test_dollar_not_at_end_is_literal() -> None:
    """RFC 9309 §2.2.3 and the contract: only a final ``$`` anchors; elsewhere it is a plain
    character."""
    rules = disallowing("/a$b")
    assert not allows(rules, "/a$b")
    assert not allows(rules, "/a$b/c")
    assert allows(rules, "/a")
    assert allows(rules, "/ab")


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("/*?", "/search?q=shoes", True),
        ("/*?", "/search", False),
        ("/search?q=", "/search?q=shoes", True),
        ("/search?q=", "/search?lang=en&q=shoes", False),
        ("/*?*sort=", "/list?page=2&sort=asc", True),
        ("/*?*sort=", "/list/sort=asc", False),
        ("/foo/bar?baz=quz", "/foo/bar?baz=quz", True),
        ("/*.php$", "/index.php?x=1", False),
    ],
)
def test_query_string_is_matched(pattern: str, path: str, matches: bool) -> None:
    """RFC 9309 §2.2.2 (Figure 4, ``/foo/bar?baz=quz``): the query is part of what is matched."""
    assert allows(disallowing(pattern), path) is not matches


def test_fragment_is_not_matched() -> None:
    """RFC 9309 §2.2.2 and the contract: the URL's path plus query is matched, the fragment is
    not (it is never sent to the server)."""
    rules = disallowing("/page$")
    assert not allows(rules, "/page#section")
    rules = disallowing("/*frag")
    assert allows(rules, "/page#frag")
    rules = disallowing("/page?x=1$")
    assert not allows(rules, "/page?x=1#top")


def test_empty_url_path_is_slash() -> None:
    """RFC 9309 §2.2.2 (matching starts at the path's first octet) and the contract: a URL
    with an empty path is matched as ``/``."""
    assert not disallowing("/$").allowed("https://example.com", UA)
    assert disallowing("/$").allowed("https://example.com/x", UA)
    assert not disallowing("/?x=").allowed("https://example.com?x=1", UA)


# --------------------------------------------------------------------------------------------
# Matching: percent-encoding
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# RFC 9309 §5.1, the whole example
# --------------------------------------------------------------------------------------------

_RFC_EXAMPLE = """\
User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
"""


@pytest.mark.parametrize(
    ("agent", "path", "expected"),
    [
        ("foobot", "/example/page.html", True),
        ("foobot", "/example/allowed.gif", True),
        ("foobot", "/example/other.html", False),
        ("foobot", "/", False),
        ("barbot", "/example/page.html", False),
        ("barbot", "/example/other.html", True),
        ("barbot", "/image.gif", True),
        ("bazbot", "/example/page.html", False),
        ("bazbot", "/", True),
        ("quxbot", "/example/page.html", True),
        ("quxbot", "/image.gif", True),
        ("otherbot", "/image.gif", False),
        ("otherbot", "/a/b.gif", False),
        ("otherbot", "/a/b.gif?x=1", True),
        ("otherbot", "/example/x.html", False),
        ("otherbot", "/publications/x.html", True),
        ("otherbot", "/publications/x.gif", True),
        ("otherbot", "/", True),
    ],
)
def test_rfc9309_simple_example(agent: str, path: str, expected: bool) -> None:
    """RFC 9309 §5.1: the simple example, one verdict per crawler and URL."""
    assert allows(parse(_RFC_EXAMPLE), path, agent) is expected


def test_rfc9309_simple_example_explained() -> None:
    """RFC 9309 §5.1: which group and which line decide, per crawler."""
    rules = parse(_RFC_EXAMPLE)
    verdict = rules.explain(BASE + "/example/page.html", "bazbot")
    assert verdict.agents is not None
    assert sorted(verdict.agents) == ["barbot", "bazbot"]
    assert verdict.rule is not None
    assert (verdict.rule.allow, verdict.rule.path, verdict.rule.line) == (
        False,
        "/example/page.html",
        13,
    )
    verdict = rules.explain(BASE + "/example/page.html", "quxbot")
    assert (verdict.allowed, verdict.rule, verdict.agents) == (True, None, ("quxbot",))
    verdict = rules.explain(BASE + "/example/page.html", "foobot")
    assert verdict.rule is not None
    assert (verdict.rule.allow, verdict.rule.path, verdict.rule.line) == (
        True,
        "/example/page.html",
        8,
    )
    verdict = rules.explain(BASE + "/pic.gif", "otherbot")
    assert verdict.agents == ("*",)
    assert verdict.rule is not None
    assert (verdict.rule.path, verdict.rule.line) == ("*.gif$", 2)


# --------------------------------------------------------------------------------------------
# explain()
# --------------------------------------------------------------------------------------------


def test_explain_reports_deciding_rule_and_group() -> None:
    """Contract: ``explain`` names the deciding allow/disallow line and the chosen group."""
    rules = parse(
        "# header\nUser-agent: googlebot\nDisallow: /\n\n"
        "User-agent: MyBot/2.0\nDisallow: /a\nAllow: /a/b\n"
    )
    verdict = rules.explain(BASE + "/a/b/c", "MyBot/2.0 (+https://example.com)")
    assert verdict.allowed is True
    assert verdict.agents == ("mybot",)
    assert verdict.rule is not None
    assert (verdict.rule.allow, verdict.rule.path, verdict.rule.line) == (True, "/a/b", 7)
    verdict = rules.explain(BASE + "/a/x", UA)
    assert verdict.allowed is False
    assert verdict.rule is not None
    assert (verdict.rule.allow, verdict.rule.path, verdict.rule.line) == (False, "/a", 6)
    verdict = rules.explain(BASE + "/z", UA)
    assert (verdict.allowed, verdict.rule, verdict.agents) == (True, None, ("mybot",))
    verdict = rules.explain(BASE + "/z", "googlebot")
    assert verdict.agents == ("googlebot",)
    assert verdict.rule is not None
    assert (verdict.allowed, verdict.rule.line) == (False, 3)


@pytest.mark.parametrize("path", ["/", "/a", "/a/b", "/a/x?y=1", "/robots.txt", "/z"])
def test_explain_agrees_with_allowed(path: str) -> None:
    """Contract: ``explain(...).allowed`` is the same verdict as ``allowed``."""
    rules = parse("User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /$\n")
    assert rules.explain(BASE + path, UA).allowed is allows(rules, path)


# --------------------------------------------------------------------------------------------
# Crawl-delay (beyond the spec: the package's own rules, see the README)
# --------------------------------------------------------------------------------------------


def test_crawl_delay_of_selected_group() -> None:
    """Contract: the crawl-delay of the group that applies to the crawler."""
    rules = parse(
        "User-agent: *\nCrawl-delay: 10\nDisallow: /x\n\n"
        "User-agent: mybot\nCrawl-delay: 2\nDisallow: /y\n\n"
        "User-agent: quiet\nDisallow: /z\n"
    )
    assert rules.crawl_delay(UA) == 2.0
    assert rules.crawl_delay("Mozilla/5.0 (compatible; MyBot/1.0)") == 2.0
    assert rules.crawl_delay("otherbot") == 10.0
    # quiet has its own group without a crawl-delay: the "*" value is not inherited.
    assert rules.crawl_delay("quiet") is None


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


# --------------------------------------------------------------------------------------------
# The crawler-side reduction: scrapy_robotsmeta.useragent.product_token
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("mycrawler", "mycrawler"),
        ("MyCrawler", "mycrawler"),
        ("  MyCrawler  ", "mycrawler"),
        ("Googlebot-News", "googlebot-news"),
        ("my_bot/1.0", "my_bot"),
        ("Scrapy/2.19 (+https://scrapy.org)", "scrapy"),
        ("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", "mozilla"),
        ("Foo Bar", "foo"),
    ],
)
def test_product_token_first_product(header: str, token: str) -> None:
    """RFC 9309 §2.2.1 and the contract: without ``(compatible; ...)``, the first product
    name (before ``/``), cut to letters, ``_`` and ``-``, lowercased."""
    assert product_token(header) == token


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Mozilla/5.0 (compatible; MyCrawler/1.0; +http://example.com/otherbot)", "mycrawler"),
        ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "googlebot"),
        ("Mozilla/5.0 (compatible;MyBot/1.0)", "mybot"),
        ("Mozilla/5.0 (compatible; MyBot; +https://example.com/bot)", "mybot"),
        (
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; "
            "+http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36",
            "bingbot",
        ),
    ],
)
def test_product_token_compatible_name(header: str, token: str) -> None:
    """Contract: the name inside ``(compatible; Name/x.y ...)`` is the product token; nothing
    else in the header (such as ``otherbot`` in a URL) counts."""
    assert product_token(header) == token


def test_product_token_empty() -> None:
    """Contract: an empty header has an empty token, which names no group."""
    assert product_token("") == ""
    rules = parse("User-agent: mybot\nAllow: /\n\nUser-agent: *\nDisallow: /x\n")
    assert not allows(rules, "/x", "")
    assert rules.explain(BASE + "/x", "").agents == ("*",)
