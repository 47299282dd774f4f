"""Reading a response: X-Robots-Tag headers, robots metas as HTML parsers see them, rel links."""

from __future__ import annotations

from urllib.parse import urljoin

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scrapy.http import HtmlResponse, Response, TextResponse, XmlResponse
from scrapy.selector import Selector

from scrapy_robotsmeta.robotsmeta.page import (
    NofollowTargets,
    canonical_url,
    header_values,
    is_html,
    meta_contents,
    named_metas,
    rel_nofollow_urls,
    robots_meta_names,
    tdmrep_values,
)

TOKEN = "testbot"
URL = "http://example.com/dir/page.html"


def page(
    body: str,
    content_type: str | None = "text/html; charset=utf-8",
    headers: dict[str, str | list[str]] | None = None,
    cls: type[TextResponse] = HtmlResponse,
) -> TextResponse:
    all_headers: dict[str, str | list[str]] = dict(headers or {})
    if content_type is not None:
        all_headers["Content-Type"] = content_type
    return cls(URL, body=body.encode(), headers=all_headers)


def in_body(fragment: str) -> TextResponse:
    return page(
        f"<!DOCTYPE html><html><head><title>t</title></head><body>{fragment}</body></html>"
    )


ROBOTS_META = '<meta name="robots" content="noindex">'


# Headers: MDN, "X-Robots-Tag" on any response.


def test_every_x_robots_tag_header_is_read_whatever_the_name_case() -> None:
    response = page("", headers={"x-robots-tag": ["noindex", "otherbot: nofollow"]})
    assert header_values(response) == ["noindex", "otherbot: nofollow"]


def test_header_is_read_on_non_html_responses() -> None:
    response = Response(URL, body=b"%PDF-1.7", headers={"X-Robots-Tag": "noarchive"})
    assert header_values(response) == ["noarchive"]
    assert meta_contents(response, TOKEN) == []


def test_header_bytes_outside_ascii_never_fail() -> None:
    response = Response(URL, headers={"X-Robots-Tag": b"noindex, \xff\xfe: x"})
    assert header_values(response) == ["noindex, \xff\xfe: x"]


# Which bodies are HTML.


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("text/html", True),
        ("TEXT/HTML; charset=utf-8", True),
        ("application/xhtml+xml", True),
        ("text/plain", False),
        ("application/json", False),
        ("application/xml", False),
    ],
)
def test_html_by_content_type(content_type: str, expected: bool) -> None:
    response = page(ROBOTS_META, content_type=content_type, cls=TextResponse)
    assert is_html(response) is expected
    assert meta_contents(response, TOKEN) == (["noindex"] if expected else [])


def test_html_by_scrapy_guess_without_content_type() -> None:
    assert is_html(page(ROBOTS_META, content_type=None))
    assert not is_html(page(ROBOTS_META, content_type=None, cls=TextResponse))
    assert not is_html(page(ROBOTS_META, content_type=None, cls=XmlResponse))


# Metas: Google spec, name "robots" or the crawler's token, case-insensitive, anywhere.


def test_meta_robots_in_head() -> None:
    response = page(f"<html><head>{ROBOTS_META}</head><body></body></html>")
    assert meta_contents(response, TOKEN) == ["noindex"]


def test_meta_robots_in_body() -> None:
    assert meta_contents(in_body(f"<div><p>{ROBOTS_META}</p></div>"), TOKEN) == ["noindex"]


def test_meta_without_html_or_head_tags() -> None:
    assert meta_contents(page(ROBOTS_META), TOKEN) == ["noindex"]


def test_meta_name_is_case_insensitive_and_trimmed() -> None:
    response = in_body('<META NAME=" RoBoTs\n" CONTENT="NoFollow"><meta name="TESTBOT" content=a>')
    assert meta_contents(response, TOKEN) == ["NoFollow", "a"]


def test_meta_named_for_our_token_only() -> None:
    response = in_body(
        '<meta name="googlebot" content="a"><meta name="testbot-news" content="b">'
        '<meta name="testbot" content="c">'
    )
    assert meta_contents(response, TOKEN) == ["c"]
    assert meta_contents(response, "googlebot") == ["a"]


