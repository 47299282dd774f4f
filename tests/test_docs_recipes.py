"""The documentation's recipes, run as a reader runs them: each example project of
``docs/examples/`` copied to a directory of its own, ``scrapy crawl`` in processes of their own
(stopped with SIGINT, as Ctrl-C stops them), against sites on 127.0.0.1 and the tests' own
redis-server. What the recipe pages show of a run is compared with what this run printed, but
for ports, times and counts that change from run to run; ``UPDATE_DOCS_OUTPUTS=1`` writes this
run's instead.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f, maybe_deferred_to_future
from twisted.web import server
from twisted.web.server import NOT_DONE_YET

from scrapy_robotsmeta.parking import JOBDIR_FOLDER
from scrapy_robotsmeta.testing import (
    Answer,
    Site,
    delayed,
    html,
    links_page,
    static,
    with_headers,
)
from tests.crawl import wait_for

DOCS = Path(__file__).resolve().parents[1] / "docs"
EXAMPLES = DOCS / "examples"
#: What the recipe pages include of a run, kept as that run printed it.
OUTPUTS = EXAMPLES / "outputs"
# Settings of the environment that would reach the crawls (SCRAPY_SETTINGS_MODULE…): none.
ENV = {name: value for name, value in os.environ.items() if not name.startswith("SCRAPY_")}


def copy_project(name: str, tmp_path: Path) -> Path:
    """A copy of the example project *name*, as a reader copies it."""
    target = tmp_path / name
    shutil.copytree(EXAMPLES / name, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


class Command:
    """A command running in a process of its own, its output (stdout and stderr) in a file."""

    def __init__(self, cwd: Path, *args: str, log: str) -> None:
        self.log_path = cwd / log
        with self.log_path.open("wb") as output:
            self.process = subprocess.Popen(
                list(args),
                cwd=cwd,
                env=ENV,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
            )

    @property
    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def interrupt(self) -> None:
        """SIGINT, as Ctrl-C sends it: Scrapy's clean stop."""
        self.process.send_signal(signal.SIGINT)

    async def exit_code(self, timeout: float = 60) -> int:
        """Let the reactor (and the sites in it) run until the process ends."""
        try:
            await wait_for(lambda: self.process.poll() is not None, timeout)
        finally:
            self.kill()
        return self.process.returncode

    def kill(self) -> None:
        """End the process if it still runs (a test that failed midway leaves none behind)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


ScrapyCommand = Callable[..., Command]


@pytest.fixture
def scrapy() -> Iterator[ScrapyCommand]:
    """Start ``scrapy ARGS`` in a directory, with this interpreter's Scrapy:
    ``scrapy(cwd, *args, log=NAME)``. Whatever still runs after the test is killed."""
    started: list[Command] = []

    def start(cwd: Path, *args: str, log: str) -> Command:
        started.append(Command(cwd, sys.executable, "-m", "scrapy", *args, log=log))
        return started[-1]

    yield start
    for command in started:
        command.kill()


def jsonlines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def requested(*sites: Site) -> Counter[str]:
    """How many times each URL of *sites* was requested."""
    return Counter(site.url(path) for site in sites for _, path in site.log)


def log_lines(log: str, keep: Callable[[str], bool]) -> list[str]:
    """The lines of a Scrapy log that *keep* selects, without their time stamps."""
    stamp = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ")
    return [stamp.sub("", line) for line in log.splitlines() if keep(line)]


def stats_lines(log: str, prefixes: Iterable[str]) -> list[str]:
    """The lines of the stats Scrapy dumps at close whose name starts with one of *prefixes*."""
    dump = log.split("Dumping Scrapy stats:", 1)[1]
    return [
        line.strip()
        for line in dump.splitlines()
        if any(line.strip().startswith(f"'{prefix}") for prefix in prefixes)
    ]


def check_output(name: str, text: str, stats_vary: bool = False) -> None:
    """*text*, printed by this run, is what ``docs/examples/outputs/NAME`` shows of an earlier
    run, but for what changes from run to run (see :func:`shape`); with
    ``UPDATE_DOCS_OUTPUTS=1``, this run's becomes what it shows.

    Stats (the lines ``'name': value,``) are compared by name: each one shown is set by this
    run too. With *stats_vary*, where even which stats are set depends on the timing, they are
    not compared."""
    path = OUTPUTS / name
    if os.environ.get("UPDATE_DOCS_OUTPUTS") == "1":
        path.write_text(text, encoding="utf-8")
    shown, printed = path.read_text(encoding="utf-8"), text
    message = (
        f"{path} no longer shows what the recipe prints; rerun with UPDATE_DOCS_OUTPUTS=1 if "
        "the change is meant"
    )
    assert shape(shown) == shape(printed), message
    if not stats_vary:
        assert stat_names(shown) <= stat_names(printed), message


def shape(text: str) -> list[str]:
    """The lines of *text* but stats, in any order, without what changes from one run to the
    next: numbers (ports, times, counts), the ids of evidence records (derived from the time of
    a fetch) and the hashes in folder names (derived from a port)."""
    text = re.sub(r'"record": ?"[0-9a-f]{16}"', '"record": ID', text)
    text = re.sub(r"#[0-9a-f]{8}\b", "#HASH", text)
    lines = [line for line in text.splitlines() if not STAT_LINE.match(line)]
    return sorted(re.sub(r"\d+", "N", line) for line in lines)


#: A stat as Scrapy's stats dump shows it: ``'robotstxt/request_count': 2,``.
STAT_LINE = re.compile(r"'([^']+)': ")


def stat_names(text: str) -> set[str]:
    return {match[1] for line in text.splitlines() if (match := STAT_LINE.match(line))}


def excerpt(log: str, messages: Iterable[str], stats: Iterable[str]) -> str:
    """The lines of a Scrapy log that hold one of *messages*, then the stats it dumped at close
    whose name starts with one of *stats*."""
    lines = log_lines(log, lambda line: any(message in line for message in messages))
    return "\n".join([*lines, *stats_lines(log, stats)]) + "\n"


# --------------------------------------------------------------------------------------------
# recipes/fleet.md: a scrapy-redis fleet
# --------------------------------------------------------------------------------------------

FLEET_PAGES = 30
DISALLOW_PRIVATE = "User-agent: *\nDisallow: /private/\n"


class Gate:
    """An answer that holds every request until the test opens it, then answers with *then*;
    it notes the User-Agent of each request it held."""

    def __init__(self, then: Answer) -> None:
        self.then = then
        self.held: list[server.Request] = []
        self.opened = False

    def __call__(self, request: server.Request) -> bytes | int:
        if self.opened:
            return self.then(request)
        self.held.append(request)
        return NOT_DONE_YET

    def user_agents(self) -> list[str]:
        return [
            value.decode()
            for request in self.held
            for value in request.requestHeaders.getRawHeaders(b"user-agent", [])
        ]

    def open(self) -> None:
        self.opened = True
        for request in self.held:
            body = self.then(request)
            if not request.finished and not request._disconnected and isinstance(body, bytes):
                request.write(body)
                request.finish()


def fleet_site(site: Site, other: Site, robots: Answer) -> list[str]:
    """Pages ``/p/0`` to ``/p/29``, each answered a quarter of a second late, linking to the next
    one, to the same page of *other* and to a page *robots* (robots.txt) disallows."""
    site.add({"/robots.txt": robots})
    for i in range(FLEET_PAGES):
        links = (f"/p/{(i + 1) % FLEET_PAGES}", other.url(f"/p/{i}"), f"/private/{i}")
        page = links_page(*links, head=f"<title>Page {i}</title>")
        site.add({f"/p/{i}": delayed(0.25, page), f"/private/{i}": html("private")})
    return [site.url(f"/p/{i}") for i in range(FLEET_PAGES)]


#: The log lines of a worker that the recipe shows.
FLEET_MESSAGES = ("Received SIGINT", "Closing spider", "[scrapy_robotsmeta.storage")


def crawled(log: str) -> int:
    """How many pages a worker's log says it downloaded."""
    return len(re.findall(r"Crawled \(200\) <GET http://127\.0\.0\.1:\d+/p/", log))


