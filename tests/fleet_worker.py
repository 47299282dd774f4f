"""A scrapy-redis fleet on one machine: a multi-origin site in a process of its own, worker
processes of one crawl sharing one Redis, and a driver that starts, kills and reads them.

    python -m tests.fleet_worker site DIRECTORY ORIGINS PAGES
    python -m tests.fleet_worker worker DIRECTORY NAME REDIS_URL [SETTINGS_JSON]

Both the fleet test (tests/test_crawl_fleet.py) and the fleet benchmark (benchmarks/fleet.py) run
their fleets through :class:`Fleet`. What they assert or measure is read from files, never
from the processes' memory, since a killed process leaves nothing else behind:

- ``DIRECTORY/site.log``: one ``time origin path status`` line per request the site received,
  written as the request arrives (the truth: what the site saw);
- ``DIRECTORY/items-NAME.jsonl``: the items the worker exported, one per page;
- ``DIRECTORY/worker-NAME.log``: ``opened LEASE_ID`` when the worker's crawl opens (the value
  its fetch leases carry in Redis), ``closed REASON`` at its end, and one ``EVENT URL`` line
  per step of a request through the worker: ``read`` (a start URL taken from Redis),
  ``dequeued`` (scrapy-redis's queue handed it to the engine), ``sched`` / ``sched-again``
  (scheduled, ``-again`` with ``dont_filter``, as a request sent back to be parked is),
  ``dropped`` (by the duplicate filter), ``parked`` (by the robots.txt middleware, in the
  process), ``pushed`` (that parked request is in Redis), ``released`` (taken out of Redis to
  be crawled).

Those steps tell where a killed worker's lost requests were (:meth:`Fleet.losses`). The
scheduler and the storage are scrapy-redis's and RedisStorage, subclassed only to write the
steps down.

Origin 0 of the site is the one whose robots.txt fails: while ``DIRECTORY/hold`` exists its
robots.txt requests are accepted and never answered (a slow fetch that holds the lease);
while ``DIRECTORY/outage`` exists they get a 503; then a 200. When the site starts with a
``DIRECTORY/crawl-delay`` file, origin 0's robots.txt asks the ``Crawl-delay`` it holds.
Every robots.txt disallows ``/private/``; every page links to pages of its origin, a page of
another origin and a private page, or to nothing when the site starts with a
``DIRECTORY/no-links`` file (only the start URLs are then crawled). Every origin serves the
same ``/.well-known/tdmrep.json`` (TDMRep), which a crawl reads only when it consults TDMRep:
pages ``/p/1…`` reserved, the rest not.
"""

from __future__ import annotations

import json
import pickle
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from scrapy_redis.scheduler import Scheduler  # type: ignore[import-untyped,unused-ignore]

from scrapy_robotsmeta.storage import RedisStorage

ROBOTS_TXT = b"User-agent: *\nDisallow: /private/\n"
TDMREP_PATH = "/.well-known/tdmrep.json"
TDMREP_JSON = json.dumps(
    [{"location": "/p/1", "tdm-reservation": 1}, {"location": "/", "tdm-reservation": 0}]
).encode()
SPIDER = "fleet"
START_URLS_KEY = f"{SPIDER}:start_urls"
#: scrapy-redis's queue of the crawl (SCHEDULER_QUEUE_KEY's default).
QUEUE_KEY = f"{SPIDER}:requests"
#: The robots.txt storage's keys (ROBOTSTXT_REDIS_KEY_PREFIX's default).
PREFIX = f"robotsmeta:{SPIDER}"

