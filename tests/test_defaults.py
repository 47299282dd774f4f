"""The settings' defaults (``defaults.py``): every one registered by the add-on at Scrapy's default
priority, a value the user set wins over it, and the README's settings tables give the same."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from scrapy.settings import SETTINGS_PRIORITIES, default_settings
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


README = Path(__file__).resolve().parents[1] / "README.md"
SETTINGS_TABLE_HEADER = "| setting | default | meaning |"
# A table row: the setting's name, then the first code span of its default cell (the value;
# words may follow it, as in "`None` (then scrapy-redis's `REDIS_URL`)").
SETTINGS_ROW = re.compile(r"\| `(?P<name>[A-Z_]+)` \| [^|`]*`(?P<default>[^`]*)`")


def readme_defaults() -> dict[str, str]:
    """Setting name → its default as written in the README's settings tables."""
    defaults: dict[str, str] = {}
    in_table = False
    for line in README.read_text(encoding="utf-8").splitlines():
        if line == SETTINGS_TABLE_HEADER:
            in_table = True
        elif not line.startswith("|"):
            in_table = False
        elif in_table and (row := SETTINGS_ROW.match(line)):
            assert row["name"] not in defaults, f"{row['name']} is in two settings tables"
            defaults[row["name"]] = row["default"]
    return defaults


def test_readme_settings_tables_give_the_defaults_of_defaults_py() -> None:
    """The README lists every setting of DEFAULTS with its default, a Python literal of the same
    type; any other setting it lists is Scrapy's own (ROBOTSTXT_OBEY), with Scrapy's default."""
    written = readme_defaults()
    assert set(DEFAULTS) - set(written) == set(), "settings missing from the README"
    unknown = {
        name for name in written if name not in DEFAULTS and name not in dir(default_settings)
    }
    assert unknown == set(), "README settings that are neither the package's nor Scrapy's"
    wrong = {}
    for name, text in written.items():
        expected = DEFAULTS[name] if name in DEFAULTS else getattr(default_settings, name)
        value = ast.literal_eval(text)
        if (type(value), value) != (type(expected), expected):
            wrong[name] = (text, expected)
    assert wrong == {}, "README default → the default in force"
