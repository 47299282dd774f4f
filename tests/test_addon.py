"""The add-on in real crawls: Scrapy's RobotsTxtMiddleware replaced, never beside ours, the
user's own middleware settings respected, and one start line saying what is on and which name
is obeyed, with warnings for what a user is unlikely to want."""

from __future__ import annotations

import logging
import runpy
from pathlib import Path
from typing import Any

import pytest
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as Builtin
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.misc import load_object
from scrapy.utils.test import get_crawler

from scrapy_robotsmeta import RobotsMetaMiddleware, RobotsTxtMiddleware
from scrapy_robotsmeta.defaults import DEFAULTS
from scrapy_robotsmeta.testing import Site, html, links_page, static
from tests.crawl import BASE_SETTINGS, FollowAllSpider, crawl, one_page, small_site

RULES = "User-agent: *\nDisallow: /private\n"
#: The settings the documentation gives for enabling the package without the add-on.
BY_HAND_SETTINGS = (
    Path(__file__).resolve().parents[1] / "docs" / "examples" / "by_hand_settings.py"
)


BUILTIN_PATH = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"


# A 404 whose error page reads like robots.txt: Scrapy's middleware parses it and crawls
# nothing, ours allows everything. Which one ran shows in what was crawled.
ERROR_PAGE_ROBOTS = static("User-agent: *\nDisallow: /\n", status=404)


def error_page_site(site: Site) -> list[str]:
    site.add(
        {
            "/robots.txt": ERROR_PAGE_ROBOTS,
            "/": links_page("/a", head='<meta name="robots" content="noarchive">'),
            "/a": html("<p>a</p>"),
        }
    )
    return [site.url("/")]


def priorities(crawler: Crawler, setting: str) -> dict[Any, Any]:
    """The effective component → priority mapping of *setting*, base included."""
    merged = crawler.settings.getwithbase(setting)
    return {
        load_object(key) if isinstance(key, str) else key: value for key, value in merged.items()
    }


def downloader_middlewares(crawler: Crawler) -> list[type]:
    assert crawler.engine is not None
    return [type(mw) for mw in crawler.engine.downloader.middleware.middlewares]


@deferred_f_from_coro_f
async def test_addon_replaces_the_builtin_at_its_priority(site: Site) -> None:
    result = await crawl(error_page_site(site))
    crawler = result.crawler
    mws = downloader_middlewares(crawler)
    assert RobotsTxtMiddleware in mws
    assert Builtin not in mws
    base_priority = crawler.settings["DOWNLOADER_MIDDLEWARES_BASE"][BUILTIN_PATH]
    assert priorities(crawler, "DOWNLOADER_MIDDLEWARES")[RobotsTxtMiddleware] == base_priority
    # Only our reading of a 404 could let these through.
    assert result.urls == {site.url("/"), site.url("/a")}
    assert site.hits["/robots.txt"] == 1


@deferred_f_from_coro_f
async def test_addon_adds_the_meta_middleware(site: Site) -> None:
    result = await crawl(error_page_site(site))
    assert result.crawler.get_spider_middleware(RobotsMetaMiddleware) is not None
    assert priorities(result.crawler, "SPIDER_MIDDLEWARES")[RobotsMetaMiddleware] == 950
    [home] = [item for item in result.items if item["url"] == site.url("/")]
    assert home["robots"]["archive"] is False


@pytest.mark.parametrize(
    "key", ["scrapy_robotsmeta.RobotsTxtMiddleware", RobotsTxtMiddleware], ids=["path", "class"]
)
@deferred_f_from_coro_f
async def test_user_priority_for_our_middleware_is_kept(site: Site, key: Any) -> None:
    result = await crawl(error_page_site(site), settings={"DOWNLOADER_MIDDLEWARES": {key: 543}})
    crawler = result.crawler
    assert priorities(crawler, "DOWNLOADER_MIDDLEWARES")[RobotsTxtMiddleware] == 543
    assert priorities(crawler, "DOWNLOADER_MIDDLEWARES")[Builtin] is None
    mws = downloader_middlewares(crawler)
    assert mws.count(RobotsTxtMiddleware) == 1
    assert Builtin not in mws
    assert result.urls == {site.url("/"), site.url("/a")}


