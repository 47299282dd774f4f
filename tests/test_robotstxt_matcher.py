"""Which rule of a group decides (``robotstxt/_matcher.py``): precedence and patterns.

Sources: RFC 9309 sections 2.2.2-2.2.3 and 5, and Google's "How Google interprets the robots.txt
specification" (cited below as "Google spec"), including where Google reads more than RFC 9309
says (``Allow: /dir/index.html``). Hostile files (thousands of wildcards, 100,000 rules, 50 MB)
check that every verdict is still right; how fast they are checked is measured by
``benchmarks/matcher.py``, not here.
"""

from __future__ import annotations

import pickle
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_robotsmeta import RobotsTxt, Rule
from scrapy_robotsmeta.robotstxt import MAX_BYTES
from tests.rules import (
    BASE,
    NEAR_MISS_PATH,
    NEAR_MISSES,
    UA,
    allows,
    deciding,
    disallowing,
    parse,
)

# --------------------------------------------------------------------------------------------
# Precedence
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


# Rule paths and URL paths from a small alphabet of characters that are canonical as they are,
# so that matches are frequent and an independent oracle needs no percent-encoding.
_PATH_TEXT = st.text(alphabet="ab/?=.", max_size=8)


_RULE = st.tuples(
    st.booleans(),
    st.builds(
        lambda body, anchored: "/" + body + ("$" if anchored else ""),
        st.text(alphabet="ab/?=.*", max_size=8),
        st.booleans(),
    ),
)


def _oracle(rules: list[tuple[bool, str]], path: str) -> bool:
    """RFC 9309 §2.2.2 read literally: the longest matching rule wins, allow on a tie."""
    best: tuple[int, bool] | None = None
    for allow, rule in rules:
        anchored = rule.endswith("$")
        body = rule[:-1] if anchored else rule
        regex = ".*".join(map(re.escape, body.split("*"))) + ("$" if anchored else "")
        if re.match(regex, path, re.DOTALL) and (best is None or (len(rule), allow) > best):
            best = (len(rule), allow)
    return best is None or best[1]


@settings(max_examples=150, deadline=None)
@given(rules=st.lists(_RULE, max_size=80), paths=st.lists(_PATH_TEXT, min_size=1, max_size=10))
def test_verdicts_match_a_literal_reading_of_the_rfc(
    rules: list[tuple[bool, str]], paths: list[str]
) -> None:
    """Small groups are scanned and groups of 32 rules or more are indexed: both give the
    verdict of the longest match."""
    lines = [f"{'Allow' if allow else 'Disallow'}: {path}" for allow, path in rules]
    parsed = RobotsTxt.parse("\n".join(["User-agent: *", *lines]).encode())
    for path in paths:
        url = "https://example.com/" + path
        assert parsed.allowed(url, "bot") is _oracle(rules, "/" + path), (path, lines)


# --------------------------------------------------------------------------------------------
# Patterns: start, case, wildcards, anchors, query
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Allow: /dir/index.html (Google spec)
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
# Hostile robots.txt files
# --------------------------------------------------------------------------------------------


HEAD = b"User-agent: *\nDisallow: /private\n"


