"""The distributions as the package index would get them: built from the sdist, as ``pip``
and ``python -m build`` build a wheel, and checked as the index checks and renders them.

Each test reads what one build made (a fixture of the module), once per run, on the newest
versions only (``make test`` leaves the ``release`` marker out of the lowest run).
"""

from __future__ import annotations

import configparser
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.release,
    pytest.mark.skipif(not (ROOT / ".git").exists(), reason="builds from a git checkout"),
]
NAME = "scrapy_robotsmeta"


def _run(*command: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command], cwd=cwd, capture_output=True, text=True, check=True
    )


def _tracked(folder: str) -> set[str]:
    """The files git tracks under *folder*, as paths relative to the repository."""
    return set(_run("git", "ls-files", folder).stdout.split())


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--outdir", out, ROOT)
    return out


@pytest.fixture(scope="module")
def wheel(dist: Path) -> zipfile.ZipFile:
    (path,) = dist.glob("*.whl")
    return zipfile.ZipFile(path)


def _dist_info(wheel: zipfile.ZipFile, name: str) -> str:
    (path,) = (
        n
        for n in wheel.namelist()
        if n.split("/")[0].endswith(".dist-info") and n.endswith(f"/{name}")
    )
    return wheel.read(path).decode()


def test_twine_check_passes(dist: Path) -> None:
    """``twine check --strict``: the metadata is complete and the README renders as the
    package index would render it (Markdown, no warning)."""
    result = _run(sys.executable, "-m", "twine", "check", "--strict", *sorted(dist.iterdir()))
    assert result.stdout.count("PASSED") == 2, result.stdout


def test_wheel_holds_the_package_its_metadata_and_nothing_else(wheel: zipfile.ZipFile) -> None:
    """The package's modules and ``py.typed``; in ``.dist-info`` the metadata, entry points
    and licence; no tests, benchmarks or example project."""
    package = {n for n in _tracked(NAME) if n.endswith(".py") or n.endswith("py.typed")}
    names = set(wheel.namelist())
    assert {n for n in names if n.startswith(f"{NAME}/")} == package
    info = {n.split("/", 1)[1] for n in names if not n.startswith(f"{NAME}/")}
    assert info == {
        "METADATA",
        "WHEEL",
        "RECORD",
        "entry_points.txt",
        "top_level.txt",
        "licenses/LICENSE",
    }


def test_wheel_registers_the_robots_command(wheel: zipfile.ZipFile) -> None:
    """Scrapy finds ``scrapy robots`` through the ``scrapy.commands`` entry point group."""
    entry_points = configparser.ConfigParser()
    entry_points.read_string(_dist_info(wheel, "entry_points.txt"))
    assert dict(entry_points["scrapy.commands"]) == {
        "robots": "scrapy_robotsmeta.commands.robots:Command"
    }


def test_wheel_metadata_matches_setup_cfg(wheel: zipfile.ZipFile) -> None:
    """What ``setup.cfg`` declares reaches the index: the dependencies with their lowest
    versions, the Python versions, the licence and its file."""
    metadata = _dist_info(wheel, "METADATA")
    headers = [line.split(": ", 1) for line in metadata.split("\n\n", 1)[0].splitlines()]
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    declared = setup["options"]["install_requires"].split()
    required = [value for key, value in headers if key == "Requires-Dist" and ";" not in value]
    assert required == declared
    assert ["Requires-Python", ">=3.10"] in headers
    assert ["License", "BSD-3-Clause"] in headers
    assert ["License-File", "LICENSE"] in headers
    assert _dist_info(wheel, "LICENSE") == (ROOT / "LICENSE").read_text()


def test_sdist_holds_what_its_tests_need(dist: Path) -> None:
    """The sdist carries the package, its tests, the example project they crawl and the
    documentation whose examples they run, the licence and the changelog, so that a packager
    can run the suite from it."""
    (path,) = dist.glob("*.tar.gz")
    with tarfile.open(path) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    for folder in (NAME, "tests", "example_project", "docs"):
        assert _tracked(folder) <= names, folder
    assert {"LICENSE", "CHANGELOG.md", "README.md", "setup.cfg", "pyproject.toml"} <= names


def test_scrapy_robots_help_from_a_clean_venv(wheel: zipfile.ZipFile, tmp_path: Path) -> None:
    """Installed from the wheel alone into a new virtual environment (its dependencies from
    the index), ``scrapy robots --help`` works outside any Scrapy project."""
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    _run(python, "-m", "pip", "install", "--quiet", wheel.filename or "", cwd=tmp_path)
    result = _run(env / "bin" / "scrapy", "robots", "--help", cwd=tmp_path)
    assert "scrapy robots [options] <url>" in result.stdout
    assert "--user-agent UA" in result.stdout
