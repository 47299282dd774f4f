"""Usage preferences in robots.txt: ``Content-Usage`` and ``Content-Signal`` lines, the group
they belong to, the path they apply to, and ``RobotsTxt.usage`` / ``RobotsTxt.read_usage``.

Sources: draft-ietf-aipref-attach-05 §3 (a Content-Usage rule in a robots.txt group, with an
optional path that starts with "/" and ends at a space or tab, matched by longest path as
Allow and Disallow are), Cloudflare's Content Signals Policy (``Content-Signal:`` lines, which
apply to their whole group), RFC 9309 §2.1 / §2.2.1 (groups, the group a crawler selects by
its product token, groups naming the same agent merged into one).
"""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_robotsmeta import USES, Preferences, RobotsTxt, Statement
from scrapy_robotsmeta.usage.preferences import TDMREP_NOT_CONSULTED
from tests.rules import BASE, UA, allows, parse

# draft-ietf-aipref-attach-05, Figure 2.
ATTACH_FIGURE_2 = """\
User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y

User-Agent: ExampleBot
Allow: /
Content-Usage: train-ai=y
"""

# draft-ietf-aipref-attach-05, its introduction's example.
ATTACH_INTRO = "User-Agent: *\nAllow: /\nContent-Usage: train-ai=n\n"

# The block Cloudflare's managed robots.txt writes (Content Signals Policy, September 2025).
CLOUDFLARE = """\
User-Agent: *
Content-signal: search=yes, ai-train=no
Allow: /

User-agent: Amazonbot
Disallow: /
"""


def _usage(rules: RobotsTxt, path: str, agent: str = UA) -> dict[str, bool | None]:
    return rules.usage(BASE + path, agent).to_dict()


def _expect(**uses: bool) -> dict[str, bool | str | None]:
    """Every use None but those given; TDMRep not consulted."""
    return {use: uses.get(use) for use in USES} | TDMREP_NOT_CONSULTED


def _sources(rules: RobotsTxt, path: str, agent: str = UA) -> list[str]:
    """The source of each statement that applies, each once, in order."""
    statements = rules.usage(BASE + path, agent).statements
    return list(dict.fromkeys(s.source for s in statements))


TRAIN_NO = _expect(ai_train=False, ai_train_images=False)
TRAIN_YES = _expect(ai_train=True, ai_train_images=True)

# --------------------------------------------------------------------------------------------
# The drafts' and Cloudflare's examples
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "crawlable", "expected", "line"),
    [
        ("/test", True, TRAIN_NO, 4),
        ("/never/test", False, TRAIN_NO, 4),
        ("/ai-ok/test", True, TRAIN_YES, 5),
    ],
)
def test_attach_figure_2_other_crawlers(
    path: str, crawlable: bool, expected: dict[str, bool | None], line: int
) -> None:
    """draft-ietf-aipref-attach-05 Figure 2, its table for crawlers other than ExampleBot:
    /test crawlable with train-ai=n, /never/test not crawlable, /ai-ok/test crawlable with
    train-ai=y (the longer path wins)."""
    rules = parse(ATTACH_FIGURE_2)
    assert allows(rules, path) is crawlable
    assert _usage(rules, path) == expected
    assert [s.split(":")[0] for s in _sources(rules, path)] == [f"robots.txt line {line}"]


@pytest.mark.parametrize("path", ["/test", "/never/test", "/ai-ok/test", "/"])
@pytest.mark.parametrize(
    "agent", ["ExampleBot", "examplebot", "Mozilla/5.0 (compatible; ExampleBot/1.0)"]
)
def test_attach_figure_2_examplebot(path: str, agent: str) -> None:
    """draft-ietf-aipref-attach-05 Figure 2: ExampleBot has a group of its own (RFC 9309
    §2.2.1, selected by product token, case-insensitively), crawls everything and gets
    train-ai=y everywhere, none of ``*``'s rules."""
    rules = parse(ATTACH_FIGURE_2)
    assert allows(rules, path, agent)
    assert _usage(rules, path, agent) == TRAIN_YES
    assert _sources(rules, path, agent) == ["robots.txt line 9: Content-Usage: train-ai=y"]