def test_every_matching_meta_in_document_order() -> None:
    response = page(
        "<html><head><meta name=robots content=one><meta name=testbot content=two></head>"
        "<body><meta name=robots content=three></body></html>"
    )
    assert meta_contents(response, TOKEN) == ["one", "two", "three"]


def test_meta_without_content_or_name_is_skipped() -> None:
    response = in_body('<meta name="robots"><meta content="noindex"><meta name=robots content>')
    assert meta_contents(response, TOKEN) == [""]


def test_meta_content_entities_are_decoded() -> None:
    response = in_body('<meta name="robots" content="noindex&#44;&nbsp;nofollow&comma;none">')
    assert meta_contents(response, TOKEN) == ["noindex,\xa0nofollow,none"]


@pytest.mark.parametrize(
    "name", ["&#114;obots", "&#x52;OBOTS", "test&lowbar;bot", "test&UnderBar;bot"]
)
def test_meta_name_written_with_character_references(name: str) -> None:
    """The fast path must not skip a name that only its character references spell out."""
    response = in_body(f'<meta name="{name}" content="x">')
    assert meta_contents(response, "test_bot" if "bot" in name else TOKEN) == ["x"]


# Contexts that hold text, not elements: HTML Living Standard, tree construction.


@pytest.mark.parametrize(
    "fragment",
    [
        f"<!-- {ROBOTS_META} -->",
        f"<!--{ROBOTS_META}",
        f"<script>document.write('{ROBOTS_META}')</script>",
        f"<style>{ROBOTS_META}</style>",
        f"<textarea>{ROBOTS_META}</textarea>",
        f"<title>{ROBOTS_META}</title>",
        f"<template>{ROBOTS_META}</template>",
        f"<template><div><template>{ROBOTS_META}</template></div></template>",
        f"<xmp>{ROBOTS_META}</xmp>",
        f"<![CDATA[ {ROBOTS_META} ]]>",
        "<p>&lt;meta name=robots content=noindex&gt;</p>",
    ],
)
def test_meta_inside_text_is_not_an_element(fragment: str) -> None:
    assert meta_contents(in_body(fragment), TOKEN) == []
    head = page(f"<html><head>{fragment}</head><body></body></html>")
    assert meta_contents(head, TOKEN) == []


def test_meta_in_noscript_counts() -> None:
    """A crawler that runs no script parses noscript content as elements."""
    assert meta_contents(
        page(f"<html><head><noscript>{ROBOTS_META}</noscript></head>"), TOKEN
    ) == ["noindex"]
    assert meta_contents(in_body(f"<noscript><div>{ROBOTS_META}</div></noscript>"), TOKEN) == [
        "noindex"
    ]


def test_xhtml_document() -> None:
    body = (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" '
        '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">\n'
        '<html xmlns="http://www.w3.org/1999/xhtml"><head>'
        '<meta name="robots" content="noindex" /><title>t</title></head>'
        '<body><p><meta name="testbot" content="nofollow"/></p></body></html>'
    )
    response = page(body, content_type="application/xhtml+xml")
    assert meta_contents(response, TOKEN) == ["noindex", "nofollow"]


def test_non_utf8_page() -> None:
    body = '<html><head><meta charset="windows-1252"><meta name=robots content="noindex">'
    response = HtmlResponse(URL, body=(body + "caf\xe9").encode("cp1252"))
    assert meta_contents(response, TOKEN) == ["noindex"]


def test_utf16_page() -> None:
    body = f"<html><head>{ROBOTS_META}</head></html>"
    response = HtmlResponse(
        URL, body=body.encode("utf-16"), headers={"Content-Type": "text/html; charset=utf-16"}
    )
    assert meta_contents(response, TOKEN) == ["noindex"]


# Cost: parse at most once, reuse the callback's selector, skip pages that cannot match.


@pytest.mark.parametrize(
    "body",
    [
        "<html><head><title>robots</title></head><body>no meta element at all</body></html>",
        "<html><head><title>robots, before any meta</title><meta charset=utf-8>"
        '<meta name="description" content="x &amp; y"></head><body>text</body></html>',
        "",
    ],
)
def test_page_that_cannot_hold_a_matching_meta_is_not_parsed(body: str) -> None:
    response = page(body)
    assert meta_contents(response, TOKEN) == []
    assert response._cached_selector is None


