"""RobotsMetaMiddleware reading any response: whatever it carries (raw bytes, any
Content-Type, any response class, any number of X-Robots-Tag values, hostile pages), reading its
robots rules never raises and never needs the middleware's last-resort guard.

test_robotsmeta_page.py and test_robotsmeta_directives.py check the readers on generated markup
and text; here the whole middleware gets the response, as Scrapy hands it over.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import scrapy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scrapy import Request, Spider
from scrapy.http import HtmlResponse, Response, TextResponse, XmlResponse
from scrapy.statscollectors import StatsCollector
from scrapy.utils.test import get_crawler

from scrapy_robotsmeta import USES, RobotsMetaMiddleware, directives_for, usage_for
from scrapy_robotsmeta.startup import ConfigurationError

URL = "http://example.com/dir/page.html"
FIELD_TYPES: dict[str, type | tuple[type, ...]] = {
    "index": bool,
    "follow": bool,
    "archive": bool,
    "snippet": bool,
    "max_snippet": (int, type(None)),
    "max_image_preview": str,
    "max_video_preview": (int, type(None)),
    "translate": bool,
    "imageindex": bool,
    "indexifembedded": bool,
    "unavailable_after": (str, type(None)),
    **dict.fromkeys(USES, (bool, type(None))),
    "tdm_reservation": (bool, type(None)),
    "tdm_policy": (str, type(None)),
    "tdm_file": str,
}


def middleware(
    rel_nofollow: bool = False, tdmrep: bool = False
) -> tuple[RobotsMetaMiddleware, StatsCollector]:
    crawler = get_crawler(
        Spider,
        {
            "USER_AGENT": "TestBot/1.0",
            "ROBOTSMETA_OBEY_REL_NOFOLLOW": rel_nofollow,
            "ROBOTSMETA_TDMREP": tdmrep,
        },
    )
    assert crawler.stats is not None
    return RobotsMetaMiddleware(crawler), crawler.stats


def through(
    response: Response, rel_nofollow: bool = False, tdmrep: bool = False
) -> tuple[dict[str, Any], list[Any], StatsCollector]:
    """Run a callback's output (one item, two links) through the middleware, as Scrapy does."""
    mw, stats = middleware(rel_nofollow, tdmrep)
    mw.process_spider_input(response)
    item: dict[str, Any] = {"url": response.url}
    outputs = [item, Request(URL + "?next"), Request("http://example.com/a")]
    # Scrapy < 2.14 passes the spider; later ones deprecate it.
    spider_arg = (None,) if scrapy.version_info < (2, 14) else ()
    passed = list(mw.process_spider_output(response, outputs, *spider_arg))
    return item, passed, stats


def assert_read_cleanly(
    response: Response, rel_nofollow: bool = False, tdmrep: bool = False
) -> dict[str, Any]:
    item, passed, stats = through(response, rel_nofollow, tdmrep)
    assert stats.get_value("robotsmeta/read_error") is None  # the last-resort guard never ran
    robots: dict[str, Any] = item["robots"]
    assert set(robots) == set(FIELD_TYPES)
    for key, expected in FIELD_TYPES.items():
        assert isinstance(robots[key], expected), (key, robots[key])
    requests = [output for output in passed if isinstance(output, Request)]
    if not robots["follow"]:
        assert requests == []
    directives, usage = directives_for(response), usage_for(response)
    assert directives is not None
    assert usage is not None
    assert directives.to_dict() | usage.to_dict() == robots
    return robots