def test_attach_intro_example() -> None:
    """draft-ietf-aipref-attach-05 introduction: ``Content-Usage: train-ai=n`` for every
    crawler, on every path, which all stay crawlable."""
    rules = parse(ATTACH_INTRO)
    for path in ("/", "/a", "/a/b?c=d", "/robots.txt"):
        assert allows(rules, path)
        assert _usage(rules, path) == TRAIN_NO
        assert _usage(rules, path, "ExampleBot") == TRAIN_NO


def test_cloudflare_managed_block() -> None:
    """Content Signals Policy, the managed robots.txt: the ``*`` group's Content-signal line
    gives search=yes and ai-train=no, and nothing about ai-input (absent = no preference)."""
    rules = parse(CLOUDFLARE)
    assert allows(rules, "/page")
    assert _usage(rules, "/page") == _expect(search=True, ai_train=False, ai_train_images=False)
    assert rules.usage(BASE + "/page", UA).allows("ai_input") is None


def test_cloudflare_managed_block_own_group_gets_no_signals() -> None:
    """RFC 9309 §2.2.1: Amazonbot follows its own group, disallowed everywhere, and gets none
    of the ``*`` group's signals."""
    rules = parse(CLOUDFLARE)
    assert not allows(rules, "/page", "Amazonbot")
    assert rules.usage(BASE + "/page", "Amazonbot") == Preferences()
    assert rules.read_usage(BASE + "/page", "Amazonbot").ignored == ()


def test_cloudflare_2026_form() -> None:
    """Cloudflare's 2026 form ``Content-Signal: search=yes,ai-train=no,use=reference``: the
    known signals count, ``use`` is ignored with a note naming its line."""
    rules = parse(
        "User-Agent: *\nContent-Signal: search=yes,ai-train=no,use=reference\nAllow: /\n"
    )
    reading = rules.read_usage(BASE + "/page", UA)
    assert reading.preferences.to_dict() == _expect(
        search=True, ai_train=False, ai_train_images=False
    )
    assert reading.ignored == (
        "robots.txt line 2: Content-Signal: search=yes,ai-train=no,use=reference: "
        "unknown signal 'use'",
    )


def test_cloudflare_block_merged_with_site_group() -> None:
    """RFC 9309 §2.2.1: Cloudflare prepends its ``User-Agent: *`` block to the site's own
    ``User-agent: *`` group; the two are merged, so the crawler gets the signals and the
    site's rules together."""
    rules = parse(
        "# As a condition of accessing this website, you agree to abide by the following\n"
        "User-Agent: *\n"
        "Content-signal: search=yes,ai-train=no\n"
        "Allow: /\n"
        "\n"
        "User-agent: *\n"
        "Disallow: /wp-admin/\n"
        "Content-Usage: /blog/ ai-use=n\n"
    )
    assert not allows(rules, "/wp-admin/x")
    assert allows(rules, "/blog/post")
    assert _usage(rules, "/page") == _expect(search=True, ai_train=False, ai_train_images=False)
    assert _usage(rules, "/blog/post") == _expect(
        search=True, ai_train=False, ai_train_images=False, ai_use=False, ai_input=False
    )


# --------------------------------------------------------------------------------------------
# Which Content-Usage rules apply to a path
# --------------------------------------------------------------------------------------------


def test_rule_without_path_counts_as_root() -> None:
    """A Content-Usage rule without a path counts as "/": a longer matching path beats it, and
    an explicit "/" is the same length, so both apply, combined most restrictively."""
    rules = parse(
        "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: / search=y\n"
        "Content-Usage: /open train-ai=y\n"
    )
    assert _usage(rules, "/page") == _expect(search=True, ai_train=False, ai_train_images=False)
    assert _usage(rules, "/open/page") == TRAIN_YES


def test_longest_path_wins() -> None:
    """draft-ietf-aipref-attach-05 §3: of the Content-Usage rules whose path matches, the
    longest applies, as for Allow and Disallow; shorter ones say nothing, even about other
    labels."""
    rules = parse(
        "User-agent: *\nContent-Usage: / search=n\nContent-Usage: /a train-ai=n\n"
        "Content-Usage: /a/b train-ai=y\n"
    )
    assert _usage(rules, "/x") == _expect(search=False)
    assert _usage(rules, "/a") == TRAIN_NO
    assert _usage(rules, "/a/c") == TRAIN_NO
    assert _usage(rules, "/a/b/c") == TRAIN_YES


