"""The demo, run as ``make demo`` runs it: its summary and both of its exports."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

# The example project is written for the Scrapy of today (AsyncCrawlerProcess, 2.14+).
pytestmark = pytest.mark.newest_scrapy

RUN_DEMO = Path(__file__).resolve().parents[1] / "example_project" / "run_demo.py"


class Demo:
    def __init__(self, output: Path, summary: str) -> None:
        self.summary_lines = [line.rstrip() for line in summary.splitlines()]
        self.items = [
            json.loads(line) for line in (output / "items.jsonl").read_text("utf-8").splitlines()
        ]
        with (output / "items.csv").open(encoding="utf-8", newline="") as rows:
            self.rows = list(csv.DictReader(rows))
        self.log = (output / "crawl.log").read_text("utf-8")

    def item(self, path: str) -> Any:
        [item] = [item for item in self.items if urlsplit(item["url"]).path == path]
        return item

    def row(self, path: str) -> dict[str, str]:
        [row] = [row for row in self.rows if urlsplit(row["url"]).path == path]
        return row


@pytest.fixture(scope="module")
def demo(demo_run: tuple[Path, str]) -> Demo:
    return Demo(*demo_run)


def test_summary_counts(demo: Demo) -> None:
    for expected in (
        "Pages fetched               21",
        "Refused by robots.txt       3  (2 by its rules, 1 because it was unavailable)",
        "Dropped by meta nofollow    1",
        "Items                       21",
        "  robots.index              true 19, false 2",
        "  robots.snippet            true 20, false 1",
        "  robots.max_image_preview  large 19, standard 1, none 1",
        "  robots.ai_train           null 12, false 6, true 3",
        "  robots.tdm_reservation    null 17, true 2, false 2",
    ):
        assert expected in demo.summary_lines


def test_summary_tells_how_robots_txt_applied_per_origin(demo: Demo) -> None:
    per_origin = {line.split()[0]: line for line in demo.summary_lines if "127.0.0.1" in line}
    assert per_origin["main"].endswith("  200: rules (HTTP 200)")
    assert per_origin["signals"].endswith("  200: rules (HTTP 200)")
    assert per_origin["no_robots"].endswith("  404: allow all (HTTP 404)")
    assert per_origin["flaky"].endswith("  503 503 503 200: rules (HTTP 200)")
    assert per_origin["down"].endswith(": unavailable, complete disallow (gave up after HTTP 503)")
    assert per_origin["publisher"].endswith("  200: rules (HTTP 200)")


def test_summary_tells_what_each_origins_tdmrep_json_is(demo: Demo) -> None:
    start = demo.summary_lines.index("tdmrep.json per origin (TDMRep; answers: what the file is)")
    files = dict(line.split(None, 1) for line in demo.summary_lines[start + 1 : start + 7])
    assert files["publisher"] == "200: read"
    assert files["main"] == "404: absent"
    # Fetched with robots.txt, each of its tries: the given-up origin kept none.
    assert files["down"].endswith(": none kept: robots.txt never answered")


def test_jsonl_items_carry_the_tdmrep_reservation_of_the_publisher(demo: Demo) -> None:
    """TDMRep: the first matching rule of tdmrep.json, a meta superseding it; a reservation
    refuses AI training and input, not search; other origins have no file."""
    publisher = demo.item("/journals/article.html")["robots"]
    policy_url = demo.item("/journals/article.html")["url"].replace(
        "/journals/article.html", "/tdm-policy.json"
    )
    assert (publisher["tdm_reservation"], publisher["tdm_policy"]) == (True, policy_url)
    assert (publisher["ai_train"], publisher["ai_input"], publisher["search"]) == (
        False,
        False,
        None,
    )
    open_access = demo.item("/open-access/article.html")["robots"]
    assert (open_access["tdm_reservation"], open_access["ai_train"]) == (False, True)
    licensed = demo.item("/journals/licensed.html")["robots"]
    assert (licensed["tdm_reservation"], licensed["tdm_policy"]) == (False, None)
    about = demo.item("/about.html")["robots"]
    assert (about["tdm_reservation"], about["tdm_file"]) == (None, "absent")
    row = demo.row("/journals/article.html")
    assert (row["robots.tdm_reservation"], row["robots.tdm_file"]) == ("True", "read")


def test_pages_refused_or_dropped_are_not_exported(demo: Demo) -> None:
    paths = sorted(urlsplit(item["url"]).path for item in demo.items)
    assert paths.count("/") == 5  # main, signals, no_robots, flaky, publisher; not down
    for path in ("/drafts/wip.html", "/admin/", "/hidden.html"):
        assert path not in paths
    assert "/drafts/published.html" in paths


def test_jsonl_items_carry_usage_preferences_from_each_source(demo: Demo) -> None:
    """robots.txt Content-Signal and Content-Usage, the Content-Usage header and the noai /
    noimageai metas; where several speak, the most restrictive wins."""
    signals = demo.item("/open/data.html")["robots"]  # Content-Signal no, Content-Usage y
    assert (signals["search"], signals["ai_train"], signals["ai_input"]) == (True, False, None)
    gallery = demo.item("/gallery.html")["robots"]
    assert (gallery["ai_train"], gallery["ai_train_images"]) == (False, False)
    licensed = demo.item("/licensed.html")["robots"]
    assert (licensed["search"], licensed["ai_train"], licensed["ai_use"]) == (True, True, None)
    noai = demo.item("/noai.html")["robots"]
    assert (noai["ai_train"], noai["ai_train_images"], noai["search"]) == (False, False, None)
    assert demo.item("/about.html")["robots"]["ai_train"] is None


def test_jsonl_items_carry_the_directives(demo: Demo) -> None:
    assert demo.item("/noindex.html")["robots"]["index"] is False
    assert demo.item("/nofollow.html")["robots"]["follow"] is False
    bot_meta = demo.item("/bot-meta.html")["robots"]
    assert (bot_meta["snippet"], bot_meta["max_snippet"]) == (False, 0)
    assert bot_meta["max_image_preview"] == "none"
    assert bot_meta["index"] is True  # the otherbot meta is not for us
    event = demo.item("/event.html")["robots"]
    assert event["unavailable_after"] == "2026-12-31T23:59:59+00:00"
    assert event["max_image_preview"] == "standard"
    pdf = demo.item("/docs/report.pdf")
    assert pdf["title"] is None
    assert (pdf["robots"]["index"], pdf["robots"]["archive"]) == (False, False)
    assert pdf["robots"]["snippet"] is True  # otherbot's nosnippet is not for us


def test_csv_has_one_readable_column_per_directive(demo: Demo) -> None:
    first = demo.items[0]
    assert list(first) == ["url", "title", "robots"]
    columns = ["url", "title", *(f"robots.{key}" for key in first["robots"])]
    assert list(demo.rows[0]) == columns
    assert len(demo.rows) == len(demo.items)
    pdf = demo.row("/docs/report.pdf")
    assert (pdf["robots.index"], pdf["robots.archive"], pdf["title"]) == ("False", "False", "")
    event = demo.row("/event.html")
    assert event["robots.unavailable_after"] == "2026-12-31T23:59:59+00:00"
    assert demo.row("/bot-meta.html")["robots.max_image_preview"] == "none"


def test_log_has_a_line_per_refusal(demo: Demo) -> None:
    assert "Forbidden by robots.txt" in demo.log
    assert "by Disallow: /drafts/ (line 7, group examplebot)" in demo.log