@deferred_f_from_coro_f
async def test_fleet_recipe_loses_nothing_of_a_worker_stopped_midway(
    site: Site, other_site: Site, redis_url: str, tmp_path: Path, scrapy: ScrapyCommand
) -> None:
    """Two workers of the recipe's project share one crawl through Redis. While one of them
    fetches a robots.txt (held by the site), the other is stopped with SIGINT: the requests
    that waited for that robots.txt stay in Redis, and the first worker crawls them once it
    has the file, then closes on its own once idle. Every page is downloaded once, none that
    robots.txt disallows, and each origin's robots.txt once for the whole fleet (RFC 9309 §2.4:
    the cached copy is shared)."""
    project = copy_project("fleet", tmp_path)
    gate = Gate(static(DISALLOW_PRIVATE))
    first = fleet_site(site, other_site, static(DISALLOW_PRIVATE))
    second = fleet_site(other_site, site, gate)
    seeded = subprocess.run(
        ["redis-cli", "-u", redis_url, "lpush", "pages:start_urls", *first],
        capture_output=True,
        text=True,
        check=True,
    )
    assert seeded.stdout.strip() == str(FLEET_PAGES)  # redis-cli prints the list's length
    subprocess.run([sys.executable, "seed.py", redis_url, *second], cwd=project, check=True)

    def worker(number: int) -> Command:
        # The worker's number in its User-Agent tells the site who asks (the product token,
        # which robots.txt is read for, stays examplebot).
        user_agent = f"ExampleBot/1.0 (+https://example.com/bot; worker {number})"
        return scrapy(
            project,
            *("crawl", "pages", "-o", f"items-{number}.jsonl"),
            *("-s", f"REDIS_URL={redis_url}", "-s", "MAX_IDLE_TIME_BEFORE_CLOSE=2"),
            *("-s", f"USER_AGENT={user_agent}"),
            log=f"worker-{number}.log",
        )

    workers = {1: worker(1), 2: worker(2)}
    await wait_for(lambda: bool(gate.held), timeout=30)
    [fetching] = [number for number in workers if f"worker {number})" in gate.user_agents()[0]]
    kept, stopped = workers[fetching], workers[3 - fetching]
    await wait_for(lambda: crawled(stopped.log) >= 2, timeout=30)
    stopped.interrupt()
    assert await stopped.exit_code() == 0
    gate.open()
    assert await kept.exit_code() == 0

    hits = requested(site, other_site)
    pages = set(first + second)
    assert {url: count for url, count in hits.items() if url in pages} == dict.fromkeys(pages, 1)
    assert hits[site.url("/robots.txt")] == hits[other_site.url("/robots.txt")] == 1
    assert not [url for url in hits if "/private/" in url]
    kept_items = jsonlines(kept.log_path.parent / f"items-{fetching}.jsonl")
    stopped_items = jsonlines(stopped.log_path.parent / f"items-{3 - fetching}.jsonl")
    assert stopped_items
    assert sorted(item["url"] for item in kept_items + stopped_items) == sorted(pages)
    # The held robots.txt answered after the stop: its origin's pages were all the kept one's.
    assert set(second) <= {item["url"] for item in kept_items}
    assert "Closing spider (shutdown)" in stopped.log
    assert "Closing spider (finished)" in kept.log
    for name, command in (("stopped", stopped), ("kept", kept)):
        shown = excerpt(command.log, FLEET_MESSAGES, ("robotstxt/redis/", "item_scraped"))
        check_output(f"fleet-{name}.txt", shown, stats_vary=True)


