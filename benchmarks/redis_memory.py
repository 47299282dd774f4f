"""Memory RedisStorage uses in Redis: bytes per origin state, and per parked request.

    .venv/bin/python -m benchmarks.redis_memory [--origins 11291] [--requests 20000]

A redis-server of the benchmark's own (on a free 127.0.0.1 port, nothing saved to disk) is
filled through RedisStorage itself, as a crawl fills it:

- origin states: for each origin, the fetch's 200 outcome of a corpus file (the files used in
  turn, as in benchmarks/tiers.py) is applied to its state and published with
  ``RedisStorage.publish()`` — the ``P:state:<origin>`` hash of the state's JSON snapshot and
  the robots.txt body, with its expiry;
- parked requests: requests as a CrawlSpider yields them (a spider-method callback, the rule
  and link text in meta) are parked with ``RedisStorage.park()``, spread over 10 origins, and
  written to their ``P:parked:<origin>`` lists;
- fetch leases: ``RedisStorage.claim_fetch()`` for 1,000 origins, each leaving its
  ``P:lease:<origin>`` key (which exists only while a fetch runs).

Per key: ``MEMORY USAGE`` (exact: ``SAMPLES 0``). In all: ``used_memory`` of ``INFO memory``
before and after, divided by the number added, which also counts Redis's key table and its
expiry table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks._common import answered_200, corpus, machine, median, percentile, table
from benchmarks._ownredis import missing, own_redis

if TYPE_CHECKING:
    import redis

RESULTS = Path(__file__).resolve().parent / "results" / "redis_memory.json"
PREFIX = "robotsmeta:bench"
PARKED_ORIGINS = 10
LEASES = 1000


def used_memory(client: redis.Redis) -> int:
    return int(client.info("memory")["used_memory"])


def key_sizes(client: redis.Redis, pattern: str) -> list[int]:
    sizes = []
    for key in client.scan_iter(match=pattern, count=1000):
        size = client.memory_usage(key, samples=0)
        assert size is not None
        sizes.append(int(size))
    return sizes


def storage(redis_url: str) -> Any:
    """A RedisStorage as a crawl of the spider ``bench`` makes it, on a clock at 0."""
    from scrapy import Spider  # noqa: PLC0415 (after the reactor is installed)
    from scrapy.utils.test import get_crawler  # noqa: PLC0415
    from twisted.internet.task import Clock  # noqa: PLC0415

    from scrapy_robotsmeta.reactor import CLOCK_ATTRIBUTE  # noqa: PLC0415
    from scrapy_robotsmeta.storage import RedisStorage  # noqa: PLC0415

    class BenchSpider(Spider):
        name = "bench"

        def parse_page(self, response: Any) -> None:
            pass

    crawler = get_crawler(
        BenchSpider,
        {
            "ROBOTSTXT_REDIS_URL": redis_url,
            "ROBOTSTXT_CACHE_SIZE": 10**9,
            "LOG_LEVEL": "ERROR",
        },
    )
    crawler.spider = BenchSpider()
    setattr(crawler, CLOCK_ATTRIBUTE, Clock())
    return RedisStorage(crawler)


async def publish_origins(redis_url: str, bodies: list[bytes], count: int) -> None:
    """Publish *count* origin states."""
    from scrapy_robotsmeta.robotstxt.origin import origin_of  # noqa: PLC0415
    from scrapy_robotsmeta.robotstxt.state import OriginState, Timing  # noqa: PLC0415

    # Scrapy's and the package's defaults: a state lives a day, plus the outage grace.
    timing = Timing()
    store = storage(redis_url)
    await store.open()
    for index in range(count):
        origin = origin_of(f"https://site{index}.example/")
        assert origin is not None
        state = OriginState(origin)
        state.start_fetch(0.0, timing)
        outcome = answered_200(origin, bodies[index % len(bodies)])
        state.apply(outcome, 0.0, timing)
        await store.publish(origin, state.snapshot(), outcome.body, fetched=True)
    assert not store.stats.get_value("robotstxt/redis/errors")
    await store.close()


async def claim_leases(redis_url: str, count: int) -> None:
    """Take the fetch lease of *count* origins, as a process does before fetching."""
    from scrapy_robotsmeta.robotstxt.origin import origin_of  # noqa: PLC0415

    store = storage(redis_url)
    await store.open()
    for index in range(count):
        origin = origin_of(f"https://lease{index}.example/")
        assert origin is not None
        assert await store.claim_fetch(origin, lambda published: False)
    # Not closed: closing drops the leases, which is what is measured here. The renewals run
    # on a clock that never moves.


async def park_requests(redis_url: str, client: redis.Redis, count: int) -> int:
    """Park *count* requests over PARKED_ORIGINS origins and wait until Redis holds them all;
    return the mean size of one serialised request."""
    from scrapy import Request  # noqa: PLC0415

    from scrapy_robotsmeta.robotstxt.origin import origin_of  # noqa: PLC0415

    store = storage(redis_url)
    await store.open()
    spider = store.spider
    serialised = 0
    for index in range(count):
        url = f"https://shop{index % PARKED_ORIGINS}.example/products/item-{index}.html"
        request = Request(
            url,
            callback=spider.parse_page,
            meta={"rule": 0, "link_text": f"Item {index}", "depth": 2},
        )
        origin = origin_of(url)
        assert origin is not None
        store.park(origin, request)
        serialised += len(store.codec.dump(request) or b"")
    while sum(int(client.llen(key)) for key in client.scan_iter(f"{PREFIX}:parked:*")) < count:
        await asyncio.sleep(0.05)
    assert not store.stats.get_value("robotstxt/redis/errors")
    await store.close()
    return serialised // count


def summary(sizes: list[int]) -> list[tuple[str, float]]:
    return [
        ("median", median(sizes)),
        ("p90", percentile(sizes, 0.9)),
        ("p99", percentile(sizes, 0.99)),
        ("max", max(sizes)),
        ("mean", sum(sizes) / len(sizes)),
    ]


async def measure(redis_url: str, args: argparse.Namespace) -> dict[str, Any]:
    import redis  # noqa: PLC0415 (an optional dependency)

    bodies = list(corpus().values())
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    before = used_memory(client)
    await publish_origins(redis_url, bodies, args.origins)
    origins_total = used_memory(client) - before
    # The body kept is what the state was parsed from: the first 500 KiB of a longer file.
    states, lengths = [], []
    for key in client.scan_iter(match=f"{PREFIX}:state:*", count=1000):
        size = client.memory_usage(key, samples=0)
        assert size is not None
        states.append(int(size))
        lengths.append(int(client.hstrlen(key, "body")))
    state_minus_body = [size - length for size, length in zip(states, lengths, strict=True)]
    assert len(states) == args.origins, len(states)

    client.flushdb()
    before = used_memory(client)
    request_bytes = await park_requests(redis_url, client, args.requests)
    lists = key_sizes(client, f"{PREFIX}:parked:*")
    parked_total = used_memory(client) - before

    client.flushdb()
    await claim_leases(redis_url, LEASES)
    leases = key_sizes(client, f"{PREFIX}:lease:*")
    assert len(leases) == LEASES, len(leases)
    client.close()
    return {
        "machine": machine(),
        "redis_version": redis_version(redis_url),
        "origins": args.origins,
        "state_key_bytes": dict(summary(states)),
        "robotstxt_body_bytes": dict(summary(lengths)),
        "state_key_bytes_minus_body_median": median(state_minus_body),
        "used_memory_per_origin": origins_total / args.origins,
        "requests": args.requests,
        "serialised_request_bytes": request_bytes,
        "parked_list_bytes_per_request": sum(lists) / args.requests,
        "used_memory_per_parked_request": parked_total / args.requests,
        "lease_key_bytes": median(leases),
    }


def redis_version(redis_url: str) -> str:
    import redis  # noqa: PLC0415

    client = redis.Redis.from_url(redis_url)
    try:
        return str(client.info("server")["redis_version"])
    finally:
        client.close()


def report(figures: dict[str, Any]) -> None:
    print(
        f"\nBytes per origin state in Redis, {figures['origins']:,} origins "
        "(the P:state:<origin> hash, exact MEMORY USAGE)"
    )
    state, body = figures["state_key_bytes"], figures["robotstxt_body_bytes"]
    print(
        table(
            ("per origin", "state key (bytes)", "robots.txt body kept in it (bytes)"),
            [(label, f"{state[label]:,.0f}", f"{body[label]:,.0f}") for label in state],
        )
    )
    print(
        f"\nused_memory per origin: {figures['used_memory_per_origin']:,.0f} bytes "
        "(keys, values, key table, expiry table); a state key without its body: "
        f"{figures['state_key_bytes_minus_body_median']:,.0f} bytes at the median"
    )
    print(
        f"a fetch lease, while a fetch runs: {figures['lease_key_bytes']:,.0f} bytes "
        "(MEMORY USAGE, median)"
    )
    print(f"\nBytes per parked request in Redis, {figures['requests']:,} requests")
    print(
        table(
            ("per request", "bytes"),
            [
                (
                    "serialised request (pickled to_dict)",
                    f"{figures['serialised_request_bytes']:,}",
                ),
                ("P:parked:<origin> lists", f"{figures['parked_list_bytes_per_request']:,.0f}"),
                ("used_memory", f"{figures['used_memory_per_parked_request']:,.0f}"),
            ],
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--origins", type=int, default=7 * 1613)
    parser.add_argument("--requests", type=int, default=20_000)
    args = parser.parse_args()
    if (reason := missing()) is not None:
        print(f"Nothing measured: {reason}.")
        return
    from scrapy.utils.defer import deferred_from_coro  # noqa: PLC0415
    from scrapy.utils.reactor import install_reactor  # noqa: PLC0415

    # RedisStorage runs on Scrapy's asyncio reactor, as in a crawl.
    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    from twisted.internet.task import react  # noqa: PLC0415

    print(f"{machine()}")
    figures: dict[str, Any] = {}

    async def run(reactor: Any) -> None:
        with own_redis() as url:
            figures.update(await measure(url, args))

    try:
        react(lambda reactor: deferred_from_coro(run(reactor)))
    except SystemExit as exit_:
        if exit_.code:
            raise
    report(figures)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"\nFigures written to {RESULTS.relative_to(Path.cwd())}")


if __name__ == "__main__":
    main()