@pytest.mark.parametrize("encoding", ["utf-8", "cp1252", "utf-16", "shift_jis"])
def test_text_check_in_any_encoding(encoding: str) -> None:
    """The check reads the body's bytes when ASCII is the same bytes there (UTF-8, cp1252),
    else the text encoded as UTF-8 (UTF-16, Shift_JIS)."""
    headers = {"Content-Type": f"text/html; charset={encoding}"}
    text = "<html><head><meta charset=x><title>\u00b1 1</title>{}</head></html>"
    plain = HtmlResponse(URL, body=text.format("").encode(encoding), headers=headers)
    assert meta_contents(plain, TOKEN) == []
    assert plain._cached_selector is None
    robots = HtmlResponse(URL, body=text.format(ROBOTS_META).encode(encoding), headers=headers)
    assert meta_contents(robots, TOKEN) == ["noindex"]


def test_page_that_may_hold_a_matching_meta_is_parsed_once_and_the_selector_kept() -> None:
    response = in_body(ROBOTS_META)
    assert meta_contents(response, TOKEN) == ["noindex"]
    selector = response._cached_selector
    assert selector is not None
    assert meta_contents(response, TOKEN) == ["noindex"]
    assert response.selector is selector


def test_selector_built_by_the_callback_is_reused() -> None:
    response = in_body(ROBOTS_META)
    # Stand in a selector with other content: what is read shows which tree was used.
    response._cached_selector = Selector(text='<meta name="robots" content="from-the-cache">')
    assert meta_contents(response, TOKEN) == ["from-the-cache"]


def test_selector_built_by_the_callback_is_searched_without_the_text_check() -> None:
    response = in_body("<p>nothing here</p>")
    response._cached_selector = Selector(text='<meta name="robots" content="from-the-cache">')
    assert meta_contents(response, TOKEN) == ["from-the-cache"]


# Markup before a long page's rest, in pieces that change what the parser is in the middle of.
_HEAD_MARKUP = st.lists(
    st.sampled_from(
        [
            "<meta",
            ' name="robots"',
            " name=TestBot",
            " content=",
            '"noindex"',
            "'a>b'",
            "'<meta a>'",
            ">",
            "/>",
            "\n",
            "\r",
            "\r\n",
            "<title>",
            "</title>",
            "<script>",
            "</script>",
            "<!--",
            "-->",
            "<template>",
            "</template>",
            "<textarea>",
            "<head>",
            "<body>",
            "<p>",
            "robots",
        ]
    )
    | st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=3),
    max_size=40,
).map("".join)


@given(start=st.sampled_from(["<!DOCTYPE html>", "<html>", "", " "]), head=_HEAD_MARKUP)
def test_long_page_read_from_its_start_as_from_the_whole_page(start: str, head: str) -> None:
    """A long page whose possible metas come early is parsed only that far: what it reads
    there is what the whole page's selector holds."""
    body = start + head + "<p>text</p>\n" * 1000
    partial = page(body)
    whole = page(body)
    whole.selector  # noqa: B018 (built as a callback builds it)
    assert meta_contents(partial, TOKEN) == meta_contents(whole, TOKEN)


def test_long_page_with_its_meta_early_is_parsed_that_far_only() -> None:
    response = page(
        '<html><head><meta name="robots" content="noindex"></head>' + "<p>x</p>" * 2000
    )
    assert meta_contents(response, TOKEN) == ["noindex"]
    assert response._cached_selector is None


def test_long_page_read_as_far_as_a_meta_whose_value_holds_a_meta_tag() -> None:
    """HTML's attribute value (double-quoted) state keeps "<" and ">" as characters: the last
    ``<meta`` of the bytes may sit inside an earlier meta's value, whose name comes later."""
    body = '<html><head><meta content="<meta x>" name="robots">\n</head>' + "<p>x</p>\n" * 2000
    response = page(body)
    assert meta_contents(response, TOKEN) == ["<meta x>"]
    assert response._cached_selector is None


def test_long_page_naming_the_robot_only_in_its_text_is_parsed_to_its_last_meta() -> None:
    response = page(
        '<html><head><meta name="description" content="d"></head>'
        + "<p>robots</p>\n" * 2000
        + '<meta name="robots" content="noindex">'
    )
    assert meta_contents(response, TOKEN) == ["noindex"]


