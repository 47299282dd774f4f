"""The examples of the documentation's pages on robots.txt, getting started and the command are
true of the code: their doctests pass, their command outputs are those of real runs, and their
settings, log lines and tables say what the package does."""

from __future__ import annotations

import ast
import doctest
import re
from pathlib import Path
from typing import Any

import pytest
from scrapy.settings import default_settings
from scrapy.utils.misc import load_object

import scrapy_robotsmeta
from scrapy_robotsmeta.defaults import DEFAULTS
from scrapy_robotsmeta.useragent import crawler_name, product_token
from tests.docs_outputs import OUTPUTS, command_outputs, demo_outputs, normalised

DOCS = Path(__file__).resolve().parents[1] / "docs"
PACKAGE = Path(scrapy_robotsmeta.__file__).parent
#: The pages these tests hold to the code.
PAGES = [
    DOCS / "getting-started.md",
    *(
        DOCS / "topics" / f"{name}.md"
        for name in (
            "robotstxt",
            "caching",
            "storage",
            "fetch",
            "crawl-delay",
            "command",
            "survival",
            "limits",
        )
    ),
]
FENCE = re.compile(r"^(\s*)```(\{doctest\}|python)\n(.*?)^\1```$", re.DOTALL | re.MULTILINE)
INCLUDED_OUTPUT = re.compile(r"```\{literalinclude\} (?:\.\./)*_outputs/([\w.-]+)")
REGENERATE = "if the change is meant, write the outputs again: python -m tests.docs_outputs"


def _blocks(page: Path, kind: str) -> list[str]:
    """The fenced blocks of *kind* (``{doctest}`` or ``python``) of *page*, unindented."""
    blocks = []
    for indent, found_kind, body in FENCE.findall(page.read_text("utf-8")):
        if found_kind == kind:
            blocks.append("".join(line[len(indent) :] + "\n" for line in body.splitlines()))
    return blocks


# -- doctests --------------------------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.stem)
def test_doctests_of_the_page_pass(page: Path) -> None:
    """Run as Sphinx's doctest builder runs them: a page's blocks in order, sharing one
    namespace."""
    globs: dict[str, Any] = {}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    parser = doctest.DocTestParser()
    for number, block in enumerate(_blocks(page, "{doctest}"), 1):
        test = parser.get_doctest(block, globs, f"{page.name} block {number}", str(page), 0)
        runner.run(test, clear_globs=False)
        globs = test.globs  # a DocTest runs in a copy of the namespace it is given
    assert runner.failures == 0, f"{runner.failures} failing example(s) in {page.name}"


def test_the_pages_have_doctests() -> None:
    assert _blocks(DOCS / "topics" / "robotstxt.md", "{doctest}")
    assert _blocks(DOCS / "topics" / "crawl-delay.md", "{doctest}")


# -- outputs of real runs --------------------------------------------------------------------


def _check(fresh: dict[str, str]) -> None:
    for name, text in fresh.items():
        written = (OUTPUTS / name).read_text("utf-8")
        assert normalised(text) == normalised(written), f"{name} changed; {REGENERATE}"


@pytest.mark.newest_scrapy  # the example project needs Scrapy 2.14
def test_the_demos_outputs_are_those_of_a_real_run(demo_run: tuple[Path, str]) -> None:
    _check(demo_outputs(*demo_run))


@pytest.mark.newest_scrapy
def test_the_commands_outputs_are_those_of_a_real_run(demo: dict[str, str]) -> None:
    """``scrapy robots`` against the demo site, the settings in force, the mistakes caught at
    start, and a spider asking the middleware to explain URLs."""
    _check(command_outputs(demo))


def test_every_output_is_shown_and_every_shown_output_exists() -> None:
    included = {
        name for page in PAGES for name in INCLUDED_OUTPUT.findall(page.read_text("utf-8"))
    }
    assert included == {path.name for path in OUTPUTS.iterdir()}


# -- settings, tables and log lines ----------------------------------------------------------


def _assigned(block: str) -> dict[str, Any]:
    """The settings a ``settings.py`` block assigns, by name."""
    tree = ast.parse(block)
    return {
        target.id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.stem)
def test_settings_blocks_name_settings_and_objects_that_exist(page: Path) -> None:
    """Every upper-case name a ``python`` block assigns is a setting of the package or of
    Scrapy, and every import path it names loads."""
    for block in _blocks(page, "python"):
        for name, value in _assigned(block).items():
            if not name.isupper():
                continue
            assert name in DEFAULTS or hasattr(default_settings, name), name
            for path in value if isinstance(value, (dict, list)) else [value]:
                if isinstance(path, str) and path.startswith("scrapy_robotsmeta."):
                    load_object(path)


def _table(page: Path, header: str) -> list[list[str]]:
    """The rows of the table of *page* whose header line is *header*, cells stripped."""
    lines = page.read_text("utf-8").splitlines()
    start = lines.index(header) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


def _code(cell: str) -> str:
    """The first code span of a table cell."""
    found = re.search(r"`([^`]+)`", cell)
    assert found, cell
    return found.group(1)


def test_crawler_names_and_product_tokens_are_those_the_package_takes() -> None:
    page = DOCS / "topics" / "robotstxt.md"
    rows = _table(page, "| User-Agent | crawler name | product token |")
    assert len(rows) == 5
    for user_agent, name, token in rows:
        assert crawler_name(_code(user_agent)) == _code(name)
        expected = "" if token.startswith("none") else _code(token)
        assert product_token(_code(user_agent)) == expected


#: A ``%`` field of a log message: ``%s``, ``%(origin)s``, ``%.0f``…
FIELD = re.compile(r"%(?:\(\w+\))?[-#0 +]?\d*(?:\.\d+)?[sdrgf]")


def _message_patterns() -> list[re.Pattern[str]]:
    """Every message the package's code may log: each string (its ``%`` fields, and an
    f-string's fields, as wildcards) with a few words of text of its own, as a pattern."""
    patterns = []
    for module in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(module.read_text("utf-8"))):
            pieces: list[str | None]  # the text, None for each field
            if isinstance(node, ast.JoinedStr):
                pieces = [
                    v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else None
                    for v in node.values
                ]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                pieces = [
                    None if FIELD.fullmatch(text) else text
                    for text in re.split(f"({FIELD.pattern})", node.value)
                ]
            else:
                continue
            if sum(len(piece.split()) for piece in pieces if piece) >= 3:
                parts = (".*" if piece is None else re.escape(piece) for piece in pieces)
                patterns.append(re.compile("".join(parts), re.DOTALL))
    return patterns


LOG_TABLE = "| level | when | example |"


def test_log_lines_shown_are_messages_the_package_writes() -> None:
    """Each example of a log table matches a message of the code, its fields aside; a message
    that changes fails here."""
    patterns = _message_patterns()
    tables = {
        page.name: _table(page, LOG_TABLE) for page in PAGES if LOG_TABLE in page.read_text()
    }
    assert len(tables["robotstxt.md"]) > 20
    assert len(tables["getting-started.md"]) == 3
    for rows in tables.values():
        for level, _, example in rows:
            assert level in {"DEBUG", "INFO", "WARNING", "ERROR"}
            for message in re.findall(r"`([^`]+)`", example):
                assert any(p.fullmatch(message) for p in patterns), message
