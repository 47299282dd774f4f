"""Settings a user can see: every default registered by the add-on, one start line saying what
is on and which name is obeyed, and warnings for what a user is unlikely to want."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_robotsmeta.defaults import DEFAULTS
from scrapy_robotsmeta.testing import Site, html
from tests.crawl import BASE_SETTINGS, FollowAllSpider, crawl

ADDON_LOGGER = "scrapy_robotsmeta.addon"
STORAGE = DEFAULTS["ROBOTSTXT_STORAGE"]


def one_page(site: Site) -> list[str]:
    site.add({"/": html("<p>home</p>")})
    return [site.url("/")]


def addon_records(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.name == ADDON_LOGGER and r.levelno == level
    ]


@deferred_f_from_coro_f
async def test_every_default_is_in_crawler_settings(site: Site) -> None:
    """``crawler.settings.get(NAME)`` gives the value in force, at Scrapy's default priority."""
    result = await crawl(one_page(site))
    settings = result.crawler.settings
    for name, value in DEFAULTS.items():
        assert settings.get(name) == value, name
        assert settings.getpriority(name) == SETTINGS_PRIORITIES["default"], name


@deferred_f_from_coro_f
async def test_a_value_the_user_set_wins_over_the_default(site: Site) -> None:
    result = await crawl(
        one_page(site),
        settings={"ROBOTSTXT_UNAVAILABLE_TIMEOUT": 30, "ROBOTSMETA_ITEM_FIELD": "rules"},
    )
    settings = result.crawler.settings
    assert settings.getfloat("ROBOTSTXT_UNAVAILABLE_TIMEOUT") == 30
    assert settings.get("ROBOTSMETA_ITEM_FIELD") == "rules"
    assert "rules" in result.items[0]


@deferred_f_from_coro_f
async def test_start_line_says_what_is_on_and_the_token(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger=ADDON_LOGGER):
        await crawl(one_page(site), settings={"USER_AGENT": "archive.org_bot/1.0"})
    [line] = addon_records(caplog, logging.INFO)
    assert (
        f"robots.txt on, meta on, Crawl-delay off, storage {STORAGE};"
        " product token 'archive', crawler name 'archive.org_bot' "
        "(from USER_AGENT 'archive.org_bot/1.0')"
    ) in line
    assert addon_records(caplog, logging.WARNING) == []


@pytest.mark.parametrize(
    ("settings", "parts"),
    [
        (
            {"ROBOTSTXT_OBEY": False, "ROBOTSMETA_ENABLED": False},
            "robots.txt off, meta off, Crawl-delay off, storage unused",
        ),
        (
            {"ROBOTSTXT_OBEY_CRAWL_DELAY": True, "ROBOTSTXT_USER_AGENT": "OtherBot"},
            f"robots.txt on, meta on, Crawl-delay on, storage {STORAGE}; "
            "product token 'otherbot', crawler name "
            "'otherbot' (from ROBOTSTXT_USER_AGENT 'OtherBot')",
        ),
    ],
)
@deferred_f_from_coro_f
async def test_start_line_follows_the_settings(
    site: Site, caplog: pytest.LogCaptureFixture, settings: dict[str, Any], parts: str
) -> None:
    with caplog.at_level(logging.INFO, logger=ADDON_LOGGER):
        await crawl(one_page(site), settings=settings)
    [line] = addon_records(caplog, logging.INFO)
    assert parts in line


@deferred_f_from_coro_f
async def test_warning_when_robotstxt_obey_is_left_at_scrapys_default(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    """As a script with CrawlerProcess, the add-on and no ROBOTSTXT_OBEY runs: robots.txt is
    off by Scrapy's default, which a user who enabled the add-on is told."""
    settings = {k: v for k, v in BASE_SETTINGS.items() if k != "ROBOTSTXT_OBEY"}
    crawler = get_crawler(FollowAllSpider, settings)
    with caplog.at_level(logging.INFO, logger=ADDON_LOGGER):
        await crawl(one_page(site), crawler=crawler)
    [warning] = addon_records(caplog, logging.WARNING)
    assert "robots.txt is not obeyed: ROBOTSTXT_OBEY is not set" in warning
    assert site.hits["/robots.txt"] == 0


@deferred_f_from_coro_f
async def test_no_warning_when_robotstxt_obey_is_set_false_on_purpose(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger=ADDON_LOGGER):
        await crawl(one_page(site), settings={"ROBOTSTXT_OBEY": False})
    assert addon_records(caplog, logging.WARNING) == []
    [line] = addon_records(caplog, logging.INFO)
    assert "robots.txt off" in line


@pytest.mark.parametrize("user_agent", ["123bot/1.0", "Mozilla/5.0 (compatible; 4chan-bot/1.0)"])
@deferred_f_from_coro_f
async def test_warning_when_the_user_agent_gives_no_token(
    site: Site, caplog: pytest.LogCaptureFixture, user_agent: str
) -> None:
    with caplog.at_level(logging.INFO, logger=ADDON_LOGGER):
        await crawl(one_page(site), settings={"USER_AGENT": user_agent})
    [warning] = addon_records(caplog, logging.WARNING)
    assert f"USER_AGENT {user_agent!r} gives no valid robots.txt product token" in warning
    assert "only 'User-agent: *' groups apply" in warning