def test_identical_paths_combine_most_restrictively() -> None:
    """draft-ietf-aipref-attach-05 §3: rules with the same path are combined as the
    vocabulary combines statements (draft-ietf-aipref-vocab-08 §5.1)."""
    rules = parse(
        "User-agent: *\nContent-Usage: /a train-ai=y, search=y\nContent-Usage: /a train-ai=n\n"
    )
    assert _usage(rules, "/a/1") == _expect(search=True, ai_train=False, ai_train_images=False)
    refusal = rules.usage(BASE + "/a/1", UA).refusal("ai_train")
    assert refusal is not None
    assert refusal.source == "robots.txt line 3: Content-Usage: /a train-ai=n"


def test_equal_length_matching_paths_all_apply() -> None:
    """Matching Content-Usage paths of equal length all apply, combined most restrictively,
    whatever their order: ``/x*`` and ``/xy`` both match /xyz."""
    for lines in (
        "Content-Usage: /x* train-ai=y\nContent-Usage: /xy train-ai=n\n",
        "Content-Usage: /xy train-ai=n\nContent-Usage: /x* train-ai=y\n",
    ):
        rules = parse("User-agent: *\n" + lines)
        assert _usage(rules, "/xyz") == TRAIN_NO
        assert _usage(rules, "/xa") == TRAIN_YES


def test_path_patterns_match_as_allow_and_disallow_do() -> None:
    """draft-ietf-aipref-attach-05 §3: a Content-Usage path is matched as an Allow or Disallow
    path is: ``*`` and an ending ``$``, the query included, percent-encoding canonicalised."""
    rules = parse(
        "User-agent: *\n"
        "Content-Usage: /*.pdf$ search=n\n"
        "Content-Usage: /p?print train-ai=n\n"
        "Content-Usage: /café train-ai=n\n"
    )
    assert _usage(rules, "/docs/a.pdf") == _expect(search=False)
    assert _usage(rules, "/docs/a.pdf?x=1") == _expect()
    assert _usage(rules, "/p?print=1") == TRAIN_NO
    assert _usage(rules, "/p") == _expect()
    assert _usage(rules, "/café/menu") == TRAIN_NO
    assert _usage(rules, "/caf%C3%A9/menu") == TRAIN_NO
    assert _usage(rules, "/cafe/menu") == _expect()


def test_path_ended_by_tab_or_spaces() -> None:
    """draft-ietf-aipref-attach-05 §3: the path ends at the first space or tab; spaces after
    it are not part of the preference."""
    rules = parse("User-agent: *\nContent-Usage: /a\ttrain-ai=n\nContent-Usage: /b    search=n\n")
    assert _usage(rules, "/a1") == TRAIN_NO
    assert _usage(rules, "/b1") == _expect(search=False)
    assert _sources(rules, "/a1") == ["robots.txt line 2: Content-Usage: /a train-ai=n"]


def test_path_without_preference_states_nothing() -> None:
    """A Content-Usage line with a path but no preference (or with nothing at all) is no rule:
    it does not hide a shorter rule's preference."""
    rules = parse(
        "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /a\nContent-Usage: /b/  \n"
        "Content-Usage:\nContent-Signal:\n"
    )
    for path in ("/a/1", "/b/1", "/c"):
        assert _usage(rules, path) == TRAIN_NO
    assert rules.read_usage(BASE + "/a/1", UA).ignored == ()


def test_no_rule_matches() -> None:
    """When no Content-Usage path matches, the file states no preference for the URL."""
    rules = parse("User-agent: *\nContent-Usage: /a train-ai=n\n")
    assert rules.usage(BASE + "/b", UA) == Preferences()


# --------------------------------------------------------------------------------------------
# Content-Signal lines
# --------------------------------------------------------------------------------------------


def test_content_signal_applies_to_whole_group() -> None:
    """A Content-Signal line applies to every path of its group, alongside the Content-Usage
    rules that apply, combined most restrictively; Content-Signal has no path, so a value
    that starts with one is read as an unknown signal."""
    rules = parse(
        "User-agent: *\nContent-Signal: ai-train=no\nContent-Usage: /open train-ai=y, search=y\n"
        "Content-Signal: /x search=no\n"
    )
    assert _usage(rules, "/open/1") == _expect(search=True, ai_train=False, ai_train_images=False)
    assert _usage(rules, "/x") == TRAIN_NO
    ignored = rules.read_usage(BASE + "/x", UA).ignored
    assert ignored == (
        "robots.txt line 4: Content-Signal: /x search=no: unknown signal '/x search'",
    )


