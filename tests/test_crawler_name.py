"""The crawler's name: page-level rules address it as it writes it (``archive.org_bot``),
robots.txt groups by the RFC 9309 product token cut from it (``archive``)."""

from __future__ import annotations

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robotsmeta.robotsmeta.directives import read_rules
from scrapy_robotsmeta.testing import Site, html, links_page, static
from scrapy_robotsmeta.useragent import crawler_name, product_token
from tests.crawl import crawl

ARCHIVE_UA = (
    "Mozilla/5.0 (compatible; archive.org_bot +http://archive.org/details/archive.org_bot)"
)


@pytest.mark.parametrize(
    ("user_agent", "name", "token"),
    [
        ("archive.org_bot", "archive.org_bot", "archive"),
        ("Archive.Org_Bot/3.0", "archive.org_bot", "archive"),
        (ARCHIVE_UA, "archive.org_bot", "archive"),
        (
            "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
            "googlebot",
            "googlebot",
        ),
        ("Scrapy/2.19 (+https://scrapy.org)", "scrapy", "scrapy"),
        ("my-bot.v2/1.0", "my-bot.v2", "my-bot"),
        ("123bot/1.0", "123bot", ""),
        ("Foo Bar/1.0", "foo", "foo"),
        ("", "", ""),
    ],
)
def test_name_is_the_product_and_the_token_its_rfc9309_cut(
    user_agent: str, name: str, token: str
) -> None:
    """The name is the product before ``/`` (or after ``compatible;``), an HTTP token
    (RFC 9110 §5.6.2) lowercased; the robots.txt token is its leading run of letters, ``_``
    and ``-`` (RFC 9309 §2.2.1)."""
    assert crawler_name(user_agent) == name
    assert product_token(user_agent) == token


@pytest.mark.parametrize("scope", ["archive.org_bot", "ARCHIVE.ORG_BOT", "Archive.org_Bot"])
def test_header_scope_matches_the_name_as_written_case_insensitively(scope: str) -> None:
    reading = read_rules([f"{scope}: noindex"], [], "archive.org_bot")
    assert reading.directives.index is False


def test_header_scope_of_another_name_does_not_apply() -> None:
    """``archive`` is another crawler than ``archive.org_bot``, though it is its token."""
    assert read_rules(["archive: noindex"], [], "archive.org_bot").directives.index is True
    assert read_rules(["archive.org_bot: noindex"], [], "archive").directives.index is True


@deferred_f_from_coro_f
async def test_crawl_named_archive_org_bot(site: Site) -> None:
    """A real crawl as ``archive.org_bot``: the meta and header scoped to that name apply, those
    scoped to ``archive`` do not, and robots.txt's ``User-agent: archive`` group is ours."""
    site.add(
        {
            "/robots.txt": static(
                "User-agent: archive\nDisallow: /private\n\nUser-agent: *\nDisallow: /\n"
            ),
            "/": links_page("/meta", "/meta-other", "/header", "/header-other", "/private/x"),
            "/meta": html('<head><meta name="Archive.org_Bot" content="noindex"></head>'),
            "/meta-other": html('<head><meta name="archive" content="noindex"></head>'),
            "/header": html("<p>h</p>", headers={"X-Robots-Tag": "archive.org_bot: noarchive"}),
            "/header-other": html("<p>o</p>", headers={"X-Robots-Tag": "archive: noarchive"}),
        }
    )
    result = await crawl([site.url("/")], settings={"USER_AGENT": ARCHIVE_UA})
    robots = {item["url"].removeprefix(site.origin): item["robots"] for item in result.items}
    assert set(robots) == {"/", "/meta", "/meta-other", "/header", "/header-other"}
    assert robots["/meta"]["index"] is False
    assert robots["/meta-other"]["index"] is True
    assert robots["/header"]["archive"] is False
    assert robots["/header-other"]["archive"] is True
    assert site.hits["/private/x"] == 0
    assert result.stat("robotstxt/forbidden") == 1
