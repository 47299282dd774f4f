"""The crawler's name and its RFC 9309 product token (``useragent.py``)."""

from __future__ import annotations

import pytest

from scrapy_robotsmeta.useragent import crawler_name, product_token
from tests.rules import BASE, allows, parse

# --------------------------------------------------------------------------------------------
# The product token robots.txt groups are matched by (RFC 9309 §2.2.1)
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


# --------------------------------------------------------------------------------------------
# The crawler's name, and the product token cut from it
# --------------------------------------------------------------------------------------------


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