_CONTENT_TYPES = st.one_of(
    st.sampled_from(
        [
            None,
            b"text/html",
            b"text/html; charset=utf-8",
            b"text/html; charset=bogus",
            b"TEXT/HTML;charset=UTF-16",
            b"application/xhtml+xml",
            b"text/plain",
            b"application/pdf",
        ]
    ),
    st.binary(max_size=40),
)
_MARKUP = st.lists(
    st.sampled_from(
        [
            "<meta",
            ' name="robots"',
            ' name="tdm-reservation"',
            " name=TDM-Policy",
            ' content="1"',
            " name=testbot",
            " content=",
            '"noindex, nofollow"',
            "'max-snippet: 3, unavailable_after: Wed, 03 Dec 2025 13:09:53 GMT'",
            ">",
            "<a href=",
            "/x",
            ' rel="nofollow"',
            "&#114;",
            "<!--",
            "-->",
            "<script>",
            "<template>",
            "<base href='http://[::1'>",
            "\x00",
        ]
    )
    | st.text(max_size=5),
    max_size=40,
).map("".join)
_BODIES = st.one_of(st.binary(max_size=2000), _MARKUP.map(lambda text: text.encode("utf-8")))
_HEADER_VALUES = st.lists(
    st.one_of(
        st.binary(max_size=120),
        st.sampled_from([b"noindex", b"testbot: nofollow", b"otherbot: none, testbot:", b",,:"]),
    ),
    max_size=5,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=_BODIES,
    content_type=_CONTENT_TYPES,
    header_values=_HEADER_VALUES,
    usage_values=_HEADER_VALUES,
    cls=st.sampled_from([HtmlResponse, TextResponse, XmlResponse, Response]),
    rel_nofollow=st.booleans(),
    tdmrep=st.booleans(),
)
def test_any_response_is_read_cleanly(  # noqa: PLR0917 - hypothesis passes them by name
    body: bytes,
    content_type: bytes | None,
    header_values: list[bytes],
    usage_values: list[bytes],
    cls: type[Response],
    rel_nofollow: bool,
    tdmrep: bool,
) -> None:
    """Any X-Robots-Tag, Content-Usage, Content-Signal and TDMRep values, any body."""
    headers: dict[bytes, Any] = {b"X-Robots-Tag": header_values}
    headers[b"Content-Usage"] = headers[b"Content-Signal"] = usage_values
    headers[b"tdm-reservation"] = headers[b"tdm-policy"] = usage_values
    if content_type is not None:
        headers[b"Content-Type"] = content_type
    robots = assert_read_cleanly(cls(URL, body=body, headers=headers), rel_nofollow, tdmrep)
    assert robots["tdm_file"] == "not_consulted"  # no robots.txt check recorded a file
    if not tdmrep:
        assert robots["tdm_reservation"] is None


@pytest.mark.parametrize("base", ["a://[", "http://[::1"])
def test_unusable_base_href_with_rel_nofollow_is_read_cleanly(base: str) -> None:
    """Found by the property test above: an unusable <base href> is ignored (the links resolve
    against the page URL) rather than reaching the middleware's last-resort guard."""
    assert_read_cleanly(
        html_response(f'<base href="{base}"><a href="/x" rel="nofollow">x</a>'), True
    )


# --------------------------------------------------------------------------------------------
# Hostile pages
# --------------------------------------------------------------------------------------------


def html_response(body: bytes | str, **headers: Any) -> HtmlResponse:
    data = body.encode("utf-8") if isinstance(body, str) else body
    return HtmlResponse(
        URL,
        body=data,
        headers={"Content-Type": "text/html; charset=utf-8", **headers},
    )


HOSTILE_PAGES = {
    "10000-metas": lambda: html_response(
        '<meta name="robots" content="noindex">' * 10_000
        + '<meta name="testbot" content="nofollow">'
    ),
    "100000-nested-divs": lambda: html_response(
        "<html><body>" + "<div>" * 100_000 + '<meta name="robots" content="noindex">'
    ),
    "10-MB-page": lambda: html_response(
        "<html><head><title>t</title></head><body>"
        + "<p>text</p>" * 1_000_000
        + '<meta name="robots" content="noindex"></body></html>'
    ),
    "nul-bytes": lambda: html_response(
        b'<meta name="rob\x00ots" content="noindex\x00, nofollow">\x00' * 50
    ),
    "invalid-utf-8": lambda: html_response(
        b'<meta name="robots" content="noindex, \xff\xfe\xed\xa0\x80">'
    ),
    "unclosed-comment": lambda: html_response('<!-- <meta name="robots" content="noindex">'),
    "1-MB-content": lambda: html_response(
        f'<meta name="robots" content="{"noarchive, " * 100_000}">'
    ),
    "comma-run-date": lambda: html_response(
        '<meta name="robots" content="unavailable_after: ' + "," * 200_000 + '">'
    ),
    "1-MB-header": lambda: html_response(
        "<p>x</p>", **{"X-Robots-Tag": "testbot: " + "noindex," * 125_000}
    ),
    "1000-headers": lambda: html_response(
        "<p>x</p>", **{"X-Robots-Tag": [f"bot{i}: noindex" for i in range(1000)]}
    ),
}


@pytest.mark.parametrize("name", HOSTILE_PAGES)
def test_hostile_page_is_read_cleanly(name: str) -> None:
    assert_read_cleanly(HOSTILE_PAGES[name](), rel_nofollow=True)


def test_what_hostile_pages_say_is_still_obeyed() -> None:
    """Where the parser keeps the element (not in a comment), its rules apply."""
    metas = assert_read_cleanly(HOSTILE_PAGES["10000-metas"]())
    assert (metas["index"], metas["follow"]) == (False, False)
    assert assert_read_cleanly(HOSTILE_PAGES["10-MB-page"]())["index"] is False
    assert assert_read_cleanly(HOSTILE_PAGES["invalid-utf-8"]())["index"] is False
    assert assert_read_cleanly(HOSTILE_PAGES["unclosed-comment"]())["index"] is True
    assert assert_read_cleanly(HOSTILE_PAGES["1-MB-content"]())["archive"] is False
    assert assert_read_cleanly(HOSTILE_PAGES["1-MB-header"]())["index"] is False
    assert assert_read_cleanly(HOSTILE_PAGES["1000-headers"]())["index"] is True


