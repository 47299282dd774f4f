"""The evidence file and the items' evidence (``evidence.py``): one record per fetch in force
and process, written before the first reference to it; a file that cannot be written stops the
crawl at start, one that fails later costs a logged line and a stat."""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from scrapy_robotsmeta.evidence import EvidenceLog, item_evidence
from scrapy_robotsmeta.keys import EVIDENCE_META_KEY
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import Hop, from_response, stamped
from scrapy_robotsmeta.robotstxt.state import OriginState, Timing
from scrapy_robotsmeta.startup import ConfigurationError
from scrapy_robotsmeta.usage.preferences import Preferences, Statement

ORIGIN = Origin("https", "example.com", 443)
BODY = b"User-agent: *\nDisallow: /private\nAllow: /private/open\n"


def ready(at: float, state: OriginState | None = None) -> OriginState:
    """*state* after a fetch of BODY that ended at *at* (wall clock), with evidence on."""
    state = state or OriginState(ORIGIN)
    outcome = from_response(200, BODY)
    hops = (Hop("https://example.com/robots.txt", 200),)
    state.start_fetch(0.0, Timing())
    state.apply(stamped(dataclasses.replace(outcome, hops=hops), at), 0.0, Timing())
    return state


def evidence_log(path: Path) -> tuple[EvidenceLog, MemoryStatsCollector]:
    stats = MemoryStatsCollector(get_crawler())
    return EvidenceLog(str(path), stats), stats


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_a_fetch_is_recorded_once_however_many_requests_it_lets_through(tmp_path: Path) -> None:
    path = tmp_path / "evidence.jsonl"
    log, stats = evidence_log(path)
    state = ready(1.7e9)
    assert state.rules is not None
    refs = [
        log.references(state, state.rules.explain(f"https://example.com/{page}", "bot"))[
            "robots.txt"
        ]
        for page in ("a", "b", "private/open/1")
    ]
    [record] = records(path)
    assert {ref["record"] for ref in refs} == {record["record"]}
    assert refs[2]["line"] == 3
    assert stats.get_value("robotstxt/evidence/records") == 1


def test_a_refresh_is_recorded_apart_and_the_file_is_appended_to(tmp_path: Path) -> None:
    path = tmp_path / "evidence.jsonl"
    path.write_text('{"record": "of an earlier run"}\n', "utf-8")
    log, _ = evidence_log(path)
    state = ready(1.7e9)
    assert state.rules is not None
    first = log.references(state, state.rules.explain("https://example.com/", "bot"))
    ready(1.7e9 + 86400, state)
    second = log.references(state, state.rules.explain("https://example.com/", "bot"))
    earlier, *written = records(path)
    assert earlier == {"record": "of an earlier run"}
    ids = [refs["robots.txt"]["record"] for refs in (first, second)]
    assert [record["record"] for record in written] == ids
    assert ids[0] != ids[1]


def test_a_state_fetched_without_evidence_is_referenced_without_a_record(tmp_path: Path) -> None:
    path = tmp_path / "evidence.jsonl"
    log, _ = evidence_log(path)
    state = OriginState(ORIGIN)
    state.start_fetch(0.0, Timing())
    state.apply(from_response(200, BODY), 0.0, Timing())
    assert state.rules is not None
    refs = log.references(state, state.rules.explain("https://example.com/private/open", "bot"))
    assert (refs["robots.txt"]["record"], refs["robots.txt"]["line"]) == (None, 3)
    assert path.read_text("utf-8") == ""


def test_a_file_that_cannot_be_opened_stops_the_crawl_naming_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"ROBOTSTXT_EVIDENCE_FILE = .*cannot be opened"):
        evidence_log(tmp_path / "no such directory" / "evidence.jsonl")


def test_a_write_that_fails_later_is_logged_once_and_counted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "evidence.jsonl"
    log, stats = evidence_log(path)
    path.unlink()
    path.mkdir()  # the file became a directory: every write fails
    state = ready(1.7e9)
    assert state.rules is not None
    with caplog.at_level(logging.ERROR):
        for at in (1.7e9, 1.8e9):
            ready(at, state)
            log.references(state, state.rules.explain("https://example.com/", "bot"))
    assert stats.get_value("robotstxt/evidence/write_errors") == 2
    assert caplog.text.count("Cannot write the evidence of https://example.com") == 1


def test_an_item_names_each_statement_once_with_the_keys_it_set() -> None:
    """Every source that spoke is listed in the order read, with the value it gave each key
    (the most restrictive of them is the key's value: draft-ietf-aipref-vocab §5.1)."""
    signal = "robots.txt line 2: Content-Signal: search=yes, ai-train=no"
    usage = Preferences(
        (
            Statement("search", True, signal),
            Statement("ai_train", False, signal),
            Statement("ai_train", True, "header Content-Usage: train-ai=y"),
        )
    )
    reference = {"record": "0123456789abcdef", "group": "*", "line": 4, "rule": "Allow: /"}
    request = Request("https://example.com/", meta={EVIDENCE_META_KEY: {"robots.txt": reference}})
    response = HtmlResponse("https://example.com/", body=b"", request=request)
    assert item_evidence(response, usage) == {
        "robots.txt": reference,
        "usage": [
            {"source": signal, "uses": {"search": True, "ai_train": False}},
            {"source": "header Content-Usage: train-ai=y", "uses": {"ai_train": True}},
        ],
    }


def test_an_item_whose_url_robots_txt_did_not_check_says_so() -> None:
    request = Request("https://example.com/", meta={"dont_obey_robotstxt": True})
    response = HtmlResponse("https://example.com/", body=b"", request=request)
    assert item_evidence(response, Preferences()) == {"robots.txt": None, "usage": []}