def test_several_signal_lines_combine() -> None:
    """Every Content-Signal line of the group applies; a refusal in any of them wins."""
    rules = parse(
        "User-agent: *\nContent-Signal: search=yes, ai-train=yes\n"
        "Content-Signal: ai-train=no, ai-input=yes\n"
    )
    assert _usage(rules, "/") == _expect(
        search=True, ai_train=False, ai_train_images=False, ai_input=True
    )


def test_signal_read_leniently_usage_strictly() -> None:
    """Content-Signal names and values are read whatever their case; Content-Usage labels and
    tokens are case-sensitive, so ``Train-AI=n`` and ``train-ai=N`` state nothing."""
    rules = parse("User-agent: *\nCONTENT-SIGNAL: Search = YES , AI-Train=No,\n")
    assert _usage(rules, "/") == _expect(search=True, ai_train=False, ai_train_images=False)
    for value in ("Train-AI=n", "train-ai=N"):
        reading = parse(f"User-agent: *\nContent-Usage: {value}\n").read_usage(BASE + "/", UA)
        assert reading.preferences.to_dict() == _expect()
        assert len(reading.ignored) == 1
        assert reading.ignored[0].startswith(f"robots.txt line 2: Content-Usage: {value}: ")


# --------------------------------------------------------------------------------------------
# Groups
# --------------------------------------------------------------------------------------------


def test_usage_lines_do_not_end_user_agent_lines() -> None:
    """RFC 9309 §2.1: only a rule ends a group's user-agent lines; a usage line does not, so
    ``a`` and ``b`` share one group, its preference and its rule."""
    rules = parse("User-agent: a\nContent-Signal: ai-train=no\nUser-agent: b\nDisallow: /x\n")
    for agent in ("a", "b"):
        assert _usage(rules, "/", agent) == TRAIN_NO
        assert not allows(rules, "/x", agent)
        assert allows(rules, "/y", agent)
        assert rules.explain(BASE + "/x", agent).agents == ("a", "b")
    assert _usage(rules, "/", "c") == _expect()


def test_usage_only_group_shares_next_agents() -> None:
    """RFC 9309 §2.1 (blank lines do not end a group): a group of usage lines alone is still
    taking user-agent lines, so the next group's agents join it and share its lines."""
    rules = parse(
        "User-agent: a\nContent-Usage: train-ai=n\n\nUser-agent: b\nContent-Usage: train-ai=y\n"
    )
    for agent in ("a", "b"):
        assert _usage(rules, "/", agent) == TRAIN_NO


def test_user_agent_after_a_rule_starts_a_new_group() -> None:
    """RFC 9309 §2.1: a user-agent line after an allow or disallow line starts a new group, and
    usage lines after it belong to that group."""
    rules = parse(
        "User-agent: a\nDisallow: /x\nContent-Usage: train-ai=n\n"
        "User-agent: b\nContent-Usage: train-ai=y\n"
    )
    assert _usage(rules, "/", "a") == TRAIN_NO
    assert _usage(rules, "/", "b") == TRAIN_YES


def test_lines_before_any_user_agent_are_ignored() -> None:
    """RFC 9309 §2.2.2: lines outside any group mean nothing; usage lines there neither."""
    rules = parse(
        "Content-Signal: ai-train=no\nContent-Usage: search=n\n"
        "User-agent: *\nContent-Usage: ai-use=y\n"
    )
    assert _usage(rules, "/") == _expect(ai_use=True, ai_input=True)
    no_group = parse("Content-Signal: ai-train=no\nContent-Usage: train-ai=n\n")
    assert no_group.read_usage(BASE + "/", UA) == (Preferences(), ())


def test_own_group_gets_none_of_stars_lines() -> None:
    """RFC 9309 §2.2.1: a crawler with a group of its own follows only that group: none of the
    ``*`` group's usage lines, even when its own has none."""
    rules = parse(
        "User-agent: *\nContent-Signal: ai-train=no\nContent-Usage: search=n\nAllow: /\n\n"
        "User-agent: mybot\nDisallow: /private\n"
    )
    assert _usage(rules, "/") == _expect()
    assert _usage(rules, "/", "otherbot") == _expect(
        search=False, ai_train=False, ai_train_images=False
    )


