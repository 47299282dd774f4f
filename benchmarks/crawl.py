"""CPU cost of robots handling in a real crawl, against no robots handling and Scrapy's own.

    .venv/bin/python -m benchmarks.crawl [--rounds 5] [--origins 8] [--pages 250]
        [--modes none,addon,builtin]

A server process serves a multi-origin site (benchmarks/_site.py); each crawl runs in a fresh
crawler process, a CrawlSpider following every link. Each round crawls the site once per
mode, the order rotating from round to round:

- ``none``: ROBOTSTXT_OBEY = False, no meta handling (what the other modes are compared to);
- ``addon``: this package through its add-on (robots.txt and page metas);
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
from typing import Any

from benchmarks._common import machine, median, pin, table
from benchmarks._sampler import META, ROBOTSTXT, Sampler

MODES = ("none", "addon", "builtin")
SETTINGS: dict[str, Any] = {
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "USER_AGENT": "BenchBot/1.0 (+http://127.0.0.1/bot)",
}
MODE_SETTINGS: dict[str, dict[str, Any]] = {
    "none": {"ROBOTSTXT_OBEY": False},
    "addon": {"ROBOTSTXT_OBEY": True, "ADDONS": {"scrapy_robotsmeta.Addon": 0}},
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


def worker(mode: str, origins: list[str]) -> None:
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
    sampler = Sampler()

    def opened() -> None:
        spans["cpu"], spans["wall"] = time.process_time(), time.perf_counter()
        sampler.start()

    def closed() -> None:
        sampler.stop()
        spans["cpu"] = time.process_time() - spans["cpu"]
        spans["wall"] = time.perf_counter() - spans["wall"]

    process = CrawlerProcess({**SETTINGS, **MODE_SETTINGS[mode]})
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
        **{part: sampler.share(part) for part in (ROBOTSTXT, META)},
    }
    print(json.dumps(result))


def run(mode: str, origins: list[str]) -> dict[str, float]:
    command = [sys.executable, "-m", "benchmarks.crawl", "--worker", mode, *origins]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    if result["errors"]:
        sys.exit(f"{mode} crawl logged errors:\n{done.stderr[-3000:]}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--origins", type=int, default=8)
    parser.add_argument("--pages", type=int, default=250, help="pages per origin")
    parser.add_argument("--modes", default=",".join(MODES), help="none, then any of the others")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.worker:
        worker(args.worker, rest)
        return

    command = [sys.executable, "-m", "benchmarks._site", str(args.origins), str(args.pages)]
    site = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert site.stdout is not None
        origins: list[str] = json.loads(site.stdout.readline())
        print(f"{len(origins)} origins, {args.pages + 1} pages each; {machine()}\n")
        run("none", origins)  # warm-up: file caches, the server's first connections
        modes = args.modes.split(",")
        results: dict[str, list[dict[str, float]]] = {mode: [] for mode in modes}
        for round_ in range(args.rounds):
            turn = round_ % len(modes)
            for mode in modes[turn:] + modes[:turn]:
                results[mode].append(run(mode, origins))
            print(
                f"round {round_ + 1}: "
                + ", ".join(f"{mode} {results[mode][-1]['cpu']:.2f} s CPU" for mode in modes),
                flush=True,
            )
    finally:
        site.terminate()
        site.wait()
    report(results)


def report(results: dict[str, list[dict[str, float]]]) -> None:
    def cpu_per_1000(run: dict[str, float]) -> float:
        return run["cpu"] / run["pages"] * 1000

    rows = []
    for mode, runs in results.items():
        ratios = [
            cpu_per_1000(mine) / cpu_per_1000(base)
            for mine, base in zip(runs, results["none"], strict=True)
        ]
        shares = {part: median(run[part] for run in runs) for part in (ROBOTSTXT, META)}
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
                f"{1 / (1 - sum(shares.values())):.3f}",
            )
        )
    print("\nCPU of the crawler process (target: addon ≤ 1.03 x none)")
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
    )
    print(table(header, rows))
    print(
        "\nThe CPU ratio compares separate runs: it carries the machine's run-to-run noise "
        "(see the spread of its rounds). The shares are sampled inside each run "
        "(benchmarks/_sampler.py), and their ratio, 1 / (1 - shares), is the cost of robots "
        "handling with that noise cancelled."
    )


if __name__ == "__main__":
    main()
