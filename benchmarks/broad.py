"""A broad crawl: more origins than the robots.txt cache holds in memory, met in shuffled order.

    .venv/bin/python -m benchmarks.broad [--origins 1000] [--pages 10] [--rounds 2]
        [--modes none,addon,nospill,builtin] [--beside LABEL=PATH]

One server process answers for every origin: the crawler resolves the made-up host names
``o<N>.test`` to 127.0.0.1 (a DNS_RESOLVER of this module), so each name on the server's port
is an origin of its own. Each origin serves a robots.txt of the corpus (the same file for the
same origin in every run) and ``--pages`` pages; the spider requests every page of every
origin, shuffled, through Scrapy's ``DownloaderAwarePriorityQueue``, as a broad crawl would.
The robots.txt cache is given memory for a fifth of the origins, packed (by its own estimate
of their size: half of the memory for live origins, the rest for records; ``--memory`` sets
another bound), so that at least four fifths are read back from the disk tier when met again.

Modes: ``none`` (no robots handling), ``robotstxt`` (this package's robots.txt part alone,
default storage: memory, then the disk tier; what compares with the built-in), ``addon`` (the
whole add-on, page-level rules read too), ``nospill`` (the robots.txt part with
``ROBOTSTXT_CACHE_SPILL = False``: evicted origins are forgotten) and ``builtin`` (Scrapy's
RobotsTxtMiddleware, which never forgets an origin and never bounds its memory). The server
counts robots.txt requests per origin. ``--beside LABEL=PATH`` also runs each of this package's
modes on another checkout's code (``robotstxt@LABEL``…), in the same rounds, through that
checkout's own worker. A crawl's time runs from spider_opened to spider_closed, as does the
crawler process's CPU time; the robots.txt part's share of that CPU time is sampled inside each
crawl (``benchmarks/_sampler.py``: our package's frames, or Scrapy's robots.txt middleware and
Protego), which the machine's load does not move as it moves times.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from typing import Any

from scrapy import Request, Spider, signals
from scrapy.crawler import CrawlerProcess
from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer

from benchmarks._common import beside, corpus, in_checkout, machine, median, table
from benchmarks._results import write_figures
from benchmarks._sampler import ROBOTSTXT, Sampler
from scrapy_robotsmeta.robotstxt import RobotsTxt
from scrapy_robotsmeta.robotstxt.cache import record_bytes
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import Hop, Outcome
from scrapy_robotsmeta.robotstxt.record import pack
from scrapy_robotsmeta.robotstxt.state import OriginState, Timing
from scrapy_robotsmeta.robotstxt.status import Status

MODES = ("none", "robotstxt", "addon", "nospill", "builtin")
# The crawl stats each run keeps: the cache's tiers, where waiting requests waited, and how
# many requests went through the scheduler (a parked request goes through it twice).
KEPT_STATS = (
    "robotstxt/cache",
    "robotstxt/held",
    "robotstxt/reparked",
    "robotstxt/parked",
    "scheduler/enqueued",
)
TARGETS = {"robots_per_origin": 1.02, "time_vs_builtin": 1.05}
SETTINGS: dict[str, Any] = {
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "USER_AGENT": "BenchBot/1.0 (+http://127.0.0.1/bot)",
    "DNS_RESOLVER": "benchmarks.broad.LoopbackResolver",
    "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.DownloaderAwarePriorityQueue",
    "CONCURRENT_REQUESTS": 64,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
    "RETRY_ENABLED": False,
}
ADDON = {"ROBOTSTXT_OBEY": True, "ADDONS": {"scrapy_robotsmeta.Addon": 0}}
MODE_SETTINGS: dict[str, dict[str, Any]] = {
    "none": {"ROBOTSTXT_OBEY": False},
    # The robots.txt middleware alone, as the built-in is: no page-level rules read.
    "robotstxt": {**ADDON, "ROBOTSMETA_ENABLED": False},
    "addon": ADDON,
    "nospill": {**ADDON, "ROBOTSMETA_ENABLED": False, "ROBOTSTXT_CACHE_SPILL": False},
    "builtin": {"ROBOTSTXT_OBEY": True},
}


class LoopbackResolver(CachingThreadedResolver):
    """Resolves every ``*.test`` name to 127.0.0.1: many origins on one local server."""

    def getHostByName(self, name: str, timeout: Any = ()) -> defer.Deferred[str]:
        if name.endswith(".test"):
            return defer.succeed("127.0.0.1")
        return super().getHostByName(name, timeout)


def robots_bodies(origins: int) -> list[bytes]:
    """The robots.txt of each origin: corpus files, in a fixed shuffled order."""
    files = list(corpus().values())
    random.Random(7).shuffle(files)
    return [files[index % len(files)] for index in range(origins)]


def serve(origins: int) -> None:
    """The server process: prints its port, then serves until terminated. ``/_counts`` answers
    the robots.txt requests per origin since the last call, as JSON."""
    # Here, not at the top: a crawl worker must install Scrapy's reactor before any of it.
    from twisted.web import server  # noqa: PLC0415

    from scrapy_robotsmeta.testing import Site, installed_reactor  # noqa: PLC0415

    bodies = robots_bodies(origins)
    counts: Counter[str] = Counter()

    class ManyOrigins(Site):
        def render(self, request: server.Request) -> bytes | int:
            host = (request.getHeader("host") or "").split(":")[0]
            path = request.uri.decode("latin-1")
            if path == "/_counts":
                answer = json.dumps(counts).encode()
                counts.clear()
                return answer
            if path == "/robots.txt":
                counts[host] += 1
                request.setHeader("content-type", "text/plain")
                return bodies[int(host[1:].split(".")[0])]
            request.setHeader("content-type", "text/html")
            return b"<html><body><p>%s</p></body></html>" % path.encode()

    site = ManyOrigins().start()
    print(site.port, flush=True)
    installed_reactor().run()


def worker(mode: str, port: int, origins: int, pages: int, memory: int) -> None:
    """One crawl in this process; prints its figures as one JSON line."""
    urls = [
        f"http://o{origin}.test:{port}/products/item-{page}.html"
        for origin in range(origins)
        for page in range(pages)
    ]
    random.Random(11).shuffle(urls)

    class BroadSpider(Spider):
        name = "broad"

        async def start(self) -> Any:
            for url in urls:
                yield Request(url, callback=self.parse)

        def parse(self, response: Any) -> None:
            return None

    figures: dict[str, float] = {}
    sampler = Sampler()

    def opened() -> None:
        figures.update(started=time.perf_counter(), cpu_started=time.process_time())
        sampler.start()

    def closed() -> None:
        sampler.stop()
        figures.update(ended=time.perf_counter(), cpu_ended=time.process_time())

    settings = {**SETTINGS, **MODE_SETTINGS[mode], "ROBOTSTXT_CACHE_MEMORY": memory}
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(BroadSpider)
    crawler.signals.connect(opened, signals.spider_opened, weak=False)
    crawler.signals.connect(closed, signals.spider_closed, weak=False)
    process.crawl(crawler)
    process.start()
    assert crawler.stats is not None
    stats = crawler.stats.get_stats()
    print(
        json.dumps(
            {
                "seconds": figures["ended"] - figures["started"],
                "cpu_seconds": figures["cpu_ended"] - figures["cpu_started"],
                "robotstxt_share": sampler.share(ROBOTSTXT),
                "pages": stats.get("response_received_count", 0)
                - stats.get("robotstxt/response_count", 0),
                "stats": {k: v for k, v in stats.items() if k.startswith(KEPT_STATS)},
            }
        )
    )


def run(mode: str, port: int, args: argparse.Namespace, memory: int) -> dict[str, Any]:
    mode, _, label = mode.partition("@")
    command = [sys.executable, "-m", "benchmarks.broad", "--worker", mode, str(port)]
    command += [str(args.origins), str(args.pages), str(memory)]
    cwd, env = in_checkout(dict(args.beside)[label] if label else None)
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=cwd, env=env)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/_counts") as answer:
        counts: dict[str, int] = json.loads(answer.read())
    result["robots_requests"] = sum(counts.values())
    result["origins_asked"] = len(counts)
    return result


def fifth_of_the_origins(origins: int) -> int:
    """Memory that holds at most a fifth of the origins, by the cache's own estimate
    (benchmarks/tiers.py compares it with what they hold): records for a tenth in the half
    that live origins leave to them, and the live origins' half, which holds fewer."""
    packed = []
    for index, body in enumerate(robots_bodies(origins)):
        where = Origin("http", f"o{index}.test", 80)
        state = OriginState(where)
        state.start_fetch(0.0, Timing())
        hops = (Hop(where.robots_url, 200),)
        state.apply(
            Outcome(Status.RULES, "HTTP 200", RobotsTxt.parse(body), hops=hops), 0, Timing()
        )
        packed.append(record_bytes(pack(state)))
    return 2 * sum(packed) // 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--origins", type=int, default=1000)
    parser.add_argument("--pages", type=int, default=10, help="pages per origin")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument(
        "--memory", type=int, help="ROBOTSTXT_CACHE_MEMORY (default: a fifth of the origins)"
    )
    parser.add_argument(
        "--beside",
        type=beside,
        action="append",
        default=[],
        metavar="LABEL=PATH",
        help="also run this package's modes on another checkout's code",
    )
    parser.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve)
        return
    if args.worker:
        mode, port, origins, pages, memory = args.worker
        worker(mode, int(port), int(origins), int(pages), int(memory))
        return

    memory = args.memory or fifth_of_the_origins(args.origins)
    modes = [
        variant
        for mode in args.modes.split(",")
        for variant in [mode] + [f"{mode}@{label}" for label, _ in args.beside]
        if variant == mode or mode not in ("none", "builtin")
    ]
    server = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.broad", "--serve", str(args.origins)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        print(
            f"{args.origins:,} origins x {args.pages} pages, shuffled; robots.txt cache memory "
            f"{memory:,} bytes; {machine()}\n"
        )
        results: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
        for round_ in range(args.rounds):
            turn = round_ % len(modes)
            for mode in modes[turn:] + modes[:turn]:
                results[mode].append(run(mode, port, args, memory))
            print(
                f"round {round_ + 1}: "
                + ", ".join(
                    f"{mode} {results[mode][-1]['seconds']:.1f} s "
                    f"(CPU {results[mode][-1]['cpu_seconds']:.1f} s), "
                    f"{results[mode][-1]['robots_requests']} robots.txt"
                    for mode in modes
                ),
                flush=True,
            )
    finally:
        server.terminate()
        server.wait()
    report(results, args, memory)


