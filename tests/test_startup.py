"""What a crawl is checked for at start, and the one ERROR line of a refusal."""

from __future__ import annotations

import logging
import sys

import pytest
from scrapy import Spider
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from scrapy_robotsmeta.defaults import DEFAULTS
from scrapy_robotsmeta.startup import (
    ConfigurationError,
    check_settings,
    check_start,
    closest_name,
    known_names,
    refuse,
    tdmrep_consulted,
    unknown_names,
)

STARTUP_LOGGER = "scrapy_robotsmeta.startup"


def test_known_names_are_the_packages_and_scrapys() -> None:
    known = known_names()
    assert set(DEFAULTS) <= set(known)
    assert {"ROBOTSTXT_OBEY", "ROBOTSTXT_PARSER", "ROBOTSTXT_USER_AGENT"} <= set(known)


def test_a_setting_added_to_defaults_is_known_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check reads DEFAULTS itself: a new setting needs no second list."""
    monkeypatch.setitem(DEFAULTS, "ROBOTSTXT_SOMETHING_NEW", 1)
    assert unknown_names(Settings({"ROBOTSTXT_SOMETHING_NEW": 2})) == []


def test_unknown_names_are_only_those_of_the_two_prefixes() -> None:
    settings = Settings({"ROBOTSTXT_OBEY_CRAWLDELAY": True, "ROBOTSMETA_X": 1, "OTHER_X": 1})
    assert unknown_names(settings) == ["ROBOTSMETA_X", "ROBOTSTXT_OBEY_CRAWLDELAY"]


def test_closest_name_of_a_typo() -> None:
    assert closest_name("ROBOTSTXT_UNAVAILABLE_TIMOUT") == "ROBOTSTXT_UNAVAILABLE_TIMEOUT"
    assert closest_name("ROBOTSMETA_PURPOSES") == "ROBOTSMETA_PURPOSE"
    assert closest_name("ROBOTSMETA_WHATEVER_ELSE_ENTIRELY") is None


def test_settings_are_checked_once_per_crawl(caplog: pytest.LogCaptureFixture) -> None:
    crawler = get_crawler(Spider, {"ROBOTSTXT_UNAVAILABLE_TIMOUT": 1})
    check_settings(crawler)
    check_settings(crawler)
    warnings = [r for r in caplog.records if r.name == STARTUP_LOGGER]
    assert [r.getMessage() for r in warnings] == [
        "Unknown setting ROBOTSTXT_UNAVAILABLE_TIMOUT: neither scrapy-robotsmeta nor Scrapy "
        "reads it (did you mean ROBOTSTXT_UNAVAILABLE_TIMEOUT?)"
    ]


def test_robotstxt_parser_at_scrapys_default_is_not_warned_of(
    caplog: pytest.LogCaptureFixture,
) -> None:
    check_settings(get_crawler(Spider, {}))
    assert not [r for r in caplog.records if r.name == STARTUP_LOGGER]


def test_a_refusal_is_one_error_line_and_its_traceback_is_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with pytest.raises(ConfigurationError) as refused:
        refuse("SOME_SETTING is wrong: change it")
    [line] = [r for r in caplog.records if r.name == STARTUP_LOGGER]
    assert (line.levelno, line.getMessage()) == (
        logging.ERROR,
        "Crawl not started: SOME_SETTING is wrong: change it",
    )
    exc_info = (ConfigurationError, refused.value, None)
    record = logging.LogRecord("asyncio", logging.ERROR, __file__, 1, "x", (), exc_info)
    assert not logging.getLogger("asyncio").filter(record)
    other = logging.LogRecord("asyncio", logging.ERROR, __file__, 1, "x", (), sys.exc_info())
    assert logging.getLogger("asyncio").filter(other)


@pytest.mark.parametrize(
    ("settings", "refused"),
    [
        ({"ROBOTSTXT_STORAGE": "nowhere.Storage"}, "ROBOTSTXT_STORAGE = 'nowhere.Storage'"),
        ({"ROBOTSTXT_STORAGE": "scrapy.Spider"}, "is not a storage class"),
        (
            {"DOWNLOADER_MIDDLEWARES": {"scrapy_robotsmeta.RobotsTxtMiddleware": 100}},
            "Scrapy's RobotsTxtMiddleware is enabled beside",
        ),
        ({"ROBOTSTXT_OBAY": True}, "rename it ROBOTSTXT_OBEY"),
        ({"ROBOTSMETA_TDMREP": "maybe"}, "ROBOTSMETA_TDMREP is 'maybe': set it to True, False"),
        ({"ROBOTSMETA_TDMRPE": True}, "rename it ROBOTSMETA_TDMREP"),
    ],
)
def test_refused_at_start(settings: dict[str, object], refused: str) -> None:
    crawler = get_crawler(Spider, {"ROBOTSTXT_OBEY": True, **settings})
    with pytest.raises(ConfigurationError, match=refused):
        check_start(crawler)


def test_the_builtin_disabled_by_hand_starts() -> None:
    builtin = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
    mws = {builtin: None, "scrapy_robotsmeta.RobotsTxtMiddleware": 100}
    check_start(get_crawler(Spider, {"ROBOTSTXT_OBEY": True, "DOWNLOADER_MIDDLEWARES": mws}))


@pytest.mark.parametrize(
    ("settings", "consulted"),
    [
        ({}, False),
        ({"ROBOTSMETA_PURPOSE": "search"}, False),
        ({"ROBOTSMETA_PURPOSE": "ai-train"}, True),
        ({"ROBOTSMETA_PURPOSE": ["search", "ai_input"]}, True),
        ({"ROBOTSMETA_PURPOSE": "ai-use"}, True),
        ({"ROBOTSMETA_PURPOSE": "ai-train-images"}, True),
        ({"ROBOTSMETA_PURPOSE": "ai-train", "ROBOTSMETA_TDMREP": False}, False),
        ({"ROBOTSMETA_PURPOSE": "ai-train", "ROBOTSMETA_TDMREP": "False"}, False),
        ({"ROBOTSMETA_TDMREP": True}, True),
        ({"ROBOTSMETA_TDMREP": "1"}, True),
        ({"ROBOTSMETA_PURPOSE": "ai-train", "ROBOTSMETA_TDMREP": None}, True),
        ({"ROBOTSMETA_TDMREP": True, "ROBOTSMETA_ENABLED": False}, False),
    ],
)
def test_tdmrep_is_consulted_by_purpose_unless_the_setting_says(
    settings: dict[str, object], consulted: bool
) -> None:
    """None (the default): consulted when the crawl's purpose is a use a reservation speaks
    to (every AI use, not search); True or False whatever the purpose; never without the meta
    part, which reads it."""
    assert tdmrep_consulted(Settings(settings)) is consulted