# --------------------------------------------------------------------------------------------
# recipes/jobdir.md: pause and resume
# --------------------------------------------------------------------------------------------

JOBDIR_PAGES = 60
#: The log lines and stats of each run that the recipe shows.
JOBDIR_MESSAGES = (
    "Received SIGINT",
    "Closing spider",
    "Resuming crawl",
    "[scrapy_robotsmeta.downloadermiddleware] INFO",
    "[scrapy_robotsmeta.downloadermiddleware] WARNING",
)
JOBDIR_STATS = ("robotstxt/request_count", "robotstxt/parked", "robotstxt/cache/disk_hits")


def news_site(site: Site, archive: Site) -> str:
    """A home page linking to ``/a/0`` to ``/a/59``, each answered a little late and linking
    to the same page of *archive* and to a page robots.txt disallows; the home page's URL."""
    site.add({"/robots.txt": static(DISALLOW_PRIVATE)})
    site.add({"/": links_page(*(f"/a/{i}" for i in range(JOBDIR_PAGES)))})
    for i in range(JOBDIR_PAGES):
        page = links_page(archive.url(f"/b/{i}"), f"/private/{i}", head=f"<title>News {i}</title>")
        site.add({f"/a/{i}": delayed(0.2, page), f"/private/{i}": html("private")})
        archive.add({f"/b/{i}": html(f"<title>Archive {i}</title>")})
    return site.url("/")