def report(
    results: dict[str, list[dict[str, Any]]], args: argparse.Namespace, memory: int
) -> None:
    builtin = (
        median(run["seconds"] for run in results["builtin"]) if "builtin" in results else None
    )
    builtin_cpu = (
        median(run["cpu_seconds"] for run in results["builtin"]) if "builtin" in results else None
    )
    rows, figures = [], {}
    hits = ("memory_hits", "packed_hits", "disk_hits", "packed", "spilled", "forgotten")
    for mode, runs in results.items():
        seconds = median(run["seconds"] for run in runs)
        cpu = median(run["cpu_seconds"] for run in runs)
        requests = median(run["robots_requests"] for run in runs)
        per_origin = requests / args.origins
        versus = seconds / builtin if builtin else None
        cpu_versus = cpu / builtin_cpu if builtin_cpu else None
        share = median(run["robotstxt_share"] for run in runs)
        rows.append(
            [
                mode,
                f"{seconds:.1f}",
                f"{versus:.3f}" if versus is not None else "",
                f"{cpu:.1f}",
                f"{cpu_versus:.3f}" if cpu_versus is not None else "",
                f"{share:.2%}",
                f"{requests:,.0f}",
                f"{per_origin:.2f}" if mode != "none" else "",
                f"{median(run['pages'] for run in runs):,.0f}",
                f"{median(run['stats'].get('scheduler/enqueued', 0) for run in runs):,.0f}",
                " / ".join(
                    f"{median(run['stats'].get(f'robotstxt/cache/{hit}', 0) for run in runs):,.0f}"
                    for hit in hits
                )
                if "robotstxt/cache/memory_hits" in runs[0]["stats"]
                else "",
            ]
        )
        figures[mode] = {
            "seconds_median": seconds,
            "time_vs_builtin": versus,
            "cpu_seconds_median": cpu,
            "cpu_vs_builtin": cpu_versus,
            "robotstxt_share_median": share,
            "robots_requests_median": requests,
            "robots_per_origin": per_origin,
            "runs": runs,
        }
    print()
    print(
        table(
            [
                "mode",
                "crawl s",
                "time / builtin",
                "crawler CPU s",
                "CPU / builtin",
                "robots.txt share",
                "robots.txt requests",
                "per origin",
                "pages",
                "scheduled",
                "cache: " + " / ".join(hits),
            ],
            rows,
        )
    )
    print(
        f"\ntargets: robots.txt requests ≤ {TARGETS['robots_per_origin']} x origins; "
        f"crawl time ≤ {TARGETS['time_vs_builtin']} x the built-in's"
    )
    write_figures(
        "broad",
        {
            "machine": machine(),
            "origins": args.origins,
            "pages_per_origin": args.pages,
            "cache_memory": memory,
            "targets": TARGETS,
            "modes": figures,
        },
    )


if __name__ == "__main__":
    main()