#: A worker's settings: the package through its add-on on a scrapy-redis crawl. Timings are
#: short so that leases, retries and polls turn over in a fraction of a second.
WORKER_SETTINGS: dict[str, Any] = {
    "ADDONS": {"scrapy_robotsmeta.Addon": 0},
    "ROBOTSTXT_OBEY": True,
    "ROBOTSTXT_STORAGE": "tests.fleet_worker.LoggedRedisStorage",
    "ROBOTSTXT_RETRY_DELAY": 0.2,
    "ROBOTSTXT_RETRY_MAX_DELAY": 0.4,
    "ROBOTSTXT_REDIS_POLL_INTERVAL": 0.1,
    "ROBOTSTXT_REDIS_LEASE_TIME": 1.0,
    # Requests waiting inside a worker's downloader for its robots.txt fetch are parked sooner.
    "ROBOTSTXT_HOLD_TIME": 0.5,
    "SCHEDULER": "tests.fleet_worker.FleetScheduler",
    "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
    # Otherwise the first worker to close flushes the whole fleet's queue.
    "SCHEDULER_PERSIST": True,
    # A backstop: the driver stops the workers once the crawl is over.
    "MAX_IDLE_TIME_BEFORE_CLOSE": 30,
    "TELNETCONSOLE_ENABLED": False,
    "RETRY_ENABLED": False,
    "DOWNLOAD_TIMEOUT": 20,
    "LOG_LEVEL": "INFO",
    "USER_AGENT": "FleetBot/1.0 (+http://127.0.0.1/bot)",
}


# -- the site -------------------------------------------------------------------------------


def page_paths(pages: int) -> list[str]:
    return [f"/p/{i}" for i in range(pages)]


def page_links(origins: list[str], index: int, number: int, pages: int) -> list[str]:
    """The links of page *number* of origin *index*: three of its origin (the next one among
    them, so that every page is reachable), one of the next origin, one private page."""
    origin = origins[index]
    other = origins[(index + 1) % len(origins)]
    same = {(number + 1) % pages, (number * 7 + 3) % pages, (number * 13 + 5) % pages}
    return [
        *(f"{origin}/p/{i}" for i in sorted(same)),
        f"{other}/p/{number}",
        f"{origin}/private/{number}",
    ]


def serve(directory: Path, origins_count: int, pages: int) -> None:
    """Serve the site until terminated (the ``site`` command)."""
    from twisted.internet import reactor as _reactor  # noqa: PLC0415 (the driver never needs it)
    from twisted.web import resource, server  # noqa: PLC0415

    reactor: Any = _reactor
    log = (directory / "site.log").open("a", buffering=1)
    origins: list[str] = []
    delay_file = directory / "crawl-delay"
    delayed = b"Crawl-delay: %s\n" % delay_file.read_bytes() if delay_file.exists() else b""
    linked = not (directory / "no-links").exists()

    class OriginSite(resource.Resource):
        isLeaf = True

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

        def render_GET(self, request: server.Request) -> bytes | int:
            path = request.uri.decode("latin-1")
            status, body = self.answer(path)
            log.write(f"{time.time():.6f} {origins[self.index]} {path} {status}\n")
            if status == "hold":
                return server.NOT_DONE_YET
            request.setResponseCode(int(status))
            content_type = {"/robots.txt": b"text/plain", TDMREP_PATH: b"application/json"}.get(
                path, b"text/html"
            )
            request.setHeader(b"Content-Type", content_type + b"; charset=utf-8")
            return body

        def answer(self, path: str) -> tuple[str, bytes]:
            if path == "/robots.txt":
                if self.index == 0 and (directory / "hold").exists():
                    return "hold", b""
                if self.index == 0 and (directory / "outage").exists():
                    return "503", b"unavailable"
                return "200", ROBOTS_TXT + (delayed if self.index == 0 else b"")
            if path == TDMREP_PATH:
                return "200", TDMREP_JSON
            kind, _, number = path[1:].partition("/")
            if kind not in ("p", "private") or not number.isdigit() or int(number) >= pages:
                return "404", b"not found"
            links = page_links(origins, self.index, int(number), pages) if linked else []
            anchors = "".join(f'<a href="{href}">{href}</a>\n' for href in links)
            return "200", f"<html><body>{anchors}</body></html>".encode()

    for index in range(origins_count):
        factory = server.Site(OriginSite(index))
        factory.noisy = False
        port = reactor.listenTCP(0, factory, interface=f"127.0.0.{index + 1}")
        origins.append(f"http://{port.getHost().host}:{port.getHost().port}")
    ready = directory / "origins.json.tmp"
    ready.write_text(json.dumps(origins))
    ready.rename(directory / "origins.json")
    reactor.run()


