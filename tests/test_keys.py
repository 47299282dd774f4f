"""The names users see (``keys.py``): every crawl stat the package sets is named there and only
there, each with its description, and the documentation's references (rendered from those
declarations) list every stat and request meta key once. That the crawls set no stat missing
from them is checked over the whole test session (tests/conftest.py, tests/test_docs_stats.py)."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest
import references

import scrapy_robotsmeta
from scrapy_robotsmeta import keys

PACKAGE = Path(scrapy_robotsmeta.__file__).parent
REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference"
STAT_PREFIXES = ("robotstxt/", "robotsmeta/")
STATS_CALLS = {"inc_value", "set_value", "max_value", "min_value"}


def _literal_text(node: ast.expr) -> str | None:
    """The text a string literal starts with (an f-string's first literal part), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        first = node.values[0] if node.values else None
        return str(first.value) if isinstance(first, ast.Constant) else ""
    return None


def _stat_literals(source: str) -> dict[int, str]:
    """Where *source* writes a stat's name itself, by line: a string that starts as one does,
    or a literal handed to a stats collector as the name."""
    found = {}
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in STATS_CALLS
            and node.args
            and _literal_text(node.args[0]) is not None
        ):
            found[node.lineno] = ast.unparse(node)
        elif isinstance(node, (ast.Constant, ast.JoinedStr)):
            text = _literal_text(node)
            if text is not None and text.startswith(STAT_PREFIXES):
                found.setdefault(node.lineno, ast.unparse(node))
    return found


def test_the_check_finds_stat_names_written_out() -> None:
    source = (
        'stats.inc_value("robotstxt/held")\n'
        'self.stats.max_value(f"{prefix}/max", 1)\n'
        'NAME = f"robotsmeta/item_dropped/{why}"\n'
        "stats.set_value(NAME, 1)\n"
        'logger.info("counted in robotstxt/held")\n'
    )
    assert sorted(_stat_literals(source)) == [1, 2, 3]


def test_no_stat_name_is_written_outside_keys_py() -> None:
    """A stat's name written at its use site would be a second place to keep in step."""
    found = {
        str(path.relative_to(PACKAGE)): literals
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PACKAGE / "keys.py"
        and (literals := _stat_literals(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def declared_stats() -> set[str]:
    """Every stat name (or template) that a constant of keys.py holds."""
    names: set[str] = set()
    for value in vars(keys).values():
        if isinstance(value, str) and value.startswith(STAT_PREFIXES):
            names.add(value)
        elif isinstance(value, keys.FileStats):
            names.update(vars(value).values())
    return names


def declared_meta_keys() -> set[str]:
    """Every other name that a string constant of keys.py holds: the request meta keys."""
    strings = {
        value for name, value in vars(keys).items() if name.isupper() and isinstance(value, str)
    }
    return strings - declared_stats()


def test_declared_stats_are_distinct_and_well_formed() -> None:
    """No two constants name one stat; every name is a path of lower-case words."""
    values = [v for v in vars(keys).values() if isinstance(v, str) and v.startswith(STAT_PREFIXES)]
    for files in (keys.ROBOTSTXT_FILE_STATS, keys.TDMREP_FILE_STATS):
        values += vars(files).values()
    assert len(values) == len(set(values))
    malformed = [v for v in values if not re.fullmatch(r"[a-z_]+(/([a-z_]+|\{[a-z_]+\}))+", v)]
    assert malformed == []


def test_every_stat_of_keys_py_is_declared_with_a_description() -> None:
    """A stat held by a constant but missing from keys.STATS would be missing from the
    reference; an entry of keys.STATS that no constant holds, a stat nothing can set."""
    assert declared_stats() == set(keys.STATS)
    assert [name for name, entry in keys.STATS.items() if not entry.description.strip()] == []


def test_every_meta_key_of_keys_py_is_declared_with_a_description() -> None:
    assert declared_meta_keys() == set(keys.META_KEYS)
    assert [name for name, entry in keys.META_KEYS.items() if not entry.description.strip()] == []


@pytest.mark.parametrize(
    ("page", "objtype", "registry"),
    [
        ("stats.md", references.STAT, keys.STATS),
        ("meta-keys.md", references.REQMETA, keys.META_KEYS),
    ],
)
def test_the_reference_lists_each_declared_name_once(
    page: str, objtype: str, registry: dict[str, keys.Described]
) -> None:
    entries = references.rendered_entries((REFERENCE / page).read_text(encoding="utf-8"))
    names = Counter(name for kind, name in entries if kind == objtype)
    assert {name for name, count in names.items() if count > 1} == set()
    assert set(names) == set(registry)