HOSTILE = {
    "5000-stars": HEAD + b"Disallow: /" + b"*a" * 5000 + b"b\n",
    "5000-stars-anchored": HEAD + b"Disallow: /" + b"*a" * 5000 + b"$\n",
    "100000-wildcard-rules": HEAD + b"".join(b"Disallow: /*b%d\n" % i for i in range(100_000)),
    "100000-rules-one-prefix": HEAD + b"".join(b"Disallow: /aaaa%d\n" % i for i in range(100_000)),
    "50-MB": HEAD + b"Disallow: /x\n" * (50_000_000 // 13),
    "nul-bytes": HEAD + b"Disallow: /\x00a\x00\nAllow: /\x00\n" + b"\x00" * 100_000,
    "invalid-utf-8": HEAD + b"Disallow: /\xff\xfe\xc3(\n\xed\xa0\x80: \xf8\x88\x80\x80\x80\n",
    "one-1-MB-line": b"User-agent: *\nDisallow: /" + b"a" * 1_000_000,
}


URLS = [
    "https://example.com/" + "a" * 8000,
    "https://example.com/" + "ab/*$?%00&%FF" * 600,
    "https://example.com/private/page",
    "https://example.com/aaaa5/x",
]


@pytest.fixture(scope="module")
def hostile_rules() -> dict[str, RobotsTxt]:
    """Each hostile file, parsed and with its group compiled (the first check compiles it)."""
    parsed = {name: RobotsTxt.parse(body) for name, body in HOSTILE.items()}
    for rules in parsed.values():
        rules.allowed(URLS[0], "bot")
    return parsed


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_file_verdicts(name: str, hostile_rules: dict[str, RobotsTxt]) -> None:
    rules = hostile_rules[name]
    assert rules.truncated is (len(HOSTILE[name]) > MAX_BYTES)
    assert all(isinstance(rules.allowed(url, "bot"), bool) for url in URLS)
    if name != "one-1-MB-line":
        assert not rules.allowed("https://example.com/private/page", "bot")
    assert rules.allowed("https://example.com/robots.txt", "bot")


def test_nul_and_invalid_utf_8_rules_match_their_bytes(
    hostile_rules: dict[str, RobotsTxt],
) -> None:
    """Bytes are matched as the bytes they are, percent-encoded (RFC 9309 §2.2.2)."""
    assert not hostile_rules["nul-bytes"].allowed("https://example.com/%00a%00b", "bot")
    assert hostile_rules["nul-bytes"].allowed("https://example.com/%00b", "bot")
    assert not hostile_rules["invalid-utf-8"].allowed("https://example.com/%FF%FE%C3(x", "bot")


def test_only_the_first_500_kib_is_parsed() -> None:
    rules = RobotsTxt.parse(HOSTILE["100000-wildcard-rules"] + b"Disallow: /late\n")
    assert rules.truncated
    assert not rules.allowed("https://example.com/private", "bot")
    assert rules.allowed("https://example.com/late", "bot")


# --------------------------------------------------------------------------------------------
# The index and the bound on one check's work
# --------------------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(
    rules=st.lists(_RULE, min_size=32, max_size=120),
    paths=st.lists(_PATH_TEXT, min_size=1, max_size=10),
)
def test_indexed_group_verdicts_match_a_literal_reading_of_the_rfc(
    rules: list[tuple[bool, str]], paths: list[str]
) -> None:
    """RFC 9309 §2.2.2: a group indexed by prefix, by last piece and by runs of its pieces,
    its crowded prefixes looked up whole, gives the verdict of the longest match."""
    lines = [f"{'Allow' if allow else 'Disallow'}: {path}" for allow, path in rules]
    parsed = RobotsTxt.parse("\n".join(["User-agent: *", *lines]).encode())
    for path in paths:
        assert parsed.allowed(BASE + "/" + path, "bot") is _oracle(rules, "/" + path), path


@settings(max_examples=200, deadline=None)
@given(
    rules=st.lists(
        st.tuples(st.booleans(), st.text(alphabet="ab/", max_size=7), st.booleans()),
        min_size=17,
        max_size=60,
    ),
    paths=st.lists(st.text(alphabet="ab/", max_size=9), min_size=1, max_size=10),
)
def test_crowded_prefixes_give_the_longest_match(
    rules: list[tuple[bool, str, bool]], paths: list[str]
) -> None:
    """RFC 9309 §2.2.2: rules that crowd one start (prefixes of one another, or alike but for
    a character, some ending with ``$``, which share a prefix) are looked up by their whole
    prefix, and the longest of those the path starts with decides."""
    written = [
        (allow, "/aaa" + body + ("$" if anchored else "")) for allow, body, anchored in rules
    ]
    lines = [f"{'Allow' if allow else 'Disallow'}: {path}" for allow, path in written]
    parsed = RobotsTxt.parse("\n".join(["User-agent: *", *lines]).encode())
    for path in paths:
        assert parsed.allowed(BASE + "/aaa" + path, "bot") is _oracle(written, "/aaa" + path)


# Pieces of rule paths and URL paths that make the scan's cases: operators, escapes of
# unreserved and reserved characters, text outside ASCII, index pages, repeats.
_PIECES = ["a", "b", "/", "?", "=", ".", "*", "$", "%41", "%2f", "%2F", "~", "%7e", "é", "%2A"]
_SCAN_PATH = st.lists(st.sampled_from([*_PIECES, "index.html"]), max_size=6).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    rules=st.lists(st.tuples(st.booleans(), _SCAN_PATH), max_size=40),
    paths=st.lists(_SCAN_PATH, min_size=1, max_size=8),
)
def test_first_checks_answer_as_the_compiled_group(
    rules: list[tuple[bool, str]], paths: list[str]
) -> None:
    """RFC 9309 §2.2.2: a group's first checks, which scan its rules as parsed, give the
    verdict and the deciding rule (what ``scrapy robots`` explains) of the compiled group."""
    lines = [f"{'Allow' if allow else 'Disallow'}: /{path}" for allow, path in rules]
    body = "\n".join(["User-agent: *", *lines]).encode()
    for path in paths:
        url = f"{BASE}/{path}"
        scanned, compiled = RobotsTxt.parse(body), RobotsTxt.parse(body)
        group = compiled._checked(UA)
        assert group is not None
        group.compile()
        assert scanned.explain(url, UA) == compiled.explain(url, UA), (path, lines)
        assert scanned.allowed(url, UA) is compiled.allowed(url, UA)
        # Scanned indeed, but where an index page's allow adds a pattern.
        scanned_group = scanned._group(UA)
        assert scanned_group is not None
        index_page = any(allow and "/index.htm" in f"/{p}" for allow, p in rules)
        assert scanned_group.compiled is index_page