@deferred_f_from_coro_f
async def test_user_priority_for_the_meta_middleware_is_kept(site: Site) -> None:
    result = await crawl(
        error_page_site(site),
        settings={"SPIDER_MIDDLEWARES": {"scrapy_robotsmeta.RobotsMetaMiddleware": 10}},
    )
    assert priorities(result.crawler, "SPIDER_MIDDLEWARES")[RobotsMetaMiddleware] == 10
    assert all("robots" in item for item in result.items)


@deferred_f_from_coro_f
async def test_builtin_disabled_by_the_user_stays_off_with_a_warning(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="scrapy_robotsmeta"):
        result = await crawl(
            error_page_site(site), settings={"DOWNLOADER_MIDDLEWARES": {BUILTIN_PATH: None}}
        )
    mws = downloader_middlewares(result.crawler)
    assert RobotsTxtMiddleware not in mws
    assert Builtin not in mws
    assert site.hits["/robots.txt"] == 0
    [warning] = [r for r in caplog.records if r.name == "scrapy_robotsmeta.addon"]
    assert warning.levelno == logging.WARNING
    assert "did not enable its replacement" in warning.getMessage()
    # The page-level part does not depend on robots.txt.
    assert result.crawler.get_spider_middleware(RobotsMetaMiddleware) is not None


@deferred_f_from_coro_f
async def test_robotstxt_obey_false_checks_nothing(site: Site) -> None:
    """ROBOTSTXT_OBEY keeps its Scrapy meaning: False turns the robots.txt part off."""
    result = await crawl(error_page_site(site), settings={"ROBOTSTXT_OBEY": False})
    mws = downloader_middlewares(result.crawler)
    assert RobotsTxtMiddleware not in mws
    assert Builtin not in mws
    assert site.hits["/robots.txt"] == 0
    assert result.urls == {site.url("/"), site.url("/a")}


def by_hand_settings() -> dict[str, Any]:
    """The settings of the documentation's by-hand settings file, as a project would have
    them."""
    namespace = runpy.run_path(str(BY_HAND_SETTINGS))
    return {name: value for name, value in namespace.items() if name.isupper()}


def components(crawler: Crawler) -> dict[str, Any]:
    assert crawler.engine is not None
    return {
        "downloader": downloader_middlewares(crawler),
        "spider": [type(mw) for mw in crawler.engine.scraper.spidermw.middlewares],
        "exporters": {
            name: load_object(path) for name, path in crawler.settings["FEED_EXPORTERS"].items()
        },
    }


@deferred_f_from_coro_f
async def test_enabling_by_hand_as_the_docs_say_gives_the_addons_components(
    site: Site,
) -> None:
    """The documentation's by-hand settings enable exactly what the add-on does, in the same
    order."""
    by_hand = await crawl(error_page_site(site), settings={"ADDONS": {}, **by_hand_settings()})
    with_addon = await crawl(error_page_site(site))
    assert components(by_hand.crawler) == components(with_addon.crawler)
    assert Builtin not in downloader_middlewares(by_hand.crawler)
    assert by_hand.urls == with_addon.urls == {site.url("/"), site.url("/a")}
    assert all("robots" in item for item in by_hand.items)


@deferred_f_from_coro_f
async def test_builtin_is_replaced_not_doubled(site: Site) -> None:
    small_site(site, static(RULES))
    result = await crawl([site.url("/")])
    assert result.crawler.get_downloader_middleware(RobotsTxtMiddleware) is not None
    assert result.crawler.get_downloader_middleware(Builtin) is None


# --------------------------------------------------------------------------------------------
# The start line and warnings
# --------------------------------------------------------------------------------------------


ADDON_LOGGER = "scrapy_robotsmeta.addon"


STORAGE = DEFAULTS["ROBOTSTXT_STORAGE"]


def addon_records(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.name == ADDON_LOGGER and r.levelno == level
    ]


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
