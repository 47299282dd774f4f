"""Peak memory of a crawl holding 100,000 requests for one origin whose robots.txt answers 503.

    .venv/bin/python -m benchmarks.parked [--requests 100000] [--rounds 1] [--hold 3]
        [--modes none,builtin,addon] [--jobdir both|yes|no]

A server process serves two origins on 127.0.0.1: an index origin (robots.txt 404) whose
front page makes the spider yield N requests to the target origin, and the target origin,
whose robots.txt answers 503 until the crawler asks the server to recover; then 200 with
``Disallow: /p/`` (every held request is refused, so releasing them costs no page download).

Each crawl runs in a fresh crawler process. The target's requests are *held* when the index
callback has yielded them all, and, for the add-on, when all of them are parked. After
``--hold`` more seconds the crawler asks the server to recover. The add-on's crawl then runs to
its end: it learns the new robots.txt, releases every parked request and refuses it.
``none`` (ROBOTSTXT_OBEY = False) and ``builtin`` (Scrapy's RobotsTxtMiddleware, which reads
the 503 as allow-all and never waits) are stopped at that point: their requests sit in the
scheduler's queue, the equivalent of being parked. Peak RSS is the crawler process' high-water
mark (``ru_maxrss``) over its whole life, so the add-on's release counts too.

Each mode runs with ``JOBDIR`` (the scheduler's queue and the parked requests on disk) and
without (the scheduler's queue in memory; the add-on keeps ``ROBOTSTXT_PARKED_MEMORY_LIMIT``
requests in memory and the rest in a temporary disk queue).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks._common import machine, median, pin, table
from benchmarks._results import write_figures

MODES = ("none", "builtin", "addon")
SETTINGS: dict[str, Any] = {
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "USER_AGENT": "BenchBot/1.0 (+http://127.0.0.1/bot)",
    # A retry schedule short enough that the recovery is seen within about a second, so the
    # run is short; the memory held does not depend on it.
    "ROBOTSTXT_RETRY_DELAY": 0.5,
    "ROBOTSTXT_RETRY_MAX_DELAY": 1.0,
}
MODE_SETTINGS: dict[str, dict[str, Any]] = {
    "none": {"ROBOTSTXT_OBEY": False},
    "builtin": {"ROBOTSTXT_OBEY": True},
    "addon": {"ROBOTSTXT_OBEY": True, "ADDONS": {"scrapy_robotsmeta.Addon": 0}},
}


# -- the server ------------------------------------------------------------------------------


def serve() -> None:
    """Serve the index and target origins; print them as one JSON line once listening."""
    from twisted.internet import reactor as _reactor  # noqa: PLC0415 (only the server)
    from twisted.web import resource as web  # noqa: PLC0415
    from twisted.web import server  # noqa: PLC0415

    reactor: Any = _reactor
    pin(0)
    counts = {"robots": 0, "pages": 0, "recovered": 0}

    class Index(web.Resource):
        isLeaf = True

        def render_GET(self, request: server.Request) -> bytes:
            if request.path == b"/_recover":
                counts["recovered"] = 1
                return b"ok"
            if request.path == b"/_outage":  # each crawl starts in the outage
                counts.update(robots=0, pages=0, recovered=0)
                return b"ok"
            if request.path == b"/_counts":
                request.setHeader(b"Content-Type", b"application/json")
                return json.dumps(counts).encode()
            if request.path == b"/":
                return b"<html><title>index</title></html>"
            request.setResponseCode(404)
            return b"not found"

    class Target(web.Resource):
        isLeaf = True

        def render_GET(self, request: server.Request) -> bytes:
            if request.path == b"/robots.txt":
                counts["robots"] += 1
                if not counts["recovered"]:
                    request.setResponseCode(503)
                    return b"Service Unavailable"
                request.setHeader(b"Content-Type", b"text/plain")
                return b"User-agent: *\nDisallow: /p/\n"
            counts["pages"] += 1
            return b"<html><title>page</title></html>"

    ports = []
    for root in (Index(), Target()):
        site = server.Site(root)
        site.noisy = False
        ports.append(reactor.listenTCP(0, site, interface="127.0.0.1"))
    print(json.dumps([f"http://127.0.0.1:{p.getHost().port}" for p in ports]), flush=True)
    reactor.run()


# -- the crawler -----------------------------------------------------------------------------


def rss_mb() -> float:
    """Resident memory of this process now."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 1e6


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6  # KiB on Linux


@dataclass
class Job:
    """One crawl, as the driver passes it to the crawler process."""

    mode: str
    jobdir: str  # "" for none
    count: int
    hold: float
    index: str
    target: str


