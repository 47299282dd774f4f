"""The settings' defaults (``defaults.py``): every one registered by the add-on at Scrapy's default
priority, and a value the user set wins over it."""

from __future__ import annotations

from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robotsmeta.defaults import DEFAULTS
from scrapy_robotsmeta.testing import Site
from tests.crawl import crawl, one_page


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
