"""The settings (``defaults.py``): every default registered by the add-on at Scrapy's default
priority, a value the user set wins over it, and the documentation's settings reference, rendered
from the same declarations, lists each setting once with a default of its stated type."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import references
from scrapy.settings import SETTINGS_PRIORITIES, default_settings
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robotsmeta.defaults import DEFAULTS, SCRAPY_SETTINGS, SETTINGS, ScrapySetting, Setting
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


SETTINGS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "settings.md"


def test_the_settings_reference_lists_each_setting_once() -> None:
    """The reference page renders every setting of DEFAULTS and the Scrapy settings the
    package reads, each once, and nothing else."""
    entries = references.rendered_entries(SETTINGS_PAGE.read_text(encoding="utf-8"))
    names = Counter(name for objtype, name in entries if objtype == references.SETTING)
    assert {name for name, count in names.items() if count > 1} == set()
    assert set(names) == set(DEFAULTS) | {setting.name for setting in SCRAPY_SETTINGS}


def test_the_scrapy_settings_of_the_reference_are_scrapys_own() -> None:
    for setting in SCRAPY_SETTINGS:
        assert setting.name not in DEFAULTS
        assert hasattr(default_settings, setting.name), setting.name


# The words of a Setting.type (before any parenthesised unit), each naming what a value may be.
TYPE_WORDS: dict[str, tuple[type, ...]] = {
    "bool": (bool,),
    "int": (int,),
    "float": (float,),
    "str": (str,),
    "list of str": (list,),
    "None": (type(None),),
    "class": (type,),
    "object": (object,),
}


def types_named(type_text: str) -> tuple[type, ...]:
    """The Python types a Setting.type names: ``"float (seconds) or None"`` → (float, None)."""
    named: tuple[type, ...] = ()
    for alternative in type_text.split(" or "):
        named += TYPE_WORDS[alternative.split(" (")[0]]
    return named


def test_types_named_reads_alternatives_and_units() -> None:
    assert types_named("float (seconds) or None") == (float, type(None))
    assert types_named("str (import path) or class") == (str, type)
    with pytest.raises(KeyError):
        types_named("number")


@pytest.mark.parametrize("setting", SETTINGS + SCRAPY_SETTINGS, ids=lambda setting: setting.name)
def test_a_setting_is_described_and_its_default_is_of_its_type(
    setting: Setting | ScrapySetting,
) -> None:
    """The type the reference states admits the default exactly (True is no int); a Scrapy
    setting's default is Scrapy's."""
    if isinstance(setting, Setting):
        default = setting.default
    else:
        default = getattr(default_settings, setting.name)
    assert setting.description.strip()
    assert type(default) in types_named(setting.type)


@pytest.mark.parametrize("value", [*DEFAULTS.values(), 10_000, 9_999, 'a"b', 0.5, True])
def test_the_reference_writes_a_default_as_the_python_literal_of_it(value: Any) -> None:
    written = ast.literal_eval(references.python_literal(value))
    assert (type(written), written) == (type(value), value)