def test_purposes_are_read_once_and_an_unknown_one_is_refused_at_start() -> None:
    """ROBOTSMETA_PURPOSE names uses as the signals write them or as item keys."""
    purposes = {"ROBOTSMETA_PURPOSE": "ai-train, AI_Input,ai-train"}
    mw = RobotsMetaMiddleware(get_crawler(Spider, purposes))
    assert mw._purposes == ("ai_train", "ai_input")
    refused = "ROBOTSMETA_PURPOSE: unknown use 'ai-everything'"
    with pytest.raises(ConfigurationError, match=refused):
        RobotsMetaMiddleware(get_crawler(Spider, {"ROBOTSMETA_PURPOSE": ["ai-everything"]}))


def _drain(outputs: AsyncIterator[Any]) -> list[Any]:
    """The outputs of an asynchronous generator that never waits on anything."""

    async def collect() -> list[Any]:
        return [output async for output in outputs]

    coroutine = collect()
    with pytest.raises(StopIteration) as done:
        coroutine.send(None)
    result: list[Any] = done.value.value
    return result


async def _aiter(outputs: list[Any]) -> AsyncIterator[Any]:
    for output in outputs:
        yield output


def test_async_output_is_judged_as_the_sync_one() -> None:
    """Scrapy hands the callback's output to process_spider_output_async: it passes and drops
    what process_spider_output does, also when the outputs of two pages alternate (one
    page's requests all pass, the other's do not)."""
    nofollow_page = html_response(
        '<a href="/a" rel="nofollow">a</a><a href="/b">b</a><a href="/c" rel="NoFollow ugc">c</a>'
    )
    plain_page = HtmlResponse(
        "http://example.com/other.html",
        body=b'<a href="/a">a</a>',
        headers={"Content-Type": "text/html"},
    )

    def outputs(response: Response) -> list[Any]:
        return [
            Request(response.urljoin("/a")),
            {"url": response.url},
            Request(response.urljoin("/b")),
            Request(response.urljoin("/c")),
            Request(response.urljoin("/c"), meta={"dont_obey_robotsmeta": True}),
        ]

    def judged(run: Any) -> list[list[str]]:
        mw, _ = middleware(rel_nofollow=True)
        pages = (nofollow_page, plain_page)
        for response in pages:
            mw.process_spider_input(response)
        passed: list[list[str]] = [[], []]
        for round_ in range(3):
            for index, response in enumerate(pages):
                for output in run(mw, response, outputs(response)[round_:]):
                    passed[index].append(output.url if isinstance(output, Request) else "item")
        return passed

    spider_arg = (None,) if scrapy.version_info < (2, 14) else ()
    synchronous = judged(
        lambda mw, response, outs: list(mw.process_spider_output(response, outs, *spider_arg))
    )
    asynchronous = judged(
        lambda mw, response, outs: _drain(mw.process_spider_output_async(response, _aiter(outs)))
    )
    assert asynchronous == synchronous
    assert "http://example.com/c" in synchronous[0]  # only through dont_obey_robotsmeta
    assert synchronous[0].count("http://example.com/c") == 3
    assert "http://example.com/a" not in synchronous[0]
    assert synchronous[1].count("http://example.com/a") == 1


# --------------------------------------------------------------------------------------------
# TDMRep
# --------------------------------------------------------------------------------------------


def test_tdmrep_headers_and_metas_are_read_only_when_consulted() -> None:
    """TDMRep's header and meta, the meta superseding the header; nothing read when TDMRep is
    not consulted (the item then says so, not "no reservation")."""
    response = html_response(
        '<meta name="TDM-Reservation" content="0"><meta name="tdm-policy" content=" https://p/ ">',
        **{"tdm-reservation": "1"},
    )
    robots = assert_read_cleanly(response, tdmrep=True)
    assert (robots["tdm_reservation"], robots["tdm_file"]) == (False, "not_consulted")
    assert robots["ai_train"] is True
    usage = usage_for(response)
    assert usage is not None
    assert usage.tdmrep is not None
    assert usage.tdmrep.source == "meta tdm-reservation: 0"
    assert usage.tdmrep.policy == "https://p/"
    off = html_response('<meta name="tdm-reservation" content="1">')
    robots = assert_read_cleanly(off)
    assert (robots["tdm_reservation"], robots["ai_train"]) == (None, None)


def test_a_tdmrep_meta_inside_a_template_does_not_count() -> None:
    response = html_response('<template><meta name="tdm-reservation" content="1"></template>')
    assert assert_read_cleanly(response, tdmrep=True)["tdm_reservation"] is None