def test_same_agent_groups_merge_usage_lines() -> None:
    """RFC 9309 §2.2.1: groups naming the same agent are merged, usage lines included."""
    rules = parse(
        "User-agent: mybot\nContent-Usage: train-ai=n\nDisallow: /a\n\n"
        "User-agent: *\nContent-Usage: search=n\nAllow: /\n\n"
        "User-agent: MyBot\nContent-Signal: search=yes\nContent-Usage: /b ai-use=n\n"
    )
    assert _usage(rules, "/") == _expect(search=True, ai_train=False, ai_train_images=False)
    assert _usage(rules, "/b") == _expect(
        search=True, ai_use=False, ai_input=False
    )  # /b beats the path-less rule of the first group
    assert _usage(rules, "/", "otherbot") == _expect(search=False)


def test_group_for_no_crawler() -> None:
    """A group whose user-agent names no product token (``*WordPress*``) applies to no
    crawler, its usage lines neither."""
    rules = parse("User-agent: *WordPress*\nContent-Signal: ai-train=no\n")
    assert _usage(rules, "/") == _expect()


def test_comments_and_field_case() -> None:
    """RFC 9309 §2.2: a comment is not part of the value; field names are case-insensitive,
    and sources spell them ``Content-Usage`` / ``Content-Signal``; a forgotten colon is read as
    Googlebot reads it."""
    rules = parse(
        "user-agent: *\ncontent-usage: train-ai=n # no training, please\n"
        "CONTENT-SIGNAL: search=yes\ncontent-usage /x\n"
    )
    assert _usage(rules, "/") == _expect(search=True, ai_train=False, ai_train_images=False)
    assert _sources(rules, "/") == [  # in file order
        "robots.txt line 2: Content-Usage: train-ai=n",
        "robots.txt line 3: Content-Signal: search=yes",
    ]


def test_statement_source_names_line() -> None:
    """Each statement names the robots.txt line it was read from, as written."""
    rules = parse(ATTACH_FIGURE_2)
    assert rules.usage(BASE + "/test", UA).statements == (
        Statement("ai_train", False, "robots.txt line 4: Content-Usage: train-ai=n"),
        Statement("ai_train_images", False, "robots.txt line 4: Content-Usage: train-ai=n"),
    )
    assert rules.usage(BASE + "/ai-ok/x", UA).refusal("ai_train") is None


def test_non_utf8_value_is_readable_and_states_nothing() -> None:
    """A value that is not UTF-8 is shown readable in notes, and states no preference."""
    rules = RobotsTxt.parse(b"User-agent: *\nContent-Signal: ai-train=no\xff\n")
    reading = rules.read_usage(BASE + "/", UA)
    assert reading.preferences.to_dict() == _expect()
    assert reading.ignored == (
        "robots.txt line 2: Content-Signal: ai-train=no\ufffd: ai-train: expected yes or no",
    )


# --------------------------------------------------------------------------------------------
# Pickling and access rules
# --------------------------------------------------------------------------------------------


def test_pickle_keeps_usage_lines() -> None:
    """Parsed rules read back from a pickle (the cache's second tier) state the same
    preferences, before and after a check compiled the group."""
    paths = ("/test", "/never/test", "/ai-ok/test")
    for checked in (False, True):
        rules = parse(ATTACH_FIGURE_2 + "\nUser-agent: cfbot\nContent-Signal: search=yes\n")
        if checked:
            for path in paths:
                allows(rules, path)
        copy = pickle.loads(pickle.dumps(rules))
        for agent in (UA, "ExampleBot", "cfbot"):
            for path in paths:
                assert copy.read_usage(BASE + path, agent) == rules.read_usage(BASE + path, agent)
                assert allows(copy, path, agent) == allows(rules, path, agent)


_ACCESS_FILES = [
    ATTACH_FIGURE_2,
    CLOUDFLARE,
    "User-agent: a\nUser-agent: b\nDisallow: /x\nAllow: /x/y\n\n"
    "User-agent: *\nDisallow: /\nAllow: /$\n\nUser-agent: c\nCrawl-delay: 5\nDisallow: /*.pdf\n",
    "Sitemap: https://example.com/s.xml\nUser-agent: a\n\nUser-agent: b\nDisallow: /b\n"
    "User-agent: *\nDisallow: /star\n",
]
_USAGE_LINES = [
    "Content-Usage: train-ai=n",
    "Content-Signal: search=yes, ai-train=no",
    "Content-Usage: /x train-ai=y",
    "content-usage /x",
]
_AGENTS = ("a", "b", "c", "mybot", "ExampleBot", "Amazonbot")
_PATHS = (
    "/",
    "/x",
    "/x/y",
    "/x/z",
    "/b",
    "/star",
    "/never/1",
    "/ai-ok/1",
    "/d.pdf",
    "/robots.txt",
)


