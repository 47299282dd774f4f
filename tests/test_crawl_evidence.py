"""The record of what was in force, through a real crawl of the demo site with
``ROBOTSTXT_EVIDENCE_FILE`` set: from the exports alone, every item resolves to the exact
robots.txt bytes the site served (their SHA-256 recomputed here from a fresh download of the
file) and to the line that decided its URL, found here by reading the file as RFC 9309 says,
independently of the package's parser and matcher."""

from __future__ import annotations

import csv
import hashlib
import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.http import Response
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import Rule
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robotsmeta.keys import DONT_OBEY_ROBOTSTXT
from scrapy_robotsmeta.robotstxt import MAX_BYTES
from scrapy_robotsmeta.testing import Site, html, redirect, static
from tests.crawl import FollowAllSpider, ListSpider, crawl
from tests.fleet_worker import ROBOTS_TXT, Fleet

TOKEN = "examplebot"
# The demo project's own settings (example_project/robotsdemo/settings.py) that matter here.
DEMO_SETTINGS = {
    "USER_AGENT": "ExampleBot/1.0 (+https://example.com/bot)",
    "ROBOTSTXT_RETRY_DELAY": 0.2,
    "ROBOTSTXT_UNAVAILABLE_TIMEOUT": 3,
    "DOWNLOAD_DELAY": 0,
    "ROBOTSMETA_TDMREP": True,  # as the demo project sets it
}
# RFC 9309 §2.2: a line ends with CR, LF or CR LF.
_EOL = re.compile(r"\r\n|\r|\n")


class DemoSpider(FollowAllSpider):
    """As the demo project's spider: documents (the PDF) are followed too."""

    rules = (Rule(LinkExtractor(deny_extensions=()), callback="parse_page", follow=True),)


class Exports(NamedTuple):
    items: list[dict[str, Any]]
    rows: list[dict[str, str]]
    records: list[dict[str, Any]]