@deferred_f_from_coro_f
async def test_jobdir_recipe_resumes_with_nothing_lost_or_fetched_twice(
    site: Site, other_site: Site, tmp_path: Path, scrapy: ScrapyCommand
) -> None:
    """The recipe's crawl, stopped with SIGINT while an origin's robots.txt is unavailable
    (RFC 9309 §2.3.1.4: its requests wait), resumed by the same command: the requests parked
    for that origin were kept in JOBDIR and are crawled once it answers; the other origin's
    robots.txt, kept there too, is not fetched again within its lifetime (RFC 9309 §2.4); every
    page is downloaded once, the start page once per run, as Scrapy's start requests are."""
    project = copy_project("project", tmp_path)
    home = news_site(site, other_site)
    other_site.add({"/robots.txt": static("unavailable", status=503)})
    command = ("crawl", "pages", "-a", f"start_url={home}", "-s", "JOBDIR=crawls/pages-1")
    jobdir = project / "crawls" / "pages-1"
    parked = jobdir / JOBDIR_FOLDER

    first = scrapy(project, *command, log="run-1.log")

    def waiting_and_midway() -> bool:
        news = [path for _, path in site.log if path.startswith("/a/")]
        return len(news) >= 6 and parked.is_dir() and any(parked.iterdir())

    await wait_for(waiting_and_midway, timeout=30)
    first.interrupt()
    assert await first.exit_code() == 0
    # What JOBDIR holds: Scrapy's files (whose insides change with Scrapy's version), and all
    # of the package's parked requests.
    kept = sorted(
        path.relative_to(project).as_posix() for path in (*jobdir.iterdir(), *parked.rglob("*"))
    )
    news_before = {path for _, path in site.log if path.startswith("/a/")}
    other_site.add({"/robots.txt": static(DISALLOW_PRIVATE)})
    second = scrapy(project, *command, log="run-2.log")
    assert await second.exit_code() == 0

    hits = requested(site, other_site)
    pages = {site.url(f"/a/{i}") for i in range(JOBDIR_PAGES)}
    pages |= {other_site.url(f"/b/{i}") for i in range(JOBDIR_PAGES)}
    assert len(news_before) < JOBDIR_PAGES  # the stop came midway
    assert {url: hits[url] for url in pages} == dict.fromkeys(pages, 1)
    assert hits[home] == 2
    assert hits[site.url("/robots.txt")] == 1
    robots_answers = [status for path, status in other_site.served if path == "/robots.txt"]
    assert robots_answers[-1] == 200
    assert set(robots_answers[:-1]) == {503}
    assert not [url for url in hits if "/private/" in url]
    exported = Counter(item["url"] for item in jsonlines(project / "items.jsonl"))
    assert exported == {**dict.fromkeys(pages, 1), home: 2}
    assert "Closing spider (shutdown)" in first.log
    assert "Closing spider (finished)" in second.log
    check_output("jobdir-kept.txt", "\n".join(kept) + "\n")
    for number, run in ((1, first), (2, second)):
        shown = excerpt(run.log, JOBDIR_MESSAGES, JOBDIR_STATS)
        check_output(f"jobdir-run-{number}.txt", shown)