def _access(rules: RobotsTxt) -> list[tuple[bool, float | None]]:
    return [
        (allows(rules, path, agent), rules.crawl_delay(agent))
        for agent in _AGENTS
        for path in _PATHS
    ]


@pytest.mark.parametrize("text", _ACCESS_FILES)
@pytest.mark.parametrize("line", _USAGE_LINES)
def test_usage_lines_never_change_access(text: str, line: str) -> None:
    """A usage line, wherever it is written, changes no verdict of allowed() and no crawl
    delay: it is a preference about use, not a rule of access."""
    plain = [each for each in text.splitlines() if not each.lower().startswith("content-")]
    expected = _access(parse("\n".join(plain) + "\n"))
    assert _access(parse(text)) == expected
    for position in range(len(plain) + 1):
        lines = [*plain[:position], line, *plain[position:]]
        assert _access(parse("\n".join(lines) + "\n")) == expected, position


# --------------------------------------------------------------------------------------------
# Never raises
# --------------------------------------------------------------------------------------------


@given(st.binary(max_size=400))
def test_read_usage_never_raises_on_any_bytes(body: bytes) -> None:
    """Any bytes parse, and reading the usage preferences of any URL never raises."""
    rules = RobotsTxt.parse(body)
    reading = rules.read_usage(BASE + "/a/b?c", "bot")
    assert all(s.use in USES for s in reading.preferences.statements)


_LINE = st.tuples(
    st.sampled_from(
        ["User-agent", "Allow", "Disallow", "Content-Usage", "Content-Signal", "content-usage"]
    ),
    st.text(alphabet=st.sampled_from(list('/*$?ab=,;yn \t"()-AI%é:#')), max_size=20),
).map(lambda kv: f"{kv[0]}: {kv[1]}")


@given(st.lists(_LINE, max_size=12), st.text(alphabet="/ab*$?%.", max_size=10))
def test_read_usage_never_raises_on_any_lines(lines: list[str], path: str) -> None:
    """Files made of user-agent, access and usage lines with any values: reading the usage of
    any path never raises, and agrees with itself after a pickle."""
    rules = RobotsTxt.parse("\n".join(lines))
    url = BASE + "/" + path
    for agent in ("bot", "ab", "*"):
        reading = rules.read_usage(url, agent)
        assert reading.preferences == rules.usage(url, agent)
        assert pickle.loads(pickle.dumps(rules)).read_usage(url, agent) == reading


_PATTERN = st.text(alphabet=st.sampled_from(list("/ab*$?%2Fé~.")), max_size=8).map(
    lambda text: "/" + text
)


@given(_PATTERN, st.text(alphabet=st.sampled_from(list("/ab?%2Fé~.")), max_size=10))
def test_usage_path_matches_as_disallow_does(pattern: str, path: str) -> None:
    """draft-ietf-aipref-attach-05 §3: a Content-Usage path matches the URLs a Disallow line
    with the same path matches, no more and no fewer."""
    url = BASE + "/" + path
    if url.endswith("/robots.txt"):
        return
    usage = parse(f"User-agent: *\nContent-Usage: {pattern} train-ai=n\n").usage(url, UA)
    disallowed = not parse(f"User-agent: *\nDisallow: {pattern}\n").allowed(url, UA)
    assert (usage.allows("ai_train") is False) is disallowed


def test_source_of_a_very_long_line_is_cut() -> None:
    """A usage line can be as long as Googlebot reads a line (16 KiB): its source, shown in
    logs and reports, quotes its start."""
    rules = parse("User-agent: *\nContent-Signal: ai-train=no" + ", x=y" * 3000 + "\n")
    [source] = _sources(rules, "/")
    assert source.startswith("robots.txt line 2: Content-Signal: ai-train=no, x=y")
    assert source.endswith("…")
    assert len(source) < 300
    assert _usage(rules, "/") == _expect(ai_train=False, ai_train_images=False)
