"""A new user's mistakes, made in a real project and run with ``scrapy crawl``: a warning
for what is harmless, one ERROR line and exit status 1 for what the package refuses, and
robots.txt obeyed whenever the crawl runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import scrapy

ENV = {k: v for k, v in os.environ.items() if not k.startswith("SCRAPY_")}
BUILTIN_PATH = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
SETTINGS = """\
BOT_NAME = "mistakes"
SPIDER_MODULES = ["mistakes.spiders"]
ADDONS = {"scrapy_robotsmeta.Addon": 0}
ROBOTSTXT_OBEY = True
USER_AGENT = "ExampleBot/1.0"
TELNETCONSOLE_ENABLED = False
"""
SPIDER = """\
import scrapy


class Pages(scrapy.Spider):
    name = "pages"
    custom_settings = {custom_settings}
    # The second page is disallowed by the site's robots.txt for examplebot.
    start_urls = ["{main}/bot-meta.html", "{main}/drafts/wip.html"]

    def parse(self, response):
        yield {{"url": response.url}}
"""


def make_project(root: Path, main: str, settings: str = "", custom_settings: str = "{}") -> Path:
    (root / "scrapy.cfg").write_text("[settings]\ndefault = mistakes.settings\n")
    package = root / "mistakes"
    (package / "spiders").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "settings.py").write_text(SETTINGS + settings)
    (package / "spiders" / "__init__.py").write_text("")
    spider = SPIDER.format(main=main, custom_settings=custom_settings)
    (package / "spiders" / "pages.py").write_text(spider)
    return root


def scrapy_crawl(project: Path, *args: str) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "pages", *args],
        cwd=project,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, (done.stdout + done.stderr).splitlines()


def logged(lines: list[str], *levels: str) -> list[str]:
    """The log lines at one of *levels*, and any traceback."""
    return [
        line
        for line in lines
        if any(f" {level}: " in line for level in levels) or "Traceback" in line
    ]


def assert_obeyed(status: int, lines: list[str]) -> None:
    """The crawl ran and robots.txt refused its disallowed page."""
    assert status == 0
    assert any("'robotstxt/forbidden': 1" in line for line in lines)


def assert_refused(
    status: int, lines: list[str], *expected: str, while_building: bool = False
) -> None:
    """Exit status 1, nothing crawled, and the first error is one ERROR line saying what to
    change (warnings of Scrapy's own may come before). A traceback may follow it only where
    Twisted prints one itself (under Scrapy's CrawlerProcess), once; *while_building*: the
    refusal came while Scrapy built the components (a crawl enabled by hand, a storage's own
    refusal), after which Scrapy 2.13 fails to close the half-built engine and prints that
    too."""
    assert status == 1
    errors = logged(lines, "ERROR", "CRITICAL")
    assert "[scrapy_robotsmeta.startup] ERROR: Crawl not started: " in errors[0]
    for text in expected:
        assert text in errors[0]
    if not (while_building and scrapy.version_info < (2, 14)):
        assert sum("Traceback" in line for line in lines) <= 1
    assert not any("Crawled (" in line for line in lines)


@pytest.mark.parametrize("where", ["project", "custom_settings", "command line"])
def test_a_misspelt_setting_gets_one_warning_with_the_closest_name(
    demo: dict[str, str], tmp_path: Path, where: str
) -> None:
    typo = "ROBOTSTXT_UNAVAILABLE_TIMOUT"
    project = make_project(
        tmp_path,
        demo["main"],
        settings=f"{typo} = 1\n" if where == "project" else "",
        custom_settings=f"{{{typo!r}: 1}}" if where == "custom_settings" else "{}",
    )
    args = ["-s", f"{typo}=1"] if where == "command line" else []
    status, lines = scrapy_crawl(project, *args)
    assert_obeyed(status, lines)
    [warning] = [line for line in logged(lines, "WARNING") if typo in line]
    assert warning.endswith(
        f"WARNING: Unknown setting {typo}: neither scrapy-robotsmeta nor Scrapy reads it "
        "(did you mean ROBOTSTXT_UNAVAILABLE_TIMEOUT?)"
    )


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("ROBOTSMETA_PURPOSES", "ROBOTSMETA_PURPOSE"),
        ("ROBOTSMETA_DROP_NOINDX", "ROBOTSMETA_DROP_NOINDEX"),
    ],
)
def test_a_misspelt_setting_that_drops_more_stops_the_crawl(
    demo: dict[str, str], tmp_path: Path, typo: str, meant: str
) -> None:
    """Running without it would keep the items the user meant to drop."""
    project = make_project(tmp_path, demo["main"], settings=f"{typo} = ['ai-train']\n")
    assert_refused(*scrapy_crawl(project), typo, f"rename it {meant}")


def test_robotstxt_parser_gets_a_warning_that_it_is_not_used(
    demo: dict[str, str], tmp_path: Path
) -> None:
    project = make_project(tmp_path, demo["main"])
    status, lines = scrapy_crawl(
        project, "-s", "ROBOTSTXT_PARSER=scrapy.robotstxt.RerpRobotParser"
    )
    assert_obeyed(status, lines)
    [warning] = [line for line in logged(lines, "WARNING") if "ROBOTSTXT_PARSER" in line]
    assert "scrapy-robotsmeta does not use it" in warning


def test_addons_naming_the_module_says_what_to_write(demo: dict[str, str], tmp_path: Path) -> None:
    project = make_project(tmp_path, demo["main"])
    status, lines = scrapy_crawl(project, "-s", 'ADDONS={"scrapy_robotsmeta.addon": 0}')
    assert_refused(status, lines, 'write ADDONS = {"scrapy_robotsmeta.Addon": 0}')


def test_the_builtin_left_beside_ours_by_hand_stops_the_crawl(
    demo: dict[str, str], tmp_path: Path
) -> None:
    """Both would run: the built-in would refuse what RFC 9309 allows (an error page read as
    rules)."""
    by_hand = (
        'ADDONS = {}\nDOWNLOADER_MIDDLEWARES = {"scrapy_robotsmeta.RobotsTxtMiddleware": 100}\n'
    )
    project = make_project(tmp_path, demo["main"], settings=by_hand)
    status, lines = scrapy_crawl(project)
    expected = f'add "{BUILTIN_PATH}": None to DOWNLOADER_MIDDLEWARES'
    assert_refused(status, lines, expected, while_building=True)


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ("ROBOTSTXT_STORAGE=scrapy_robotsmeta.storage.MemoryStorag", "ROBOTSTXT_STORAGE = "),
        ("ROBOTSMETA_PURPOSE=ai-trian", "ROBOTSMETA_PURPOSE: unknown use 'ai-trian'"),
        ("TWISTED_REACTOR_ENABLED=False", "remove TWISTED_REACTOR_ENABLED = False"),
    ],
)
def test_a_refused_configuration_is_one_error_line(
    demo: dict[str, str], tmp_path: Path, setting: str, expected: str
) -> None:
    project = make_project(tmp_path, demo["main"])
    assert_refused(*scrapy_crawl(project, "-s", setting), expected)


def test_redis_storage_on_another_reactor_is_said_first_in_one_line(
    demo: dict[str, str], tmp_path: Path
) -> None:
    """Under a reactor other than asyncio's, Scrapy runs the crawl in a CrawlerProcess, whose
    failed start Twisted prints as a traceback: once, after the ERROR line."""
    pytest.importorskip("redis")
    project = make_project(tmp_path, demo["main"])
    status, lines = scrapy_crawl(
        project,
        "-s",
        "ROBOTSTXT_STORAGE=scrapy_robotsmeta.storage.RedisStorage",
        "-s",
        "TWISTED_REACTOR=twisted.internet.epollreactor.EPollReactor",
    )
    assert_refused(
        status, lines, "RedisStorage needs Scrapy's asyncio reactor", while_building=True
    )


def test_an_evidence_file_that_cannot_be_written_stops_the_crawl(
    demo: dict[str, str], tmp_path: Path
) -> None:
    """Items without the evidence the user asked for would be worth less than no crawl."""
    project = make_project(tmp_path, demo["main"])
    missing = tmp_path / "no such directory" / "evidence.jsonl"
    status, lines = scrapy_crawl(project, "-s", f"ROBOTSTXT_EVIDENCE_FILE={missing}")
    expected = f"ROBOTSTXT_EVIDENCE_FILE = '{missing}' cannot be opened for appending"
    assert_refused(
        status, lines, expected, "name a file in a writable directory", while_building=True
    )