# -- a worker -------------------------------------------------------------------------------


class FleetScheduler(Scheduler):  # type: ignore[misc]
    """scrapy-redis's scheduler, writing down each request its queue hands to this worker."""

    @classmethod
    def from_crawler(cls, crawler: Any) -> FleetScheduler:
        scheduler: FleetScheduler = super().from_crawler(crawler)
        scheduler.log = _worker_log(crawler.settings["FLEET_WORKER_LOG"])
        return scheduler

    def next_request(self) -> Any:
        request = super().next_request()
        if request is not None:
            self.log.write(f"dequeued {request.url}\n")
        return request


class LoggedRedisStorage(RedisStorage):
    """RedisStorage, writing down each request it parks, writes to Redis and releases."""

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        self.log = _worker_log(crawler.settings["FLEET_WORKER_LOG"])

    def park(self, origin: Any, request: Any) -> None:
        self.log.write(f"parked {request.url}\n")
        super().park(origin, request)

    async def _push(self, origin: Any, batch: list[bytes]) -> None:
        await super()._push(origin, batch)
        for data in batch:
            self.log.write(f"pushed {self.codec.load(data).url}\n")

    async def release(self, origin: Any) -> Any:
        async for request in super().release(origin):
            self.log.write(f"released {request.url}\n")
            yield request


_logs: dict[str, IO[str]] = {}


def _worker_log(path: str) -> IO[str]:
    # Line-buffered: each line is in the kernel as soon as it is written, so a SIGKILL loses
    # none of them.
    if path not in _logs:
        _logs[path] = Path(path).open("a", buffering=1)  # noqa: SIM115 (open for the process)
    return _logs[path]


def run_worker(directory: Path, name: str, redis_url: str, extra: dict[str, Any]) -> None:
    """Crawl until stopped (the ``worker`` command)."""
    from scrapy import Request, signals  # noqa: PLC0415
    from scrapy.crawler import CrawlerProcess  # noqa: PLC0415
    from scrapy_redis.spiders import RedisSpider  # type: ignore[import-untyped,unused-ignore]  # noqa: PLC0415

    from scrapy_robotsmeta.downloadermiddleware import RobotsTxtMiddleware  # noqa: PLC0415

    log_path = str(directory / f"worker-{name}.log")
    log = _worker_log(log_path)

    class FleetSpider(RedisSpider):  # type: ignore[misc]
        name = SPIDER
        redis_key = extra.get("FLEET_START_URLS_KEY", START_URLS_KEY)

        def pop_list_queue(self, redis_key: str, batch_size: int) -> list[bytes]:
            # Written down as they leave Redis: scrapy-redis turns them into requests lazily.
            datas: list[bytes] = super().pop_list_queue(redis_key, batch_size)
            for data in datas:
                log.write(f"read {data.decode()}\n")
            return datas

        def make_request_from_data(self, data: bytes) -> Request:
            # A plain URL, filtered like any link (scrapy-redis's own start requests are
            # dont_filter, which would fetch a page twice when a link also leads to it).
            return Request(data.decode(), callback=self.parse)

        def parse(self, response: Any, **kwargs: Any) -> Any:
            yield {"url": response.url}
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, callback=self.parse)

    def opened(spider: Any) -> None:
        robots = next(
            m
            for m in spider.crawler.engine.downloader.middleware.middlewares
            if isinstance(m, RobotsTxtMiddleware)
        )
        assert isinstance(robots.storage, RedisStorage)
        # The value this worker's fetch leases carry in Redis: who holds a lease is read there.
        log.write(f"opened {robots.storage._id}\n")

    def scheduled(request: Any, **kwargs: Any) -> None:
        log.write(f"sched{'-again' if request.dont_filter else ''} {request.url}\n")

    def dropped(request: Any, **kwargs: Any) -> None:
        log.write(f"dropped {request.url}\n")

    def closed(reason: str) -> None:
        log.write(f"closed {reason}\n")

    settings = {
        **WORKER_SETTINGS,
        "REDIS_URL": redis_url,
        "ROBOTSTXT_REDIS_URL": redis_url,
        "FLEET_WORKER_LOG": log_path,
        "LOG_FILE": str(directory / f"worker-{name}.scrapy.log"),
        # One item per page, with its robots field, in a file per worker.
        "FEEDS": {str(directory / f"items-{name}.jsonl"): {"format": "jsonlines"}},
        **extra,
    }
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(FleetSpider)
    crawler.signals.connect(opened, signals.spider_opened)
    crawler.signals.connect(closed, signals.spider_closed)
    crawler.signals.connect(scheduled, signals.request_scheduled)
    crawler.signals.connect(dropped, signals.request_dropped)
    process.crawl(crawler)
    process.start()