class Watch:
    """Samples the crawler's memory every 0.1 s, and moves the crawl from the outage to the
    recovery once every request is held."""

    def __init__(self, job: Job, crawler: Any) -> None:
        self.job = job
        self.crawler = crawler
        self.marks: dict[str, float] = {}
        self.rss: dict[str, float] = {}
        self.closing: Any = None

    def all_held(self) -> bool:
        if "yielded" not in self.marks:
            return False
        if self.job.mode != "addon":
            return True  # held by the scheduler as soon as they are yielded
        # The index request was parked too, for its own origin's robots.txt: at most one of
        # the target's requests may still be on its way, which does not matter here.
        return bool(self.crawler.stats.get_value("robotstxt/parked", 0) >= self.job.count)

    def tick(self) -> None:
        now, rss = time.monotonic(), rss_mb()
        if "recover" not in self.marks:
            self.rss["before_recovery"] = max(self.rss.get("before_recovery", 0.0), rss)
        if "held" not in self.marks and self.all_held():
            self.marks["held"] = now
            self.rss["held"] = rss
        elif "recover" not in self.marks and now - self.marks.get("held", now) >= self.job.hold:
            self.recover(now)

    def recover(self, now: float) -> None:
        from scrapy.utils.defer import deferred_from_coro  # noqa: PLC0415

        self.marks["recover"] = now
        # Blocks the reactor for a millisecond: this is the benchmark's control, not load.
        urllib.request.urlopen(self.job.index + "/_recover", timeout=5).read()
        if self.job.mode != "addon":
            # Nothing waits on robots.txt in these modes: what they hold now is what the
            # comparison is about; downloading 100,000 pages would only take time.
            self.closing = deferred_from_coro(
                self.crawler.engine.close_spider_async(reason="held")
            )


def worker(job: Job) -> None:
    """Crawl in this process and print what it held and cost, as one JSON line."""
    from scrapy import Request, Spider, signals  # noqa: PLC0415 (the driver never loads Scrapy)
    from scrapy.crawler import CrawlerProcess  # noqa: PLC0415
    from twisted.internet.task import LoopingCall  # noqa: PLC0415

    pin(-1)
    urllib.request.urlopen(job.index + "/_outage", timeout=5).read()
    settings = {**SETTINGS, **MODE_SETTINGS[job.mode]}
    if job.jobdir:
        settings["JOBDIR"] = job.jobdir
    process = CrawlerProcess(settings)

    class HoldSpider(Spider):
        name = "hold"

        async def start(self) -> Any:
            yield Request(job.index + "/", callback=self.parse_index)

        def parse_index(self, response: Any) -> Any:
            for i in range(job.count):
                yield Request(f"{job.target}/p/{i}.html", callback=self.parse_page)
            watch.marks["yielded"] = time.monotonic()

        def parse_page(self, response: Any) -> None:
            pass

    crawler = process.create_crawler(HoldSpider)
    watch = Watch(job, crawler)
    loops: list[LoopingCall] = []

    def opened() -> None:
        watch.marks["opened"] = time.monotonic()
        watch.rss["opened"] = rss_mb()
        # Made here, not before the crawl: LoopingCall() imports the default reactor, which
        # would install it before Scrapy installs its asyncio reactor.
        loops.append(LoopingCall(watch.tick))
        loops[0].start(0.1)

    def closed() -> None:
        watch.marks["closed"] = time.monotonic()
        if loops and loops[0].running:
            loops[0].stop()

    crawler.signals.connect(opened, signals.spider_opened)
    crawler.signals.connect(closed, signals.spider_closed)
    process.crawl(crawler)
    process.start()
    assert crawler.stats is not None
    stats = crawler.stats.get_stats()
    marks = watch.marks
    result = {
        "peak_rss_mb": peak_rss_mb(),
        "opened_rss_mb": watch.rss["opened"],
        "held_rss_mb": watch.rss.get("held", 0.0),
        # Sampled every 0.1 s: the most resident memory while the requests were waiting.
        "before_recovery_rss_mb": watch.rss.get("before_recovery", 0.0),
        "seconds_to_hold": marks.get("held", 0.0) - marks["opened"],
        "seconds": marks["closed"] - marks["opened"],
        # Scrapy's RetryMiddleware logs its giving up on the 503 robots.txt as an error.
        "errors": stats.get("log_count/ERROR", 0) - stats.get("retry/max_reached", 0),
        "parked": stats.get("robotstxt/parked", 0),
        "parked_memory": stats.get("robotstxt/parked/memory", 0),
        "parked_disk": stats.get("robotstxt/parked/disk", 0),
        "forbidden": stats.get("robotstxt/forbidden", 0),
        "dropped_on_close": stats.get("robotstxt/dropped_on_close", 0),
        "scheduled": stats.get("scheduler/enqueued", 0),
    }
    if "--stats" in sys.argv:
        print(json.dumps(stats, default=str), file=sys.stderr)
    print(json.dumps(result))


# -- the driver ------------------------------------------------------------------------------


