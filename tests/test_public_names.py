"""The command, the demo and the benchmarks read the package through its public names only,
so that its internals can change without them: no private attribute of another object, no
private module or name imported from the package."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
READERS = sorted(
    [
        *(ROOT / "scrapy_robotsmeta" / "commands").glob("*.py"),
        *(ROOT / "example_project").rglob("*.py"),
        *(ROOT / "benchmarks").glob("*.py"),
    ]
)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(source: str) -> list[str]:
    """Each use of a private name in *source*: ``obj._field`` on anything but the class's
    own ``self``/``cls``, and ``from scrapy_robotsmeta… import`` of a private module or name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "scrapy_robotsmeta"
        ):
            names = [*(node.module or "").split("."), *(alias.name for alias in node.names)]
            if any(_private(name) for name in names):
                found.append(f"line {node.lineno}: from {node.module} import …")
    return found


def test_the_check_finds_private_uses() -> None:
    source = (
        "from scrapy_robotsmeta.robotstxt._parser import parse_file\n"
        "from scrapy_robotsmeta.robotstxt import _path_of\n"
        "state._fetching\n"
        "self._own\n"
    )
    assert private_uses(source) == [
        "line 1: from scrapy_robotsmeta.robotstxt._parser import …",
        "line 2: from scrapy_robotsmeta.robotstxt import …",
        "line 3: state._fetching",
    ]


@pytest.mark.parametrize("path", READERS, ids=lambda path: str(path.relative_to(ROOT)))
def test_reads_only_public_names(path: Path) -> None:
    assert private_uses(path.read_text(encoding="utf-8")) == []
