"""The names users see (``keys.py``): every crawl stat the package sets is named there and only
there, and the README's stats tables list exactly those."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import scrapy_robotsmeta
from scrapy_robotsmeta import keys

PACKAGE = Path(scrapy_robotsmeta.__file__).parent
README = Path(__file__).resolve().parents[1] / "README.md"
STAT_PREFIXES = ("robotstxt/", "robotsmeta/")
STATS_CALLS = {"inc_value", "set_value", "max_value", "min_value"}
#: How the README writes each variable part of a stat's name.
README_FIELDS = {
    "status": "N",
    "exception": "<exception class>",
    "use": "<use>",
    "kind": "<kind>",
    "file_status": "<status>",
}


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
    """Every stat name of keys.py, a template's fields as the README writes them."""
    names: set[str] = set()
    for value in vars(keys).values():
        if isinstance(value, str) and value.startswith(STAT_PREFIXES):
            names.add(value)
        elif isinstance(value, keys.FileStats):
            names.update(vars(value).values())
    formatter = string.Formatter()
    return {
        name.format_map(
            {field: README_FIELDS[field] for _, field, _, _ in formatter.parse(name) if field}
        )
        for name in names
    }


def test_declared_stats_are_distinct_and_well_formed() -> None:
    """No two constants name one stat; every name is a path of lower-case words."""
    values = [v for v in vars(keys).values() if isinstance(v, str) and v.startswith(STAT_PREFIXES)]
    for files in (keys.ROBOTSTXT_FILE_STATS, keys.TDMREP_FILE_STATS):
        values += vars(files).values()
    assert len(values) == len(set(values))
    malformed = [v for v in values if not re.fullmatch(r"[a-z_]+(/([a-z_]+|\{[a-z_]+\}))+", v)]
    assert malformed == []


def readme_stats() -> set[str]:
    """The stats the README's stats tables list: each row's first cell, where ``…/name``
    stands for the cell's first name with its last part replaced."""
    documented: set[str] = set()
    for line in README.read_text(encoding="utf-8").splitlines():
        if not line.startswith(("| `robotstxt/", "| `robotsmeta/")):
            continue
        names = re.findall(r"`([^`]+)`", line.split("|")[1])
        parent = names[0].rsplit("/", 1)[0]
        for name in names:
            stat = parent + name[1:] if name.startswith("…/") else name
            assert stat not in documented, f"{stat} is in two rows"
            documented.add(stat)
    return documented


def test_readme_stats_tables_list_exactly_the_stats_of_keys_py() -> None:
    declared, documented = declared_stats(), readme_stats()
    assert declared - documented == set(), "stats missing from the README"
    assert documented - declared == set(), "README stats that the package does not set"
