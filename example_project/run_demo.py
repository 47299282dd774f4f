"""The scrapy-robotsmeta demo: serve the demo site, crawl it with the example project's ordinary
CrawlSpider, write the exports and summarise what the package decided.

Run it with ``make demo``, or ``python example_project/run_demo.py [--output DIR]``.

The crawl is the one ``scrapy crawl site -a start_url=URL`` runs in example_project/; its
feeds and its log (DEBUG: one line per refused or dropped request) are written to DIR. The
site is served by this process, so it stops with it however the run ends: at the end of the
crawl, on Ctrl-C or on an error.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import demosite
from scrapy.crawler import AsyncCrawlerProcess, Crawler
from scrapy.utils.project import get_project_settings

from scrapy_robotsmeta import RobotsTxtMiddleware
from scrapy_robotsmeta.robotstxt.origin import origin_of
from scrapy_robotsmeta.testing import Site
from scrapy_robotsmeta.usage.tdmrep import WELL_KNOWN_PATH as TDMREP_PATH

HERE = Path(__file__).resolve().parent
# The keys of the item field whose values the summary counts.
COUNTED_KEYS = ("index", "snippet", "max_image_preview", "ai_train", "tdm_reservation")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the scrapy-robotsmeta demo.")
    parser.add_argument(
        "--output",
        type=Path,
        default=HERE / "output",
        help="directory for the exports and the crawl log (default: %(default)s)",
    )
    output = parser.parse_args(argv).output.resolve()
    output.mkdir(parents=True, exist_ok=True)

    os.environ["SCRAPY_SETTINGS_MODULE"] = "robotsdemo.settings"
    settings = get_project_settings()
    feeds = {
        str(output / Path(uri).name): options for uri, options in settings.getdict("FEEDS").items()
    }
    settings.set("FEEDS", feeds, priority="cmdline")
    settings.set("LOG_FILE", str(output / "crawl.log"), priority="cmdline")
    settings.set("LOG_FILE_APPEND", False, priority="cmdline")
    settings.set("LOG_LEVEL", "DEBUG", priority="cmdline")

    process = AsyncCrawlerProcess(settings)  # installs the reactor that serves the site
    sites = demosite.start()
    print("Demo site:", ", ".join(f"{role} {site.origin}" for role, site in sites.items()))
    start_url = f"{sites['main'].origin}/"
    print(f"Crawling: scrapy crawl site -a start_url={start_url}  (in {HERE.name}/)\n")
    crawler = process.create_crawler("site")
    process.crawl(crawler, start_url=start_url)
    process.start()

    assert crawler.stats is not None
    reason = crawler.stats.get_value("finish_reason")
    if reason != "finished":
        print(f"The crawl did not finish ({reason}); see {_shown(output / 'crawl.log')}")
        return 1
    jsonl = next(Path(uri) for uri, options in feeds.items() if options["format"] == "jsonlines")
    items = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    print(summary(crawler, sites, items))
    print(f"\nExports: {', '.join(_shown(Path(uri)) for uri in feeds)}")
    print(f"Log: {_shown(output / 'crawl.log')}")
    return 0


def summary(crawler: Crawler, sites: dict[str, Site], items: list[Any]) -> str:
    middleware = crawler.get_downloader_middleware(RobotsTxtMiddleware)
    assert middleware is not None
    assert crawler.stats is not None
    stats = crawler.stats.get_stats()
    token = middleware.token.for_request(None)
    lines = [f"robots.txt per origin, for product token {token!r} (answers: what applied)"]
    for role, site in sites.items():
        answers = " ".join(str(status) for path, status in site.served if path == "/robots.txt")
        explanation = middleware.explain(f"{site.origin}/")
        lines.append(f"  {role:<10} {site.origin}  {answers}: {explanation.policy_text}")
    lines += ["", "tdmrep.json per origin (TDMRep; answers: what the file is)"]
    for role, site in sites.items():
        answers = " ".join(str(status) for path, status in site.served if path == TDMREP_PATH)
        origin = origin_of(site.origin)
        state = middleware.core.peek(origin) if origin is not None else None
        tdm_file = state.tdmrep if state is not None else None
        read = "none kept: robots.txt never answered" if tdm_file is None else tdm_file.status
        lines.append(f"  {role:<10} {answers or '-'}: {read}")

    by_rules = stats.get("robotstxt/forbidden", 0)
    unavailable = stats.get("robotstxt/unavailable_dropped", 0)
    fetches = stats.get("robotstxt/response_count", 0) + stats.get(
        "robotsmeta/tdmrep/response_count", 0
    )
    pages = stats.get("response_received_count", 0) - fetches
    lines += [
        "",
        f"{'Pages fetched':<28}{pages}",
        f"{'Refused by robots.txt':<28}{by_rules + unavailable}"
        f"  ({by_rules} by its rules, {unavailable} because it was unavailable)",
        f"{'Dropped by meta nofollow':<28}{stats.get('robotsmeta/request_dropped/nofollow', 0)}",
        f"{'Items':<28}{len(items)}",
    ]
    for key in COUNTED_KEYS:
        counts = Counter(_text(item["robots"][key]) for item in items)
        values = ", ".join(f"{value} {count}" for value, count in counts.most_common())
        lines.append(f"  {'robots.' + key:<26}{values}")
    return "\n".join(lines)


def _shown(path: Path) -> str:
    """*path* relative to the working directory when it is under it, for shorter lines."""
    cwd = Path.cwd()
    return str(path.relative_to(cwd) if path.is_relative_to(cwd) else path)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


if __name__ == "__main__":
    raise SystemExit(main())
