"""CPU cost of robots handling in a real crawl, option by option, against no robots handling.

    .venv/bin/python -m benchmarks.crawl [--rounds 4] [--origins 8] [--pages 125]
        [--modes none,addon,rel_nofollow,crawl_delay,drop_noindex,all,redis,builtin]
        [--spiders linkextractor,regex]

A server process serves a multi-origin site (benchmarks/_site.py); each crawl runs in a fresh
crawler process. Two spiders, each following every link and yielding one item per page:

- ``linkextractor``: a CrawlSpider with a LinkExtractor rule, which parses every page (so the
  meta part reads an lxml tree that is already built);
- ``regex``: a Spider reading hrefs from ``response.text`` with a regular expression and
  yielding ``response.follow()`` requests, which builds no selector (so the meta part pays for
  whatever parsing it needs).

Each round crawls the site once per spider and mode, the order rotating from round to round:

- ``none``: ROBOTSTXT_OBEY = False, no meta handling (what the other modes are compared to);
- ``addon``: this package through its add-on with its defaults (robots.txt and page metas,
  MemoryStorage);
- ``rel_nofollow``, ``crawl_delay``, ``drop_noindex``: the add-on with one option on
  (ROBOTSMETA_OBEY_REL_NOFOLLOW, ROBOTSTXT_OBEY_CRAWL_DELAY, ROBOTSMETA_DROP_NOINDEX);
- ``all``: the add-on with the three options on;
- ``redis``: the add-on's defaults with ``ROBOTSTXT_STORAGE = RedisStorage``, against a
  redis-server of the benchmark's own on a free 127.0.0.1 port, emptied before each crawl so
  that every crawl fetches and publishes its robots.txt files as the first worker of a fleet
  does;
- ``builtin``: Scrapy's RobotsTxtMiddleware (Protego), ROBOTSTXT_OBEY = True;
- ``robotstxt`` (on request): the add-on's robots.txt part alone;
- ``evidence`` (on request): the add-on's defaults with ``ROBOTSTXT_EVIDENCE_FILE`` set (a
  temporary file): a record per origin, a reference and the usage statements in every item;
  the crawl also reports the file's bytes per record and the JSON bytes of the items'
  ``evidence`` key per item (measured after the crawl, from the items kept during it).
- ``tdmrep`` (on request): the add-on's defaults with ``ROBOTSMETA_TDMREP = True``: each
  origin's tdmrep.json fetched with its robots.txt, its rules matched for every page, the
  TDMRep headers and metas read.
- ``tdmrep_evidence`` (on request): both of the last two, as an AI-dataset crawl that keeps
  its evidence would run.

The site's robots.txt files have no Crawl-delay, as most have: ``crawl_delay`` then costs its
checks only (a delay, where a site asks for one, spaces that origin's requests: wall time, not
CPU). CPU is the crawler process' user + system time from spider_opened to spider_closed; the
shares of robots handling are sampled inside each run (benchmarks/_sampler.py).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks._common import machine, median, pin, table
from benchmarks._ownredis import missing, own_redis
from benchmarks._results import write_figures
from benchmarks._sampler import META, ROBOTSTXT, Sampler

# Each option of the add-on, by the mode that turns it on alone.
OPTIONS = {
    "rel_nofollow": "ROBOTSMETA_OBEY_REL_NOFOLLOW",
    "crawl_delay": "ROBOTSTXT_OBEY_CRAWL_DELAY",
    "drop_noindex": "ROBOTSMETA_DROP_NOINDEX",
}
MODES = ("none", "addon", *OPTIONS, "all", "redis", "builtin")
SPIDERS = ("linkextractor", "regex")
# Targets of CPU per page against ``none``.
TARGETS = {
    "addon": 1.03,
    **dict.fromkeys(OPTIONS, 1.03),
    "all": 1.03,
    "redis": 1.05,
    "evidence": 1.05,
    "tdmrep": 1.05,
    "tdmrep_evidence": 1.05,
}
SETTINGS: dict[str, Any] = {
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "USER_AGENT": "BenchBot/1.0 (+http://127.0.0.1/bot)",
}
ADDON: dict[str, Any] = {"ROBOTSTXT_OBEY": True, "ADDONS": {"scrapy_robotsmeta.Addon": 0}}
MODE_SETTINGS: dict[str, dict[str, Any]] = {
    "none": {"ROBOTSTXT_OBEY": False},
    "addon": ADDON,
    **{mode: {**ADDON, setting: True} for mode, setting in OPTIONS.items()},
    "all": {**ADDON, **dict.fromkeys(OPTIONS.values(), True)},
    "redis": {
        **ADDON,
        "ROBOTSTXT_STORAGE": "scrapy_robotsmeta.storage.RedisStorage",
        # ROBOTSTXT_REDIS_URL: added by run(), the URL of the benchmark's own redis-server.
    },
    "builtin": {"ROBOTSTXT_OBEY": True},
    # Not run by default: the record of what was in force (ROBOTSTXT_EVIDENCE_FILE: added by
    # worker(), a temporary file).
    "evidence": ADDON,
    # Not run by default: the add-on's robots.txt part alone, to tell the two parts' costs apart.
    "robotstxt": {
        "ROBOTSTXT_OBEY": True,
        "DOWNLOADER_MIDDLEWARES": {
            "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
            "scrapy_robotsmeta.RobotsTxtMiddleware": 100,
        },
    },
    # Not run by default either: TDMRep consulted (as a purpose of AI use would have it).
    "tdmrep": {**ADDON, "ROBOTSMETA_TDMREP": True},
    "tdmrep_evidence": {**ADDON, "ROBOTSMETA_TDMREP": True},
}
# The modes whose crawl keeps the record of what was in force (in a temporary file).
EVIDENCE_MODES = ("evidence", "tdmrep_evidence")
OTHER_MODES = [mode for mode in MODE_SETTINGS if mode != "none"]
# What each crawl reports from its stats beside its CPU.
COUNTS = {
    "forbidden": "robotstxt/forbidden",
    "tdmrep_files_read": "robotsmeta/tdmrep/file/read",
    "rel_nofollow_dropped": "robotsmeta/request_dropped/rel_nofollow",
    "noindex_dropped": "robotsmeta/item_dropped/noindex",
    "redis_errors": "robotstxt/redis/errors",
    "redis_published": "robotstxt/redis/published",
}


# What an ``evidence`` crawl reports of its record's size (see evidence_bytes).
EVIDENCE = ("evidence_records", "evidence_bytes_per_record", "evidence_bytes_per_item")


def spider_class(spider: str) -> type:
    """The spider class named *spider*; it counts its pages in the stats (bench/pages), since
    ``drop_noindex`` drops some of its items."""
    import re  # noqa: PLC0415 (the driver process never loads Scrapy)

    from scrapy import Spider  # noqa: PLC0415
    from scrapy.linkextractors import LinkExtractor  # noqa: PLC0415
    from scrapy.spiders import CrawlSpider, Rule  # noqa: PLC0415

    def item(spider: Spider, response: Any, title: str | None) -> dict[str, Any]:
        assert spider.crawler.stats is not None
        spider.crawler.stats.inc_value("bench/pages")
        return {"url": response.url, "title": title}

    class LinkExtractorSpider(CrawlSpider):
        name = "site"
        rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)

        def parse_page(self, response: Any) -> Any:
            yield item(self, response, response.css("title::text").get())

    href = re.compile(r"""<a\s[^>]*?href=["']([^"'#]*)""", re.IGNORECASE)
    title = re.compile(r"<title>([^<]*)")

    class RegexSpider(Spider):
        name = "site"

        def parse(self, response: Any) -> Any:
            text = response.text
            found = title.search(text)
            yield item(self, response, found and found.group(1))
            for url in href.findall(text):
                yield response.follow(url)

    return {"linkextractor": LinkExtractorSpider, "regex": RegexSpider}[spider]


def worker(mode: str, spider: str, redis_url: str, origins: list[str]) -> None:
    """Crawl the site in this process and print what it cost, as one JSON line."""
    from scrapy import signals  # noqa: PLC0415 (the driver process never loads Scrapy)
    from scrapy.crawler import CrawlerProcess  # noqa: PLC0415

    pin(-1)
    spans: dict[str, float] = {}
    # Only RedisStorage uses redis-py in these crawls: its client's work counts as ours even
    # when the event loop, not our code, runs it (a reply read by asyncio's stream protocol).
    sampler = Sampler(libraries=("redis", "asyncio.streams") if mode == "redis" else ())

    def opened() -> None:
        spans["cpu"], spans["wall"] = time.process_time(), time.perf_counter()
        sampler.start()

    def closed() -> None:
        sampler.stop()
        spans["cpu"] = time.process_time() - spans["cpu"]
        spans["wall"] = time.perf_counter() - spans["wall"]

    settings = {**SETTINGS, **MODE_SETTINGS[mode]}
    if mode == "redis":
        settings["ROBOTSTXT_REDIS_URL"] = redis_url
    with tempfile.TemporaryDirectory() as scratch:
        evidence_file = Path(scratch, "evidence.jsonl")
        if mode in EVIDENCE_MODES:
            settings["ROBOTSTXT_EVIDENCE_FILE"] = str(evidence_file)
        items: list[Any] = []
        process = CrawlerProcess(settings)
        crawler = process.create_crawler(spider_class(spider))
        crawler.signals.connect(opened, signals.spider_opened)
        crawler.signals.connect(closed, signals.spider_closed)

        def scraped(item: Any) -> None:
            items.append(item)

        crawler.signals.connect(scraped, signals.item_scraped, weak=False)
        process.crawl(crawler, start_urls=[origin + "/" for origin in origins])
        process.start()
        assert crawler.stats is not None
        stats = crawler.stats.get_stats()
        result = {
            **spans,
            "pages": stats.get("bench/pages", 0),
            "errors": stats.get("log_count/ERROR", 0),
            **{name: stats.get(key, 0) for name, key in COUNTS.items()},
            **{part: sampler.share(part) for part in (ROBOTSTXT, META)},
            **(evidence_bytes(evidence_file, items) if mode in EVIDENCE_MODES else {}),
        }
    print(json.dumps(result))


def evidence_bytes(path: Path, items: list[Any]) -> dict[str, float]:
    """The evidence file's bytes per record, and the bytes the ``evidence`` key adds to an
    item's JSON (as the jsonlines exporter writes it: ``, "evidence": {…}``)."""
    records = len(path.read_bytes().splitlines())
    per_item = [
        len(', "evidence": ') + len(json.dumps(item["robots"]["evidence"])) for item in items
    ]
    return {
        "evidence_records": records,
        "evidence_bytes_per_record": path.stat().st_size / max(records, 1),
        "evidence_bytes_per_item": median(per_item) if per_item else 0.0,
    }


def run(mode: str, spider: str, origins: list[str], redis_url: str = "") -> dict[str, float]:
    if mode == "redis":
        flush(redis_url)
    command = [
        *(sys.executable, "-m", "benchmarks.crawl", "--worker", mode, "--spiders", spider),
        *(redis_url, *origins),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    if result["errors"] or result["redis_errors"]:
        sys.exit(f"{mode} crawl ({spider}) logged errors:\n{done.stderr[-3000:]}")
    if mode == "redis" and not result["redis_published"]:
        sys.exit(f"redis crawl published nothing to Redis:\n{done.stderr[-3000:]}")
    return result


def flush(url: str) -> None:
    """Empty the benchmark's own Redis (never the machine's: run() is given our server)."""
    import redis  # noqa: PLC0415 (an optional dependency, only for this mode)

    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()


@contextmanager
def redis_if_needed(modes: list[str]) -> Iterator[str]:
    """The URL of a redis-server of our own on a free port when a mode needs one, else ""."""
    if "redis" not in modes:
        yield ""
        return
    with own_redis() as url:
        yield url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--origins", type=int, default=8)
    parser.add_argument("--pages", type=int, default=125, help="pages per origin")
    parser.add_argument(
        "--modes", default=",".join(MODES), help="none, then any of " + ", ".join(OTHER_MODES)
    )
    parser.add_argument(
        "--spiders", default=",".join(SPIDERS), help="any of " + ", ".join(SPIDERS)
    )
    parser.add_argument(
        "--results", default="crawl", help="write benchmarks/results/NAME.json (default: crawl)"
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.worker:
        worker(args.worker, args.spiders, rest[0], rest[1:])
        return

    modes = args.modes.split(",")
    spiders = args.spiders.split(",")
    unknown = {*modes} - MODE_SETTINGS.keys() | {*spiders} - {*SPIDERS}
    if unknown:
        parser.error(f"unknown mode or spider: {', '.join(sorted(unknown))}")
    if modes[0] != "none":
        parser.error("--modes must start with none, which the others are compared to")
    if "redis" in modes and (reason := missing()) is not None:
        print(f"No redis mode: {reason}.\n")
        modes.remove("redis")
    command = [sys.executable, "-m", "benchmarks._site", str(args.origins), str(args.pages)]
    site = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    crawls = [(spider, mode) for spider in spiders for mode in modes]
    results: dict[str, dict[str, list[dict[str, float]]]] = {
        spider: {mode: [] for mode in modes} for spider in spiders
    }
    try:
        assert site.stdout is not None
        origins: list[str] = json.loads(site.stdout.readline())
        print(f"{len(origins)} origins, {args.pages + 1} pages each; {machine()}\n")
        with redis_if_needed(modes) as redis_url:
            run("none", spiders[0], origins)  # warm-up: file caches, the server's connections
            for round_ in range(args.rounds):
                turn = round_ % len(crawls)
                for spider, mode in crawls[turn:] + crawls[:turn]:
                    results[spider][mode].append(run(mode, spider, origins, redis_url))
                print(f"round {round_ + 1} done", flush=True)
    finally:
        site.terminate()
        site.wait()
    report(results, args)


def cpu_per_1000(run: dict[str, float]) -> float:
    return run["cpu"] / run["pages"] * 1000


def figures_of(runs: list[dict[str, float]], base: list[dict[str, float]]) -> dict[str, Any]:
    """One mode's figures over its rounds; *base*: the ``none`` runs of the same rounds."""
    ratios = [
        cpu_per_1000(mine) / cpu_per_1000(theirs) for mine, theirs in zip(runs, base, strict=True)
    ]
    shares = {part: median(run[part] for run in runs) for part in (ROBOTSTXT, META)}
    return {
        "cpu_s_per_1000_pages": median(cpu_per_1000(run) for run in runs),
        "pages_per_s": median(run["pages"] / run["wall"] for run in runs),
        "pages": median(run["pages"] for run in runs),
        "cpu_ratio_to_none_per_round": ratios,
        "cpu_ratio_to_none": median(ratios),
        "robotstxt_share": shares[ROBOTSTXT],
        "meta_share": shares[META],
        "ratio_from_shares": 1 / (1 - sum(shares.values())),
        **{name: median(run[name] for run in runs) for name in COUNTS if "redis" not in name},
        **{name: median(run[name] for run in runs) for name in EVIDENCE if name in runs[0]},
    }


HEADER = (
    "mode",
    "CPU s / 1000 pages",
    "pages/s",
    "pages",
    "CPU ratio to none, per round",
    "median",
    "robots.txt share",
    "meta share",
    "ratio from shares",
    "dropped: rel=nofollow requests / noindex items",
    "target",
)


def row(mode: str, figures: dict[str, Any]) -> tuple[str, ...]:
    return (
        mode,
        f"{figures['cpu_s_per_1000_pages']:.2f}",
        f"{figures['pages_per_s']:.0f}",
        f"{figures['pages']:.0f}",
        " ".join(f"{ratio:.2f}" for ratio in figures["cpu_ratio_to_none_per_round"]),
        f"{figures['cpu_ratio_to_none']:.3f}",
        f"{figures['robotstxt_share']:.2%}",
        f"{figures['meta_share']:.2%}",
        f"{figures['ratio_from_shares']:.3f}",
        f"{figures['rel_nofollow_dropped']:.0f} / {figures['noindex_dropped']:.0f}",
        f"≤ {TARGETS[mode]:.2f}" if mode in TARGETS else "",
    )


def report(
    results: dict[str, dict[str, list[dict[str, float]]]], args: argparse.Namespace
) -> None:
    figures: dict[str, Any] = {
        "machine": machine(),
        "rounds": args.rounds,
        "origins": args.origins,
        "pages_per_origin": args.pages + 1,
        "targets": TARGETS,
        "spiders": {},
    }
    for spider, by_mode in results.items():
        mine = figures["spiders"][spider] = {
            mode: figures_of(runs, by_mode["none"]) for mode, runs in by_mode.items()
        }
        print(
            f"\nCPU of the crawler process, {spider} spider (targets: ≤ 1.03 x none, redis ≤ 1.05)"
        )
        print(table(HEADER, [row(mode, mode_figures) for mode, mode_figures in mine.items()]))
    print(
        "\nThe CPU ratio compares separate runs: it carries the machine's run-to-run noise "
        "(see the spread of its rounds). The shares are sampled inside each run "
        "(benchmarks/_sampler.py), and their ratio, 1 / (1 - shares), is the cost of robots "
        "handling with that noise cancelled."
    )
    for spider, by_mode in figures["spiders"].items():
        for mode in (m for m in EVIDENCE_MODES if m in by_mode):
            evidence = by_mode[mode]
            print(
                f"\n{mode} ({spider}): {evidence['evidence_records']:.0f} records, "
                f"{evidence['evidence_bytes_per_record']:.0f} bytes each; "
                f"{evidence['evidence_bytes_per_item']:.0f} bytes per item (median)"
            )
    write_figures(args.results, figures)


if __name__ == "__main__":
    main()
