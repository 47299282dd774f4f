"""The test suite's layout: every module of the package has its unit-test module, named after
it, and no test module imports another (shared helpers live in conftest.py or plain modules).

The unit-test module of ``scrapy_robotsmeta/<module>.py`` is ``test_<module>.py``, of
``scrapy_robotsmeta/<subpackage>/<module>.py`` ``test_<subpackage>_<module>.py`` (a leading
underscore dropped), of a subpackage's ``__init__.py`` that defines something
``test_<subpackage>.py``, and of the package's own ``__init__.py`` (its public API)
``test_api.py``. Crawl-level suites, by behaviour, are ``test_crawl_<behaviour>.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import scrapy_robotsmeta

PACKAGE = Path(scrapy_robotsmeta.__file__).parent
TESTS = Path(__file__).parent

#: Modules that have no unit-test module of their own, and why.
EXEMPT = {
    "_compat.py": "shims over the Scrapy versions supported: every crawl test runs them, under "
    "the newest Scrapy and the lowest one",
    "storage/base.py": "the abstract storage interface: its contract is tested on each storage",
    "testing.py": "the test site itself, which every crawl test runs",
    "waiting.py": "the Request side of waiting, which needs a running engine: the hold and "
    "parking tests of test_crawl_robotstxt.py and test_crawl_jobdir.py crawl through it",
}


def _defines_something(module: Path) -> bool:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return any(isinstance(node, definitions) for node in tree.body)


def _package_modules() -> list[str]:
    """The package's modules, relative to it; a subpackage's ``__init__.py`` only when it
    defines something (not when it only re-exports)."""
    return sorted(
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py" or path.parent == PACKAGE or _defines_something(path)
    )


def unit_test_module(module: str) -> str:
    """``robotstxt/_matcher.py`` -> ``test_robotstxt_matcher.py``."""
    parts = module.removesuffix(".py").split("/")
    if parts == ["__init__"]:
        return "test_api.py"
    if parts[-1] == "__init__":
        parts.pop()
    return "test_" + "_".join(part.lstrip("_") for part in parts) + ".py"


def test_naming_rule() -> None:
    assert unit_test_module("__init__.py") == "test_api.py"
    assert unit_test_module("addon.py") == "test_addon.py"
    assert unit_test_module("robotstxt/__init__.py") == "test_robotstxt.py"
    assert unit_test_module("robotstxt/_matcher.py") == "test_robotstxt_matcher.py"
    assert unit_test_module("storage/memory.py") == "test_storage_memory.py"


def test_every_module_has_its_unit_test_module() -> None:
    modules = _package_modules()
    assert not set(EXEMPT) - set(modules), "an exempt module no longer exists"
    missing = {
        module: unit_test_module(module)
        for module in modules
        if module not in EXEMPT and not (TESTS / unit_test_module(module)).is_file()
    }
    assert not missing, f"modules without a unit-test module: {missing}"


def _imported_modules(tree: ast.Module) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names.append(module)
            if node.level or module == "tests":  # `from tests import test_x`, `from . import`
                names += [f"{module}.{alias.name}" for alias in node.names]
    return names


def test_no_test_module_imports_another() -> None:
    imports = {}
    for path in sorted(TESTS.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found = [
            name
            for name in _imported_modules(tree)
            if any(part.startswith("test_") for part in name.split("."))
        ]
        if found:
            imports[path.name] = found
    assert imports == {}


def _runtime_imports(module: Path) -> list[str]:
    """What *module* imports when it runs: ``if TYPE_CHECKING:`` blocks left out."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    tree.body = [
        node
        for node in tree.body
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    ]
    return _imported_modules(tree)


def _module_path(name: str) -> Path | None:
    """The file of package module *name* (dotted), if it is one of the package's."""
    parts = name.split(".")
    if parts[0] != "scrapy_robotsmeta":
        return None
    base = PACKAGE.joinpath(*parts[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def test_robotstxt_core_imports_neither_scrapy_nor_twisted() -> None:
    """The robots.txt core (``robotstxt/``) runs without a crawler: no module of it, nor any
    package module it imports, imports Scrapy or Twisted when it runs."""
    seen: set[Path] = set()
    todo = sorted((PACKAGE / "robotstxt").glob("*.py"))
    offenders = []
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in _runtime_imports(path):
            if name.split(".")[0] in ("scrapy", "twisted"):
                offenders.append(f"{path.relative_to(PACKAGE)}: {name}")
            imported = _module_path(name)
            if imported is not None and imported != PACKAGE / "__init__.py":
                todo.append(imported)
    assert offenders == []
