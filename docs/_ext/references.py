"""The Markdown (MyST) of the generated references: settings, stats and request meta keys, from
the registries of ``scrapy_robotsmeta.defaults`` and ``scrapy_robotsmeta.keys``.

Kept apart from the Sphinx extension (``robotsmeta_docs``) and free of Sphinx, so that the tests
check what the pages list without building them, on every version the suite runs against.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from scrapy.settings import default_settings

from scrapy_robotsmeta import defaults, keys
from scrapy_robotsmeta.defaults import SCRAPY_SETTINGS, SETTINGS, ScrapySetting, Setting
from scrapy_robotsmeta.keys import META_KEYS, STATS, Described

#: The files the references are read from: a page rendering one is built again when they change.
SOURCES = (defaults.__file__, keys.__file__)
#: Where Scrapy documents its own settings (each under the anchor ``std-setting-NAME``).
SCRAPY_SETTINGS_PAGE = "https://docs.scrapy.org/en/latest/topics/settings.html"
#: The directives' names: each renders one group of a reference, named by its argument.
SETTINGS_DIRECTIVE = "settings-reference"
STATS_DIRECTIVE = "stats-reference"
META_KEYS_DIRECTIVE = "meta-keys-reference"
#: The object types (a directive and a role each) of the entries: ``{setting}`NAME```,
#: ``{stat}`NAME```, ``{reqmeta}`NAME``` link to them from any page.
SETTING, STAT, REQMETA = "setting", "stat", "reqmeta"


def _settings_groups() -> dict[str, tuple[Setting | ScrapySetting, ...]]:
    """The settings by group: the package's by part (their prefix), then Scrapy's."""
    return {
        "robotstxt": tuple(s for s in SETTINGS if s.name.startswith("ROBOTSTXT_")),
        "robotsmeta": tuple(s for s in SETTINGS if s.name.startswith("ROBOTSMETA_")),
        "scrapy": SCRAPY_SETTINGS,
    }


SETTINGS_GROUPS = _settings_groups()


def _groups(registry: dict[str, Described]) -> dict[str, list[str]]:
    """The names of *registry* by group, each group in the order its names were declared."""
    groups: dict[str, list[str]] = {}
    for name, entry in registry.items():
        groups.setdefault(entry.group, []).append(name)
    return groups


STATS_GROUPS = _groups(STATS)
META_KEYS_GROUPS = _groups(META_KEYS)


def python_literal(value: Any) -> str:
    """*value* as it would be written in ``settings.py``: strings in double quotes, large
    integers with ``_`` between thousands."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 10_000:
        return f"{value:_}"
    return repr(value)


def _entry(objtype: str, name: str, *lines: str) -> list[str]:
    # Four backticks: a description may hold code spans, never a fence of its own.
    return [f"````{{{objtype}}} {name}", *lines, "````", ""]


def _setting(setting: Setting | ScrapySetting) -> list[str]:
    if isinstance(setting, Setting):
        default, link = f"`{python_literal(setting.default)}`", ""
    else:
        scrapys = getattr(default_settings, setting.name)
        default = f"`{python_literal(scrapys)}` (Scrapy's)"
        link = f"{SCRAPY_SETTINGS_PAGE}#std-setting-{setting.name}"
    lines = [f"**Default:** {default} · **Type:** {setting.type}", "", setting.description]
    if link:
        lines += ["", f"Scrapy's own setting: see [its documentation]({link})."]
    return _entry(SETTING, setting.name, *lines)


def settings_markdown(group: str) -> str:
    """The entries of the settings of *group* (a key of :data:`SETTINGS_GROUPS`)."""
    lines: list[str] = []
    for setting in SETTINGS_GROUPS[group]:
        lines += _setting(setting)
    return "\n".join(lines)


def stats_markdown(group: str) -> str:
    """The entries of the stats of *group* (a key of :data:`STATS_GROUPS`)."""
    lines: list[str] = []
    for name in STATS_GROUPS[group]:
        lines += _entry(STAT, name, STATS[name].description)
    return "\n".join(lines)


def meta_keys_markdown(group: str) -> str:
    """The entries of the request meta keys of *group* (a key of :data:`META_KEYS_GROUPS`)."""
    lines: list[str] = []
    for name in META_KEYS_GROUPS[group]:
        lines += _entry(REQMETA, name, META_KEYS[name].description)
    return "\n".join(lines)


#: Each directive → (the groups it takes as argument, what renders one).
DIRECTIVES: dict[str, tuple[Mapping[str, object], Callable[[str], str]]] = {
    SETTINGS_DIRECTIVE: (SETTINGS_GROUPS, settings_markdown),
    STATS_DIRECTIVE: (STATS_GROUPS, stats_markdown),
    META_KEYS_DIRECTIVE: (META_KEYS_GROUPS, meta_keys_markdown),
}


_DIRECTIVE_LINE = re.compile(r"^```\{(?P<directive>[a-z-]+)\} (?P<group>\S+)$", re.MULTILINE)
_ENTRY_LINE = re.compile(r"^````\{(?P<objtype>[a-z]+)\} (?P<name>.+)$", re.MULTILINE)


def rendered_entries(page: str) -> list[tuple[str, str]]:
    """The entries (object type, name) that the reference directives of *page* (its Markdown)
    render, in order."""
    entries = []
    for directive in _DIRECTIVE_LINE.finditer(page):
        if directive["directive"] in DIRECTIVES:
            _, render = DIRECTIVES[directive["directive"]]
            rendered = render(directive["group"])
            entries += [
                (entry["objtype"], entry["name"]) for entry in _ENTRY_LINE.finditer(rendered)
            ]
    return entries
