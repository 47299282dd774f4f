"""The session check that every stat the test crawls set is in the stats reference
(tests/conftest.py): a key traced back to the name or template keys.py declares, the keys of a
subprocess crawl read from its stats dump, and a run failed by an undeclared key."""

from __future__ import annotations

import os
import pprint
import subprocess
import sys
from pathlib import Path

import pytest
from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.statscollectors import MemoryStatsCollector
from twisted.internet.error import ConnectionRefusedError as Refused

from scrapy_robotsmeta import keys
from scrapy_robotsmeta.robotstxt.status import Status
from tests.conftest import _templates, dumped_stats, stat_template, undeclared_stats

ROOT = Path(__file__).resolve().parents[1]


def test_a_declared_name_is_its_own_template() -> None:
    assert stat_template("robotstxt/held") == "robotstxt/held"
    assert stat_template("robotsmeta/item_dropped/noindex") == "robotsmeta/item_dropped/noindex"


def test_a_status_count_is_traced_to_its_files_template() -> None:
    assert stat_template("robotstxt/response_status_count/503") == (
        "robotstxt/response_status_count/{status}"
    )
    assert stat_template("robotsmeta/tdmrep/response_status_count/404") == (
        "robotsmeta/tdmrep/response_status_count/{status}"
    )
    assert stat_template("robotstxt/response_status_count/ok") is None


def test_an_exception_count_is_traced_as_the_fetcher_names_it() -> None:
    key = keys.ROBOTSTXT_FILE_STATS.exception_count.format(exception=Refused)
    assert stat_template(key) == "robotstxt/exception_count/{exception}"


def test_an_outcome_is_one_of_the_statuses() -> None:
    for status in (Status.RULES, Status.ALLOW_ALL, Status.UNAVAILABLE):
        assert stat_template(f"robotstxt/outcome/{status.value}") == "robotstxt/outcome/{kind}"
    assert stat_template("robotstxt/outcome/sometimes") is None


def test_an_item_dropped_for_a_use_names_a_use_as_items_write_it() -> None:
    assert stat_template("robotsmeta/item_dropped/ai_train") == "robotsmeta/item_dropped/{use}"
    # The setting's spelling (ROBOTSMETA_PURPOSE = ["ai-train"]) is not the stat's.
    assert stat_template("robotsmeta/item_dropped/ai-train") is None


def test_every_templates_variable_part_has_a_pattern() -> None:
    """A template with a part the check cannot read would trace no key to it."""
    assert set(_templates()) == {name for name in keys.STATS if "{" in name}


def test_only_the_packages_undeclared_keys_are_reported() -> None:
    seen = ["robotstxt/held", "robotstxt/made_up", "robotsmeta/outcome", "downloader/x", "y"]
    assert undeclared_stats(seen) == ["robotsmeta/outcome", "robotstxt/made_up"]


def test_the_keys_of_a_scrapy_stats_dump_are_read() -> None:
    """As a subprocess crawl logs them when it closes (STATS_DUMP: the stats dict as pprint
    writes it), long keys and keys holding quotes included, up to the next log line."""
    stats = MemoryStatsCollector(Crawler(Spider, {}))
    exception = keys.ROBOTSTXT_FILE_STATS.exception_count.format(exception=Refused)
    long = keys.ROBOTSMETA_ITEM_DROPPED_TDMREP_UNREADABLE
    for key in ("robotstxt/held", exception, "downloader/request_count", long):
        stats.inc_value(key)
    log = (
        "2026-01-01 10:00:00 [scrapy.statscollectors] INFO: Dumping Scrapy stats:\n"
        f"{pprint.pformat(stats.get_stats())}\n"
        "2026-01-01 10:00:00 [scrapy.core.engine] INFO: Spider closed (finished)\n"
        "'robotstxt/forbidden': 1,\n"
    )
    assert dumped_stats(log) == {"robotstxt/held", exception, long}


def test_a_run_setting_an_undeclared_stat_fails(tmp_path: Path) -> None:
    """A session whose tests all pass fails when a stat it set is not declared, and names it
    (and no declared one)."""
    (tmp_path / "test_sets.py").write_text(
        "from scrapy import Spider\n"
        "from scrapy.crawler import Crawler\n"
        "from scrapy.statscollectors import MemoryStatsCollector\n"
        "\n"
        "def test_sets() -> None:\n"
        "    stats = MemoryStatsCollector(Crawler(Spider, {}))\n"
        '    stats.inc_value("robotstxt/held")\n'
        '    stats.inc_value("robotstxt/not_declared")\n'
    )
    run = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider"),
            *("--basetemp", str(tmp_path / "basetemp"), "test_sets.py"),
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == pytest.ExitCode.TESTS_FAILED, run.stdout + run.stderr
    assert "1 passed" in run.stdout
    [report] = [line for line in run.stdout.splitlines() if "keys.py does not declare" in line]
    assert report.endswith(": robotstxt/not_declared")
