"""CPU cost of robots handling in a real crawl, against no robots handling and Scrapy's own.

    .venv/bin/python -m benchmarks.crawl [--rounds 4] [--origins 8] [--pages 250]
        [--modes none,addon,redis,builtin]

A server process serves a multi-origin site (benchmarks/_site.py); each crawl runs in a fresh
crawler process, a CrawlSpider following every link. Each round crawls the site once per
mode, the order rotating from round to round:

- ``none``: ROBOTSTXT_OBEY = False, no meta handling (what the other modes are compared to);
- ``addon``: this package through its add-on (robots.txt and page metas), the default
  storage (MemoryStorage);
- ``redis``: the same with ``ROBOTSTXT_STORAGE = RedisStorage``, against a redis-server of the
  benchmark's own on a free 127.0.0.1 port, emptied before each crawl so that every crawl
  fetches and publishes its robots.txt files as the first worker of a fleet does;
- ``builtin``: Scrapy's RobotsTxtMiddleware (Protego), ROBOTSTXT_OBEY = True;
- ``robotstxt`` (on request): the add-on's robots.txt part alone.

CPU is the crawler process' user + system time from spider_opened to spider_closed; the
shares of robots handling are sampled inside each run (benchmarks/_sampler.py).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks._common import machine, median, pin, table
from benchmarks._ownredis import missing, own_redis
from benchmarks._sampler import META, ROBOTSTXT, Sampler

MODES = ("none", "addon", "redis", "builtin")
# Targets of CPU per page against ``none``.
TARGETS = {"addon": 1.03, "redis": 1.05}
RESULTS = Path(__file__).resolve().parent / "results" / "crawl.json"
SETTINGS: dict[str, Any] = {
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "USER_AGENT": "BenchBot/1.0 (+http://127.0.0.1/bot)",
}
MODE_SETTINGS: dict[str, dict[str, Any]] = {
    "none": {"ROBOTSTXT_OBEY": False},
    "addon": {"ROBOTSTXT_OBEY": True, "ADDONS": {"scrapy_robotsmeta.Addon": 0}},
    "redis": {
        "ROBOTSTXT_OBEY": True,
        "ADDONS": {"scrapy_robotsmeta.Addon": 0},
        "ROBOTSTXT_STORAGE": "scrapy_robotsmeta.storage.RedisStorage",
        # ROBOTSTXT_REDIS_URL: added by run(), the URL of the benchmark's own redis-server.
    },
    "builtin": {"ROBOTSTXT_OBEY": True},
    # Not run by default: the add-on's robots.txt part alone, to tell the two parts' costs apart.
    "robotstxt": {
        "ROBOTSTXT_OBEY": True,
        "DOWNLOADER_MIDDLEWARES": {
            "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
            "scrapy_robotsmeta.RobotsTxtMiddleware": 100,
        },
    },
}


def worker(mode: str, redis_url: str, origins: list[str]) -> None:
    """Crawl the site in this process and print what it cost, as one JSON line."""
    from scrapy import signals  # noqa: PLC0415 (the driver process never loads Scrapy)
    from scrapy.crawler import CrawlerProcess  # noqa: PLC0415
    from scrapy.linkextractors import LinkExtractor  # noqa: PLC0415
    from scrapy.spiders import CrawlSpider, Rule  # noqa: PLC0415

    pin(-1)

    class SiteSpider(CrawlSpider):
        name = "site"
        rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)

        def parse_page(self, response: Any) -> Any:
            yield {"url": response.url, "title": response.css("title::text").get()}

    spans: dict[str, float] = {}
    # Only RedisStorage uses redis-py in these crawls: its client's work counts as ours even
    # when the event loop, not our code, runs it (a reply read by asyncio's stream protocol).
    sampler = Sampler(libraries=("/redis/", "/asyncio/streams.py") if mode == "redis" else ())

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
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(SiteSpider)
    crawler.signals.connect(opened, signals.spider_opened)
    crawler.signals.connect(closed, signals.spider_closed)
    process.crawl(crawler, start_urls=[origin + "/" for origin in origins])
    process.start()
    assert crawler.stats is not None
    stats = crawler.stats.get_stats()
    result = {
        **spans,
        "pages": stats.get("item_scraped_count", 0),
        "errors": stats.get("log_count/ERROR", 0),
        "forbidden": stats.get("robotstxt/forbidden", 0),
        "redis_errors": stats.get("robotstxt/redis/errors", 0),
        "redis_published": stats.get("robotstxt/redis/published", 0),
        **{part: sampler.share(part) for part in (ROBOTSTXT, META)},
    }
    print(json.dumps(result))


def run(mode: str, origins: list[str], redis_url: str = "") -> dict[str, float]:
    if mode == "redis":
        flush(redis_url)
    command = [sys.executable, "-m", "benchmarks.crawl", "--worker", mode, redis_url, *origins]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    if result["errors"] or result["redis_errors"]:
        sys.exit(f"{mode} crawl logged errors:\n{done.stderr[-3000:]}")
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
    parser.add_argument("--pages", type=int, default=250, help="pages per origin")
    parser.add_argument("--modes", default=",".join(MODES), help="none, then any of the others")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.worker:
        worker(args.worker, rest[0], rest[1:])
        return

    modes = args.modes.split(",")
    if "redis" in modes and (reason := missing()) is not None:
        print(f"No redis mode: {reason}.\n")
        modes.remove("redis")
    command = [sys.executable, "-m", "benchmarks._site", str(args.origins), str(args.pages)]
    site = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert site.stdout is not None
        origins: list[str] = json.loads(site.stdout.readline())
        print(f"{len(origins)} origins, {args.pages + 1} pages each; {machine()}\n")
        with redis_if_needed(modes) as redis_url:
            run("none", origins)  # warm-up: file caches, the server's first connections
            results: dict[str, list[dict[str, float]]] = {mode: [] for mode in modes}
            for round_ in range(args.rounds):
                turn = round_ % len(modes)
                for mode in modes[turn:] + modes[:turn]:
                    results[mode].append(run(mode, origins, redis_url))
                print(
                    f"round {round_ + 1}: "
                    + ", ".join(f"{mode} {results[mode][-1]['cpu']:.2f} s CPU" for mode in modes),
                    flush=True,
                )
    finally:
        site.terminate()
        site.wait()
    report(results, args)


def report(results: dict[str, list[dict[str, float]]], args: argparse.Namespace) -> None:
    def cpu_per_1000(run: dict[str, float]) -> float:
        return run["cpu"] / run["pages"] * 1000

    rows = []
    figures: dict[str, Any] = {
        "machine": machine(),
        "rounds": args.rounds,
        "origins": args.origins,
        "pages_per_origin": args.pages + 1,
        "modes": {},
    }
    for mode, runs in results.items():
        ratios = [
            cpu_per_1000(mine) / cpu_per_1000(base)
            for mine, base in zip(runs, results["none"], strict=True)
        ]
        shares = {part: median(run[part] for run in runs) for part in (ROBOTSTXT, META)}
        from_shares = 1 / (1 - sum(shares.values()))
        figures["modes"][mode] = {
            "cpu_s_per_1000_pages": median(cpu_per_1000(run) for run in runs),
            "pages_per_s": median(run["pages"] / run["wall"] for run in runs),
            "pages": median(run["pages"] for run in runs),
            "cpu_ratio_to_none_per_round": ratios,
            "cpu_ratio_to_none": median(ratios),
            "robotstxt_share": shares[ROBOTSTXT],
            "meta_share": shares[META],
            "ratio_from_shares": from_shares,
            "target": TARGETS.get(mode),
        }
        rows.append(
            (
                mode,
                f"{median(cpu_per_1000(run) for run in runs):.2f}",
                f"{median(run['pages'] / run['wall'] for run in runs):.0f}",
                f"{median(run['pages'] for run in runs):.0f}",
                " ".join(f"{ratio:.2f}" for ratio in ratios),
                f"{median(ratios):.3f}",
                f"{shares[ROBOTSTXT]:.2%}",
                f"{shares[META]:.2%}",
                f"{from_shares:.3f}",
                f"≤ {TARGETS[mode]:.2f}" if mode in TARGETS else "",
            )
        )
    print("\nCPU of the crawler process (targets: addon ≤ 1.03 x none, redis ≤ 1.05 x none)")
    header = (
        "mode",
        "CPU s / 1000 pages",
        "pages/s",
        "pages",
        "CPU ratio to none, per round",
        "median",
        "robots.txt share",
        "meta share",
        "ratio from shares",
        "target",
    )
    print(table(header, rows))
    print(
        "\nThe CPU ratio compares separate runs: it carries the machine's run-to-run noise "
        "(see the spread of its rounds). The shares are sampled inside each run "
        "(benchmarks/_sampler.py), and their ratio, 1 / (1 - shares), is the cost of robots "
        "handling with that noise cancelled."
    )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"\nFigures written to {RESULTS.relative_to(Path.cwd())}")


if __name__ == "__main__":
    main()