# rel=nofollow links: HTML Living Standard, link type "nofollow" on <a> and <area>.


def links(fragment: str, head: str = "") -> frozenset[str]:
    return rel_nofollow_urls(page(f"<html><head>{head}</head><body>{fragment}</body></html>"))


def test_rel_nofollow_on_a_and_area_resolved_against_the_page() -> None:
    assert links(
        '<a href="/a" rel="nofollow">a</a><map><area href="b" rel="nofollow"></map>'
        '<a href="/c">c</a>'
    ) == {"http://example.com/a", "http://example.com/dir/b"}


def test_rel_nofollow_is_one_token_among_others_case_insensitive() -> None:
    assert links(
        '<a href="/a" rel="external NoFollow">a</a><a href="/b" rel="nofollow-ish">b</a>'
        '<a href="/c" rel="x\u00a0nofollow">c</a>'
    ) == {"http://example.com/a"}


def test_rel_nofollow_resolves_against_base_href() -> None:
    assert links('<a href="x" rel=nofollow>x</a>', head='<base href="http://other.org/d/">') == {
        "http://other.org/d/x"
    }


def test_rel_nofollow_link_rescued_by_a_followed_link_to_the_same_url() -> None:
    assert (
        links('<a href="/a#top" rel="nofollow">a</a><a href="http://example.com/a">a</a>')
        == frozenset()
    )


def test_rel_nofollow_compares_canonical_urls() -> None:
    nofollow = links('<a href=" /q?b=2&amp;a=1#f " rel=nofollow>q</a>')
    assert nofollow == {"http://example.com/q?a=1&b=2"}
    assert canonical_url("http://example.com/q?b=2&a=1") in nofollow


def test_rel_nofollow_ignores_links_in_templates_and_bad_urls() -> None:
    in_template = '<template><a href="/t" rel=nofollow>t</a></template>'
    assert links(in_template + '<a href="http://[::1" rel=nofollow>bad</a>') == frozenset()


def test_rel_nofollow_on_non_html_is_empty() -> None:
    response = page(
        '<a href="/a" rel="nofollow">a</a>', content_type="text/plain", cls=TextResponse
    )
    assert rel_nofollow_urls(response) == frozenset()


def test_rel_nofollow_page_without_the_word_is_not_parsed() -> None:
    response = in_body('<a href="/a" rel="external">a</a>')
    assert rel_nofollow_urls(response) == frozenset()
    assert response._cached_selector is None


def test_rel_nofollow_link_rescued_by_a_followed_link_written_otherwise() -> None:
    """Canonical URLs compare equal whatever the href's spelling: relative, dot segments,
    escapes of unreserved characters, a query in another order."""
    nofollow = '<a href="/dir/a?x=1&amp;y=2" rel=nofollow>a</a>'
    assert links(nofollow + '<a href="./../dir/%61?y=2&amp;x=1">b</a>') == frozenset()
    assert links('<a href="/dir/b" rel=nofollow>a</a><a href="../dir/b#c">b</a>') == frozenset()


def test_rel_nofollow_written_with_character_references_counts() -> None:
    assert links('<a href="/a" rel="&#110;o&#x46;ollow">a</a>') == {"http://example.com/a"}


def test_rel_nofollow_read_from_the_callback_selector() -> None:
    response = in_body("<p>nothing here</p>")
    response._cached_selector = Selector(text='<a href="/s" REL="External NOFOLLOW">s</a>')
    assert rel_nofollow_urls(response) == {"http://example.com/s"}


def test_rel_nofollow_page_with_the_word_elsewhere_only_is_empty() -> None:
    response = in_body('<p>nofollow</p><a href="/a" rel="ugc">a</a>')
    assert rel_nofollow_urls(response) == frozenset()