# -- the driver -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    """One request the site received."""

    time: float
    origin: str
    path: str
    status: str

    @property
    def url(self) -> str:
        return self.origin + self.path


def wait_until(condition: Callable[[], object], timeout: float, what: str) -> None:
    """Poll *condition* until it holds; fail after *timeout* seconds saying *what* was awaited."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up after {timeout:.0f} s waiting for {what}")
        time.sleep(0.02)


class Fleet:
    """The site process and the worker processes of one crawl, all killed on exit."""

    def __init__(self, directory: Path, redis_url: str, **settings: Any) -> None:
        import redis  # noqa: PLC0415 (a test dependency)

        self.directory = directory
        self.redis_url = redis_url
        self.settings = settings
        self.redis = redis.Redis.from_url(redis_url, socket_timeout=5)
        self.site: subprocess.Popen[bytes] | None = None
        self.workers: dict[str, subprocess.Popen[bytes]] = {}
        self.origins: list[str] = []
        self.pages = 0
        self._start_keys = {START_URLS_KEY}

    def __enter__(self) -> Fleet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _spawn(self, *args: str) -> subprocess.Popen[bytes]:
        root = Path(__file__).resolve().parents[1]
        # The child keeps its own copy of the descriptor: this process closes its one.
        with (self.directory / "stderr.log").open("ab") as stderr:
            return subprocess.Popen(
                [sys.executable, "-m", "tests.fleet_worker", *args],
                cwd=root,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )

    # -- the site

    def start_site(
        self,
        origins: int,
        pages: int,
        *,
        hold: bool,
        outage: bool,
        crawl_delay: float | None = None,
        links: bool = True,
    ) -> list[str]:
        """Start the site; *crawl_delay*: the Crawl-delay origin 0's robots.txt asks;
        *links*: whether pages link to other pages."""
        for flag, on in (("hold", hold), ("outage", outage), ("no-links", not links)):
            if on:
                (self.directory / flag).touch()
        if crawl_delay is not None:
            (self.directory / "crawl-delay").write_text(f"{crawl_delay:g}")
        self.site = self._spawn("site", str(self.directory), str(origins), str(pages))
        ready = self.directory / "origins.json"
        wait_until(ready.exists, 30, "the site to listen")
        self.origins = json.loads(ready.read_text())
        self.pages = pages
        return self.origins

    def end(self, flag: str) -> float:
        """End the site's hold or outage phase; the time it ended."""
        (self.directory / flag).unlink(missing_ok=True)
        return time.time()

    def hits(self) -> list[Hit]:
        path = self.directory / "site.log"
        if not path.exists():
            return []
        hits = []
        for line in path.read_text().splitlines():
            parts = line.split(" ")
            if len(parts) == 4:  # a line being written is left for the next read
                hits.append(Hit(float(parts[0]), parts[1], parts[2], parts[3]))
        return hits

    def allowed_pages(self) -> set[str]:
        return {origin + path for origin in self.origins for path in page_paths(self.pages)}

    def seed(self, urls: Iterable[str], key: str = START_URLS_KEY) -> None:
        """Push *urls* to the start URLs of the workers that read *key* (by default, all)."""
        self._start_keys.add(key)
        self.redis.rpush(key, *urls)

    # -- workers

    def start_worker(self, name: str, **settings: Any) -> subprocess.Popen[bytes]:
        """Start worker *name*, with *settings* on top of the fleet's (``FLEET_START_URLS_KEY``:
        the start URLs it reads, instead of the fleet's)."""
        process = self._spawn(
            "worker",
            str(self.directory),
            name,
            self.redis_url,
            json.dumps({**self.settings, **settings}),
        )
        self.workers[name] = process
        return process

    def start_each_with_own_urls(
        self,
        shares: dict[str, list[str]],
        own: dict[str, dict[str, Any]] | None = None,
        **settings: Any,
    ) -> None:
        """Start a worker per name of *shares*, each reading its own start URLs (and with the
        settings *own* gives its name, if any), and wait until they are all open. With one list
        for all, the first worker to open could read every start URL (scrapy-redis reads a
        batch as it idles) and crawl them alone."""
        for name, urls in shares.items():
            key = f"{START_URLS_KEY}:{name}"
            self.seed(urls, key)
            extra = (own or {}).get(name, {})
            self.start_worker(name, FLEET_START_URLS_KEY=key, **settings, **extra)
        self.wait_opened(*shares)

    def worker_log(self, name: str) -> list[str]:
        path = self.directory / f"worker-{name}.log"
        return path.read_text().splitlines() if path.exists() else []

    def lease_id(self, name: str) -> str | None:
        for line in self.worker_log(name):
            if line.startswith("opened "):
                return line.split(" ", 1)[1]
        return None

    def wait_opened(self, *names: str, timeout: float = 30) -> None:
        wait_until(
            lambda: all(self.lease_id(name) for name in names),
            timeout,
            f"workers {', '.join(names)} to open their crawl",
        )

    def steps(self, name: str) -> dict[str, list[str]]:
        """URL → its steps through worker *name* that changed something: a duplicate that was
        scheduled and dropped is left out."""
        steps: dict[str, list[str]] = {}
        for line in self.worker_log(name):
            step, _, url = line.partition(" ")
            seen = steps.setdefault(url, [])
            if step == "dropped" and seen and seen[-1] in ("sched", "sched-again"):
                seen.pop()
            else:
                seen.append(step)
        return steps

    def losses(self, name: str, missing: Iterable[str]) -> dict[str, set[str]]:
        """Where the *missing* pages were when worker *name* was killed, from its last step:

        - ``engine``: taken from scrapy-redis's start URLs or queue and not sent back to be
          parked, so Scrapy's engine held it, as in any scrapy-redis crawl (this includes a
          request some worker put in the queue and none took out: the killed worker took it
          in the instant between its pop and writing that step down);
        - ``outbox``: parked in the process, not yet written to Redis;
        - ``release``: taken out of Redis to be crawled, not yet in scrapy-redis's queue;
        - ``unexplained``: none of these.
        """
        everyone = {worker: self.steps(worker) for worker in self.workers}
        found: dict[str, set[str]] = {
            "engine": set(),
            "outbox": set(),
            "release": set(),
            "unexplained": set(),
        }
        for url in missing:
            seen = everyone[name].get(url, [])
            last = seen[-1] if seen else None
            trails = [steps.get(url, []) for steps in everyone.values()]
            popped_unseen = not any("dequeued" in trail for trail in trails) and any(
                trail and trail[-1] == "sched" for trail in trails
            )
            if last == "parked":
                found["outbox"].add(url)
            elif last == "released" or (last in ("sched", "sched-again") and "released" in seen):
                found["release"].add(url)
            elif last in ("read", "dequeued", "sched") or popped_unseen:
                found["engine"].add(url)
            else:
                found["unexplained"].add(url)
        return found

    def trail(self, url: str) -> dict[str, list[str]]:
        """Worker → every step of *url* through it, for the workers that saw it."""
        trails = {}
        for name in self.workers:
            steps = [
                line.partition(" ")[0]
                for line in self.worker_log(name)
                if line.partition(" ")[2] == url
            ]
            if steps:
                trails[name] = steps
        return trails

    def lease_holder(self, origin: str) -> str | None:
        """The worker that holds *origin*'s fetch lease now, if any."""
        value = self.redis.get(f"{PREFIX}:lease:{origin}")
        if value is None:
            return None
        owners = {self.lease_id(name): name for name in self.workers}
        return owners.get(value.decode() if isinstance(value, bytes) else str(value))

    def parked(self, origin: str) -> set[str]:
        """The URLs of the requests parked in Redis for *origin*."""
        key = f"{PREFIX}:parked:{origin}"
        # Each item is a pickled Request.to_dict(); its URL is all the driver needs.
        items = cast("list[bytes]", self.redis.lrange(key, 0, -1))
        return {pickle.loads(data)["url"] for data in items}

    def queued(self) -> bool:
        """Whether start URLs or scheduled requests wait in scrapy-redis's keys."""
        return bool(self.redis.exists(QUEUE_KEY, *self._start_keys))

    def kill(self, name: str) -> None:
        self.workers[name].send_signal(signal.SIGKILL)
        self.workers[name].wait(10)

    def interrupt(self, *names: str, timeout: float = 20) -> None:
        """SIGINT: Scrapy's clean stop. Waits for each worker to exit."""
        for name in names:
            self.workers[name].send_signal(signal.SIGINT)
        for name in names:
            self.workers[name].wait(timeout)

    def holding(self, origin: str) -> set[str]:
        """The URLs of *origin* that a worker took from scrapy-redis's queue and did not send
        back to be parked since (for an origin whose robots.txt has not answered: held inside
        its downloader). A duplicate of the URL scheduled meanwhile, from a page's links, may
        be parked without ``-again``: only a ``sched-again`` after the ``dequeued`` counts."""
        held = set()
        for name in self.running():
            for url, steps in self.steps(name).items():
                if url.startswith(f"{origin}/") and "dequeued" in steps:
                    since = steps[::-1].index("dequeued")
                    if "sched-again" not in steps[len(steps) - since :]:
                        held.add(url)
        return held

    def running(self) -> list[str]:
        return [name for name, process in self.workers.items() if process.poll() is None]

    def settled(self, quiet: float = 1.0) -> bool:
        """Nothing left to crawl: no start URL, queued or parked request in Redis, and the
        site, which has been reached, has received nothing for *quiet* seconds (a response's
        links would be queued within milliseconds of its request). Before the site's first
        request, the workers may hold every start URL they read, none sent yet."""
        if self.queued() or self.redis.exists(f"{PREFIX}:parked-origins"):
            return False
        hits = self.hits()
        return bool(hits) and time.time() - hits[-1].time > quiet

    def finish(self, timeout: float, quiet: float = 1.0) -> None:
        """Wait for the crawl to settle (the site quiet for *quiet* seconds), then stop the
        running workers."""
        wait_until(lambda: self.settled(quiet), timeout, "the crawl to settle")
        self.interrupt(*self.running())

    def close(self) -> None:
        """Kill whatever is still running (a failed test leaves nothing behind)."""
        for process in [*self.workers.values(), *([self.site] if self.site else [])]:
            if process.poll() is None:
                process.kill()
            process.wait(10)
        self.redis.close()


def main(argv: list[str]) -> None:
    command, directory = argv[0], Path(argv[1])
    if command == "site":
        serve(directory, int(argv[2]), int(argv[3]))
    elif command == "worker":
        extra = json.loads(argv[4]) if len(argv) > 4 else {}
        run_worker(directory, argv[2], argv[3], extra)
    else:
        sys.exit(f"unknown command {command!r}: site or worker")


if __name__ == "__main__":
    # Run from the module's importable name, so that the scheduler Scrapy loads by its path
    # shares this module's state (its open log file) instead of a second copy.
    from tests.fleet_worker import main as _main

    _main(sys.argv[1:])