def run(mode: str, jobdir: bool, args: argparse.Namespace, origins: list[str]) -> dict[str, Any]:
    directory = tempfile.mkdtemp(prefix="bench-parked-") if jobdir else ""
    command = [
        sys.executable,
        "-m",
        "benchmarks.parked",
        "--worker",
        mode,
        directory,
        str(args.requests),
        str(args.hold),
        *origins,
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    finally:
        if directory:
            shutil.rmtree(directory, ignore_errors=True)
    if done.returncode or not done.stdout.strip():
        sys.exit(f"{mode} crawl failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    if result["errors"]:
        sys.exit(f"{mode} crawl logged errors:\n{done.stderr[-3000:]}")
    if mode == "addon" and result["forbidden"] < args.requests:
        sys.exit(f"addon crawl refused {result['forbidden']} of {args.requests}:\n{done.stderr}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--hold", type=float, default=3.0, help="seconds held before recovery")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--jobdir", choices=("both", "yes", "no"), default="both")
    parser.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    parser.add_argument("--stats", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        mode, directory, count, hold, index, target = args.worker
        worker(Job(mode, directory, int(count), float(hold), index, target))
        return
    if args.serve:
        serve()
        return

    site = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.parked", "--serve"],
        stdout=subprocess.PIPE,
        text=True,
    )
    modes = args.modes.split(",")
    jobdirs = {"both": [True, False], "yes": [True], "no": [False]}[args.jobdir]
    results: dict[str, list[dict[str, Any]]] = {}
    try:
        assert site.stdout is not None
        origins: list[str] = json.loads(site.stdout.readline())
        print(f"{args.requests:,} requests held for one origin; {machine()}\n", flush=True)
        for round_ in range(args.rounds):
            turn = round_ % len(modes)
            for jobdir in jobdirs:
                for mode in modes[turn:] + modes[:turn]:
                    key = f"{mode} {'JOBDIR' if jobdir else 'no JOBDIR'}"
                    result = run(mode, jobdir, args, origins)
                    results.setdefault(key, []).append(result)
                    print(
                        f"round {round_ + 1}, {key}: peak {result['peak_rss_mb']:.0f} MB, "
                        f"{result['seconds']:.0f} s",
                        flush=True,
                    )
    finally:
        site.terminate()
        site.wait()
    report(args, jobdirs, modes, results)


def report(
    args: argparse.Namespace,
    jobdirs: list[bool],
    modes: list[str],
    results: dict[str, list[dict[str, Any]]],
) -> None:
    figures: dict[str, Any] = {"requests": args.requests, "machine": machine(), "runs": {}}
    for jobdir in jobdirs:
        label = "JOBDIR" if jobdir else "no JOBDIR"
        rows = []
        for mode in modes:
            runs = results[f"{mode} {label}"]
            peak = median(run["peak_rss_mb"] for run in runs)
            opened = median(run["opened_rss_mb"] for run in runs)
            held = median(run["held_rss_mb"] for run in runs)
            waiting = median(run["before_recovery_rss_mb"] for run in runs)
            figure = {
                "peak_rss_mb": peak,
                "opened_rss_mb": opened,
                "held_rss_mb": held,
                "before_recovery_rss_mb": waiting,
                "bytes_per_request_above_opened": (peak - opened) * 1e6 / args.requests,
                "seconds": median(run["seconds"] for run in runs),
                "parked_memory": runs[-1]["parked_memory"],
                "parked_disk": runs[-1]["parked_disk"],
            }
            for base in ("builtin", "none"):
                if f"{base} {label}" in results:
                    base_peak = median(r["peak_rss_mb"] for r in results[f"{base} {label}"])
                    figure[f"peak_ratio_to_{base}"] = peak / base_peak
            figures["runs"][f"{mode} {label}"] = figure
            rows.append(
                (
                    mode,
                    f"{opened:.0f}",
                    f"{held:.0f}",
                    f"{waiting:.0f}",
                    f"{peak:.0f}",
                    f"{figure['bytes_per_request_above_opened']:.0f}",
                    f"{figure.get('peak_ratio_to_builtin', float('nan')):.2f}",
                    f"{figure.get('peak_ratio_to_none', float('nan')):.2f}",
                    f"{figure['parked_memory']:,} / {figure['parked_disk']:,}",
                    f"{figure['seconds']:.0f}",
                )
            )
        print(
            f"\nPeak RSS of the crawler, {args.requests:,} requests held, {label} "
            "(target with JOBDIR: addon ≤ 1.2 x builtin)"
        )
        header = (
            "mode",
            "RSS at open (MB)",
            "RSS when all held (MB)",
            "most RSS before recovery (MB)",
            "peak RSS (MB)",
            "peak - open, bytes / request",
            "peak / builtin",
            "peak / none",
            "parked in memory / on disk",
            "crawl s",
        )
        print(table(header, rows))
    write_figures("parked", figures)


if __name__ == "__main__":
    main()