# What a request's URL or a link's href may be, in pieces: schemes, authorities, dot
# segments, escapes, characters URL parsers drop or read as "/", a query, a fragment.
_URL_PIECES = st.lists(
    st.sampled_from(
        [
            "http:",
            "HTTPS:",
            "mailto:",
            "//",
            "example.com",
            "Example.COM:80",
            "/",
            "a",
            "B~c",
            ".",
            "..",
            "%61",
            "%2e",
            "%2F",
            "é",
            "\\",
            "\t",
            " ",
            ";p",
            "?q=1&b=2",
            "#f",
            "@",
            ":",
        ]
    )
    | st.text(max_size=2),
    max_size=10,
).map("".join)


@given(href=_URL_PIECES, other=_URL_PIECES)
def test_nofollow_targets_never_rule_out_a_url_with_the_same_canonical_form(
    href: str, other: str
) -> None:
    """The cheap test that spares canonicalising most URLs (the last segment of the path, read
    from the text) only rules out a URL whose canonical form is not a target."""
    base = "http://example.com/dir/page.html"
    try:
        target = canonical_url(urljoin(base, other))
        url = urljoin(base, href)
        canonical = canonical_url(url)
    except ValueError:
        return
    targets = NofollowTargets(frozenset({target}))
    if canonical == target:
        assert targets.may_match(href)
        assert url in targets
    else:
        assert url not in targets


# Pieces of markup that reach the interesting paths, mixed with any characters.
_MARKUP = st.lists(
    st.sampled_from(
        [
            "<meta",
            " name=",
            "robots",
            "testbot",
            " content=",
            "noindex",
            ">",
            "<a",
            " href=",
            " rel=nofollow",
            "&#114;",
            "<template>",
            "<!--",
            "<script>",
            '"',
            "'",
        ]
    )
    # A body is UTF-8 bytes: a lone surrogate has none.
    | st.characters(exclude_categories=["Cs"])
).map("".join)


@given(_MARKUP, st.binary(max_size=200))
def test_any_body_and_header_read_without_error(body: str, header: bytes) -> None:
    response = page(body, headers={"X-Robots-Tag": header.decode("latin-1")})
    assert all(isinstance(content, str) for content in meta_contents(response, TOKEN))
    assert all(isinstance(url, str) for url in rel_nofollow_urls(response))


# -- metas of several vocabularies in one parse, and TDMRep's values ----------------------------


def test_named_metas_gives_each_name_lowercased_in_document_order() -> None:
    response = in_body(
        '<meta name="TDM-Reservation" content="1"><meta name="robots" content="noindex">'
        '<meta name=" tdm-policy " content="https://p/"><meta name="other" content="x">'
    )
    names = (*robots_meta_names(TOKEN), "tdm-reservation", "tdm-policy")
    assert named_metas(response, names) == [
        ("tdm-reservation", "1"),
        ("robots", "noindex"),
        ("tdm-policy", "https://p/"),
    ]
    assert meta_contents(response, TOKEN) == ["noindex"]
    assert robots_meta_names("") == ("robots",)


def test_tdmrep_values_take_each_first_header_and_meta() -> None:
    """TDMRep names one value per header and meta: a repeated one counts by its first."""
    response = page(
        '<meta name="tdm-reservation" content="0"><meta name="tdm-reservation" content="1">',
        headers={"tdm-reservation": ["1", "0"], "tdm-policy": "https://h/"},
    )
    metas = named_metas(response, ("tdm-reservation", "tdm-policy"))
    assert tdmrep_values(response, metas) == (("1", "https://h/"), ("0", None))
    plain = page("<p>none</p>")
    assert tdmrep_values(plain, named_metas(plain, ("tdm-reservation",))) == (
        (None, None),
        (None, None),
    )


def test_metas_of_names_sharing_a_prefix_are_found_however_deep() -> None:
    """The page is searched once for ``tdm-`` for both TDMRep names: a meta of either, early or
    late in a long page, is found, and a long page without one is parsed no further than its
    other metas need."""
    text = "<p>" + "words " * 3000 + "</p>"
    late = in_body(text + '<meta name="tdm-policy" content="https://p/">' + text)
    early = page('<head><meta name="tdm-reservation" content="1"></head><body>' + text)
    names = ("robots", "tdm-reservation", "tdm-policy")
    assert named_metas(late, names) == [("tdm-policy", "https://p/")]
    assert named_metas(early, names) == [("tdm-reservation", "1")]
    assert named_metas(in_body(text + "tdm-"), names) == []