# --------------------------------------------------------------------------------------------
# recipes/ai-training.md: a crawl for AI training
# --------------------------------------------------------------------------------------------

TDMREP_PATH = "/.well-known/tdmrep.json"
#: The publisher's robots.txt, whose digest docs/topics/evidence.md recomputes.
PUBLISHER_ROBOTS = "User-agent: *\nDisallow: /private/\nAllow: /open/\n"


def training_sites(blog: Site, signals: Site, publisher: Site, mirror: Site) -> str:
    """Four origins, each refusing AI training its own way somewhere; the URL of the blog's
    home page, which links to every page of them."""
    policy = publisher.url("/tdm-policy.json")
    tdmrep = [
        {"location": "/open/", "tdm-reservation": 0},
        {"location": "/", "tdm-reservation": 1, "tdm-policy": policy},
    ]
    urls = [
        *(blog.url(path) for path in ("/post/1", "/post/2", "/post/3", "/private/1")),
        signals.url("/"),
        *(publisher.url(path) for path in ("/open/article", "/journal/article")),
        mirror.url("/"),
    ]
    blog.add(
        {
            "/robots.txt": static(DISALLOW_PRIVATE),
            "/": links_page(*urls, head="<title>Blog</title>"),
            "/post/1": html("<title>Post 1</title>"),
            "/post/2": html('<title>Post 2</title><meta name="robots" content="noai">'),
            "/post/3": with_headers(
                html("<title>Post 3</title>"), ("Content-Usage", "train-ai=y")
            ),
            "/private/1": html("private"),
        }
    )
    robots = "User-agent: *\nContent-Signal: search=yes, ai-train=no\nAllow: /\n"
    signals.add({"/robots.txt": static(robots), "/": html("<title>Signals</title>")})
    publisher.add(
        {
            "/robots.txt": static(PUBLISHER_ROBOTS),
            TDMREP_PATH: static(json.dumps(tdmrep), headers={"Content-Type": "application/json"}),
            "/open/article": html("<title>Open article</title>"),
            "/journal/article": html("<title>Journal article</title>"),
        }
    )
    # No robots.txt (404: everything allowed), and a tdmrep.json that cannot be read.
    mirror.add({TDMREP_PATH: static("busy", status=503), "/": html("<title>Mirror</title>")})
    return blog.url("/")


#: The log lines and stats of the training crawl that the recipe shows.
TRAINING_MESSAGES = ("Dropping items of", "tdmrep.json of")
TRAINING_STATS = ("robotsmeta/item_dropped/", "robotsmeta/tdmrep/file/", "robotstxt/evidence/")


@deferred_f_from_coro_f
async def test_ai_training_recipe_keeps_only_what_sites_let_it_train_on(
    site: Site, other_site: Site, tmp_path: Path, scrapy: ScrapyCommand
) -> None:
    """``scrapy crawl training``: with ROBOTSMETA_PURPOSE = ["ai-train"], no item is kept of a
    page refused for training by robots.txt's Content-Signal, a meta noai, a TDMRep
    reservation (W3C TDMRep: its file's first matching rule), or whose origin's tdmrep.json
    could not be read; the rest is kept, each item with the evidence of what let it through,
    whose records are in the evidence file."""
    publisher, mirror = Site().start(), Site().start()
    try:
        project = copy_project("project", tmp_path)
        home = training_sites(site, other_site, publisher, mirror)
        crawl = scrapy(project, "crawl", "training", "-a", f"start_url={home}", log="crawl.log")
        assert await crawl.exit_code() == 0
    finally:
        await maybe_deferred_to_future(publisher.stop())
        await maybe_deferred_to_future(mirror.stop())

    items = {item["url"]: item for item in jsonlines(project / "items.jsonl")}
    kept = {site.url(path) for path in ("/", "/post/1", "/post/3")}
    assert set(items) == kept | {publisher.url("/open/article")}
    assert items[site.url("/post/3")]["robots"]["ai_train"] is True
    assert items[site.url("/post/1")]["robots"]["ai_train"] is None
    article = items[publisher.url("/open/article")]
    assert article["robots"]["tdm_reservation"] is False
    assert article["robots"]["tdm_file"] == "read"
    # The pages were downloaded all the same: the preferences are about use, not access.
    assert publisher.hits["/journal/article"] == mirror.hits["/"] == other_site.hits["/"] == 1
    assert site.hits["/private/1"] == 0
    records = {record["record"]: record for record in jsonlines(project / "evidence.jsonl")}
    assert {record["origin"] for record in records.values()} == {
        s.origin for s in (site, other_site, publisher, mirror)
    }
    for item in items.values():
        record = records[item["robots"]["evidence"]["robots.txt"]["record"]]
        assert item["url"].startswith(record["origin"] + "/")

    shown = excerpt(crawl.log, TRAINING_MESSAGES, TRAINING_STATS)
    check_output("ai-training-log.txt", shown)
    evidence = sorted((project / "evidence.jsonl").read_text(encoding="utf-8").splitlines())
    check_output("ai-training-evidence.jsonl", "\n".join(evidence) + "\n")
    check_output("ai-training-item.json", json.dumps(article, indent=2) + "\n")


