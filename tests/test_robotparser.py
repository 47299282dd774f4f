"""ScrapyRobotParser: the package's rules behind Scrapy's ``RobotParser`` interface, whose
methods take URLs and user agents as str or bytes."""

from __future__ import annotations

from scrapy.robotstxt import RobotParser
from scrapy.utils.test import get_crawler

from scrapy_robotsmeta.robotparser import ScrapyRobotParser
from scrapy_robotsmeta.robotstxt import RobotsTxt

BODY = b"User-agent: mybot\nCrawl-delay: 4\nDisallow: /private\nDisallow: /caf\xc3\xa9\n\n"
BODY += b"User-agent: *\nDisallow: /\xe9t\xe9\n"


def test_it_is_a_scrapy_robotparser_made_from_a_body() -> None:
    parser = ScrapyRobotParser.from_crawler(get_crawler(), BODY)
    assert isinstance(parser, RobotParser)
    assert isinstance(parser.rules, RobotsTxt)


def test_str_and_bytes_give_the_same_answers() -> None:
    parser = ScrapyRobotParser(RobotsTxt.parse(BODY))
    for url, agent, allowed in [
        ("https://example.com/private/x", "mybot", False),
        ("https://example.com/public", "MyBot/1.0 (+https://example.com/other)", True),
        ("https://example.com/caf\u00e9", "mybot", False),
    ]:
        assert parser.allowed(url, agent) is allowed
        assert parser.allowed(url.encode(), agent.encode()) is allowed
    assert parser.crawl_delay("mybot") == parser.crawl_delay(b"mybot") == 4.0
    assert parser.crawl_delay(b"other") is None


def test_bytes_that_are_not_utf8_are_matched_as_the_bytes_they_are() -> None:
    """RFC 9309 §2.2.2: a rule's octets outside ASCII are compared percent-encoded; a URL given
    as bytes in another encoding is compared by its octets too, never an exception."""
    parser = ScrapyRobotParser(RobotsTxt.parse(BODY))
    assert parser.allowed(b"https://example.com/\xe9t\xe9", b"\xff\xfebot") is False
    assert parser.allowed(b"https://example.com/ete", b"\xff\xfebot") is True