@pytest.mark.parametrize("count", [31, 1000])
@pytest.mark.parametrize(
    "path", [NEAR_MISS_PATH, "/" + "a" * 41 + "baa", "/" + "a" * 41 + "bbb", "/" + "a" * 8000]
)
def test_first_checks_past_the_work_bound_answer_as_the_compiled_group(
    count: int, path: str
) -> None:
    """Rules alike against a long URL: the first check, which would scan them, answers what
    the compiled group does, undecided where it is (within the work bound otherwise)."""
    body = "\n".join(NEAR_MISSES.splitlines()[: count + 1]).encode()
    scanned, compiled = RobotsTxt.parse(body), RobotsTxt.parse(body)
    group = compiled._checked(UA)
    assert group is not None
    group.compile()
    assert scanned.explain(BASE + path, UA) == compiled.explain(BASE + path, UA)


def test_longest_match_wins_among_rules_sharing_a_prefix() -> None:
    """RFC 9309 §2.2.2: 40 rules with one prefix (looked up whole) and wildcard rules alike
    decide as the longest match, allow winning a tie, whatever their number."""
    lines = [f"Disallow: /aaaa{i}\n" for i in range(40)]
    lines += [f"Allow: /aaaa{i}x\n" for i in range(0, 40, 2)]
    lines += [f"Disallow: /*a{i}yz$\n" for i in range(40)]
    lines += ["Allow: /*a7yz$\n"]
    rules = parse("User-agent: *\n" + "".join(lines))
    assert not allows(rules, "/aaaa39")
    assert allows(rules, "/aaaa38x")
    assert not allows(rules, "/aaaa37x")
    assert allows(rules, "/aaaa")
    assert not allows(rules, "/q/a12yz")
    assert allows(rules, "/q/a12yzz")
    assert deciding(rules, "/q/a7yz") == Rule(True, "/*a7yz$", 102)


def test_repeated_rule_decides_by_its_first_line() -> None:
    """RFC 9309 §2.2.2: of rules with one path, allow wins, else the first written explains
    the verdict; the repeats change nothing."""
    rules = parse("User-agent: *\n" + "Disallow: /*x*y\n" * 50 + "Allow: /*x*y\n")
    assert allows(rules, "/axby")
    assert deciding(rules, "/axby") == Rule(True, "/*x*y", 52)
    rules = parse("User-agent: *\n" + "Disallow: /*x*y\n" * 50)
    assert deciding(rules, "/axby") == Rule(False, "/*x*y", 2)


def test_check_past_the_work_bound_is_undecided_and_disallowed() -> None:
    """A check that would compare more characters than one check may (a hostile file) is
    answered as disallowed with no deciding rule, and says so."""
    rules = parse(NEAR_MISSES)
    verdict = rules.explain(BASE + NEAR_MISS_PATH, "bot")
    assert verdict.undecided
    assert not verdict.allowed
    assert verdict.rule is None
    assert str(verdict) == "disallowed: too many rules to try to decide (group *)"
    assert not rules.allowed(BASE + NEAR_MISS_PATH, "bot")
    # The same rules decide a short path: the bound is on work, not on the file.
    assert allows(rules, "/" + "a" * 41 + "bbb")
    assert not allows(rules, "/" + "a" * 41 + "baa")


def test_work_bound_answer_survives_the_record() -> None:
    """The compiled index and its answer past the bound are the same read back."""
    rules = parse(NEAR_MISSES)
    rules.allowed(BASE + "/", "bot")
    again = pickle.loads(pickle.dumps(rules))
    assert again.explain(BASE + NEAR_MISS_PATH, "bot").undecided
    assert not allows(again, "/" + "a" * 41 + "baa")