def download(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@deferred_f_from_coro_f
async def test_every_item_resolves_to_the_bytes_and_line_that_let_it_through(
    demo: dict[str, str], tmp_path: Path
) -> None:
    exports = await crawled(demo, tmp_path)
    by_id = {record["record"]: record for record in exports.records}
    # One record per fetch in force: the five origins that answered (down never did).
    assert len(by_id) == len(exports.records) == 5
    assert {record["origin"] for record in exports.records} == {
        demo[role] for role in ("main", "signals", "no_robots", "flaky", "publisher")
    }
    files = {record["url"]: download(record["url"]) for record in exports.records}
    paths = set()
    for item in exports.items:
        evidence = item["robots"]["evidence"]
        reference = evidence["robots.txt"]
        record = by_id[reference["record"]]
        assert urlsplit(item["url"]).netloc == urlsplit(record["origin"]).netloc
        status, body = files[record["url"]]
        assert status == record["status"]
        if record["policy"] == "allow_all":  # RFC 9309 §2.3.1.3: a 4xx, the body unread
            assert (status, record["sha256"], reference["group"]) == (404, None, None)
        else:
            assert hashlib.sha256(body[:MAX_BYTES]).hexdigest() == record["sha256"]
            assert_deciding_line(body, item["url"], reference)
            assert_usage_lines(body, evidence["usage"])
        paths.add(urlsplit(item["url"]).path)
    # The items whose URL a rule decided: by its own line, and by no line.
    published = next(i for i in exports.items if i["url"].endswith("/drafts/published.html"))
    assert published["robots"]["evidence"]["robots.txt"]["line"] == 8
    assert "/about.html" in paths
    # A tdmrep.json rule that set usage keys is named among the statements, as a line is.
    reserved = [i for i in exports.items if i["robots"].get("tdm_reservation") == 1]
    assert reserved
    for item in reserved:
        sources = [s["source"] for s in item["robots"]["evidence"]["usage"]]
        assert any(source.startswith("tdmrep.json") for source in sources), sources
    # The CSV export carries the same evidence, as JSON in one column.
    assert [json.loads(row["robots.evidence"]) for row in exports.rows] == [
        item["robots"]["evidence"] for item in exports.items
    ]


async def crawled(demo: dict[str, str], tmp_path: Path) -> Exports:
    records_file = tmp_path / "evidence.jsonl"
    settings = {
        **DEMO_SETTINGS,
        "ROBOTSTXT_EVIDENCE_FILE": str(records_file),
        "FEEDS": {
            str(tmp_path / "items.jsonl"): {"format": "jsonlines"},
            str(tmp_path / "items.csv"): {"format": "csv"},
        },
    }
    result = await crawl([f"{demo['main']}/"], settings, DemoSpider)
    assert result.stat("robotstxt/given_up") == 1  # the down origin
    items = read_jsonl(tmp_path / "items.jsonl")
    assert len(items) == len(result.items) == 21
    with (tmp_path / "items.csv").open(encoding="utf-8", newline="") as rows:
        return Exports(items, list(csv.DictReader(rows)), read_jsonl(records_file))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def assert_deciding_line(body: bytes, url: str, reference: dict[str, Any]) -> None:
    """The reference names the group that applies to the crawler and the rule that decides
    the URL's path, by the line it is on in the served file."""
    lines = _EOL.split(body.decode("utf-8-sig"))
    agents, rules = group_for(lines, TOKEN)
    assert reference["group"] == " ".join(agents)
    line = deciding_line(rules, urlsplit(url).path or "/")
    assert reference["line"] == line
    if line is not None:
        assert value_of(lines[line - 1]) == reference["rule"]


def assert_usage_lines(body: bytes, usage: list[dict[str, Any]]) -> None:
    """Each robots.txt statement names the served line it was read from."""
    lines = _EOL.split(body.decode("utf-8-sig"))
    for statement in usage:
        found = re.fullmatch(r"robots\.txt line (\d+): (.*)", statement["source"])
        if found is not None:
            assert lines[int(found.group(1)) - 1].strip() == found.group(2)


def value_of(line: str) -> str:
    """A line without its comment and outer blanks, its field spelt as its kind is."""
    key, _, value = line.split("#", 1)[0].strip().partition(":")
    return f"{key.strip().capitalize()}: {value.strip()}"


def group_for(lines: list[str], token: str) -> tuple[list[str], list[tuple[bool, str, int]]]:
    """RFC 9309 §2.2.1: the group naming *token*, else the ``*`` one; its agents as written
    and its rules with their line numbers."""
    groups: list[tuple[list[str], list[tuple[bool, str, int]]]] = []
    in_agents = False
    for number, line in enumerate(lines, 1):
        key, _, value = line.split("#", 1)[0].partition(":")
        key, value = key.strip().lower(), value.strip()
        if key == "user-agent":
            if not in_agents:
                groups.append(([], []))
                in_agents = True
            groups[-1][0].append(value.lower())
        elif key in ("allow", "disallow") and groups:
            in_agents = False
            if value:
                groups[-1][1].append((key == "allow", value, number))
    named = [g for g in groups if token in g[0]] or [g for g in groups if "*" in g[0]]
    return named[0]


def deciding_line(rules: list[tuple[bool, str, int]], path: str) -> int | None:
    """RFC 9309 §2.2.2: the longest matching rule decides; allow wins a tie."""
    matching = [
        (len(pattern), allow, -number, number)
        for allow, pattern, number in rules
        if re.match(re.escape(pattern).replace(r"\*", ".*").replace(r"\$", "$"), path)
    ]
    return max(matching)[3] if matching else None


@deferred_f_from_coro_f
async def test_a_redirected_request_carries_the_evidence_of_its_own_url(
    site: Site, tmp_path: Path
) -> None:
    """The redirect target is checked on its own (RFC 9309 §2.2.2 applies to each URL): its
    item names the rule that let the target through, not the one of the first URL."""
    site.add(
        {
            "/robots.txt": static(b"User-agent: *\nAllow: /old\nAllow: /new\nDisallow: /\n"),
            "/old": redirect("/new"),
            "/new": html("<p>new</p>"),
        }
    )
    settings = {"ROBOTSTXT_EVIDENCE_FILE": str(tmp_path / "evidence.jsonl")}
    result = await crawl([site.url("/old")], settings)
    [item] = result.items
    assert item["robots"]["evidence"]["robots.txt"]["line"] == 3
    assert item["robots"]["evidence"]["robots.txt"]["rule"] == "Allow: /new"


class CopyingSpider(ListSpider):
    """Follows its first page's link to an exempt URL with that page's meta, as spiders that
    pass ``meta=response.meta`` on do."""

    def parse_page(self, response: Response) -> Any:
        yield from super().parse_page(response)
        if not response.meta.get(DONT_OBEY_ROBOTSTXT):
            meta = {**response.meta, DONT_OBEY_ROBOTSTXT: True}
            yield Request(response.urljoin("/exempt"), self.parse_page, meta=meta)


@deferred_f_from_coro_f
async def test_an_exempt_request_with_copied_meta_says_robots_txt_was_not_checked(
    site: Site, tmp_path: Path
) -> None:
    site.add(
        {
            "/robots.txt": static(b"User-agent: *\nAllow: /\n"),
            "/": html("<p>home</p>"),
            "/exempt": html("<p>exempt</p>"),
        }
    )
    settings = {"ROBOTSTXT_EVIDENCE_FILE": str(tmp_path / "evidence.jsonl")}
    result = await crawl([site.url("/")], settings, CopyingSpider)
    evidence = {item["url"]: item["robots"]["evidence"]["robots.txt"] for item in result.items}
    assert evidence[site.url("/")]["line"] == 2
    assert evidence[site.url("/exempt")] is None


def test_in_a_fleet_each_worker_records_the_one_fetch_it_used_under_one_id(
    tmp_path: Path, redis_url: str
) -> None:
    """RedisStorage: each origin's robots.txt is fetched once for the fleet; every worker that
    crawled one of its pages has its record, adopted from Redis or fetched itself, under the
    same id and digest, so each worker's file answers for the pages that worker crawled."""
    with Fleet(tmp_path, redis_url) as fleet:
        origins = fleet.start_site(2, 30, hold=False, outage=False)
        workers = ("w1", "w2")
        # Each worker its own start URLs, half of each origin's pages: from one list, the first
        # worker to read it could take them all.
        fleet.start_each_with_own_urls(
            {
                name: [f"{origin}/p/{i}" for i in range(at, 30, 2) for origin in origins]
                for at, name in enumerate(workers)
            },
            {
                name: {"ROBOTSTXT_EVIDENCE_FILE": str(tmp_path / f"evidence-{name}.jsonl")}
                for name in workers
            },
            DOWNLOAD_DELAY=0.2,
        )
        fleet.finish(timeout=40)
        # A worker's pages are those it exported: one it dequeued may have been parked, and
        # crawled by the other worker.
        crawled = {
            name: {
                origin
                for item in read_jsonl(tmp_path / f"items-{name}.jsonl")
                for origin in origins
                if item["url"].startswith(f"{origin}/")
            }
            for name in workers
        }
        robots_hits = [hit for hit in fleet.hits() if hit.path == "/robots.txt"]
    assert sorted(hit.origin for hit in robots_hits) == sorted(origins)
    assert crawled["w1"] & crawled["w2"], "both workers should share an origin"
    ids: dict[str, set[str]] = {origin: set() for origin in origins}
    for name in workers:
        records = read_jsonl(tmp_path / f"evidence-{name}.jsonl")
        assert sorted(record["origin"] for record in records) == sorted(crawled[name])
        for record in records:
            assert record["sha256"] == hashlib.sha256(ROBOTS_TXT).hexdigest()
            ids[record["origin"]].add(record["record"])
    assert all(len(found) == 1 for found in ids.values())
