"""``RobotsTxt`` (``robotstxt/__init__.py``): which group applies to a crawler, the part of a
URL it compares, what ``explain`` reports, and Google's verdicts on real files.

Sources: RFC 9309 sections 2.2 and 5, and Google's "How Google interprets the robots.txt
specification" (cited below as "Google spec"). The probes of ``../shared/conformance/`` hold the
verdicts of Google's open-source matcher on the real files of ``../shared/corpus/``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest

from scrapy_robotsmeta import RobotsTxt
from tests.rules import BASE, UA, allows, deciding, disallowing, parse
from tests.shared import CONFORMANCE_PROBES, CORPUS

# --------------------------------------------------------------------------------------------
# Groups naming the same agent
# --------------------------------------------------------------------------------------------


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
# The URL's path
# --------------------------------------------------------------------------------------------


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
# Crawl-delay of the group that applies
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