# --------------------------------------------------------------------------------------------
# recipes/pipeline.md: the robots field in an item pipeline and a feed filter
# --------------------------------------------------------------------------------------------

DESCRIPTION = "A page about robots rules, long enough to be cut to the snippet its page allows."


def described(title: str, robots: str = "") -> Answer:
    """A page with *title*, a description and, when given, a meta robots of *robots*."""
    meta = f'<meta name="robots" content="{robots}">' if robots else ""
    return html(f'<title>{title}</title><meta name="description" content="{DESCRIPTION}">{meta}')


def pipeline_site(site: Site) -> str:
    """Pages whose rules the recipe's pipeline and filter read; the URL of the home page."""
    pages: dict[str, Answer] = {
        "/snippet": described("Short snippet", "max-snippet: 20"),
        "/nosnippet": described("No snippet", "nosnippet"),
        "/expired": with_headers(
            described("Expired"), ("X-Robots-Tag", "unavailable_after: 2001-01-01")
        ),
        "/until-2100": described("Until 2100", "unavailable_after: 2100-01-01"),
        "/no-training": with_headers(described("No training"), ("Content-Signal", "ai-train=no")),
        "/noai": described("No AI", "noai"),
    }
    site.add({"/robots.txt": static(DISALLOW_PRIVATE), "/": links_page(*pages), **pages})
    return site.url("/")


@deferred_f_from_coro_f
async def test_pipeline_recipe_applies_the_robots_field(
    site: Site, tmp_path: Path, scrapy: ScrapyCommand
) -> None:
    """``scrapy crawl pages`` with the recipe's pipeline and feed filter: an item whose page's
    unavailable_after date has passed is dropped, a description is cut to the page's
    max-snippet (to nothing under nosnippet: Google's robots meta specification), and the
    training feed leaves out the pages that refuse AI training."""
    project = copy_project("project", tmp_path)
    home = pipeline_site(site)
    crawl = scrapy(project, "crawl", "pages", "-a", f"start_url={home}", log="crawl.log")
    assert await crawl.exit_code() == 0

    items = {item["url"]: item for item in jsonlines(project / "items.jsonl")}
    kept = ["/", "/snippet", "/nosnippet", "/until-2100", "/no-training", "/noai"]
    assert set(items) == {site.url(path) for path in kept}
    assert site.hits["/expired"] == 1  # downloaded, and its item dropped
    assert items[site.url("/snippet")]["description"] == DESCRIPTION[:20]
    assert items[site.url("/nosnippet")]["description"] == ""
    assert items[site.url("/until-2100")]["description"] == DESCRIPTION
    trainable = [item["url"] for item in jsonlines(project / "ai-train.jsonl")]
    assert sorted(trainable) == sorted(site.url(path) for path in kept[:4])

    shown = excerpt(crawl.log, ("Dropped:", "Stored jsonlines feed"), ())
    check_output("pipeline-log.txt", shown)
    snippet = json.dumps(items[site.url("/snippet")], indent=2) + "\n"
    check_output("pipeline-item.json", snippet)
