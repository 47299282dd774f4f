"""The origin cache at a broad crawl's scale, without a crawl: memory against its bound, and
the cost of reading back an origin that left memory.

    .venv/bin/python -m benchmarks.tiers [--origins 1000000] [--memory 64000000]
        [--lookups 20000]

Each corpus file is parsed once (and the group of the benchmark's token compiled, as a crawl's
first check does), then given to every origin whose number maps to it, as its own copy
(unpickled): ``--origins`` made-up origins go through an ``OriginCache`` bounded by
``--memory`` bytes with the default storage's second tier (a SQLite file in a temporary
directory), as a crawl's fetches would put them. The process's RSS over its baseline (taken
once the corpus is loaded) is sampled as they go in. Then ``--lookups`` origins that left
memory, drawn at random, are read back one by one (``peek``), and as many others taken back
into memory as a request of each would (the look-up, then a verdict), each timed.

Bytes per origin in memory are measured apart, with tracemalloc, for each corpus file once,
against the cache's own estimate (which its bound counts).
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import random
import tempfile
import time
import tracemalloc
from pathlib import Path

from benchmarks._common import corpus, machine, median, percentile, table
from benchmarks._results import write_figures
from scrapy_robotsmeta.robotstxt import RobotsTxt
from scrapy_robotsmeta.robotstxt.cache import OriginCache, state_bytes
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import Hop, Outcome
from scrapy_robotsmeta.robotstxt.state import Timing
from scrapy_robotsmeta.robotstxt.statefile import StateFile
from scrapy_robotsmeta.robotstxt.status import Status

TOKEN = "mybot"
TIMING = Timing()
# Targets of the broad-crawl issue.
TARGET_BYTES_PER_ORIGIN = 1_000
TARGET_LOOKUP_US = 50.0


def rss() -> int:
    resident_pages = int(Path("/proc/self/statm").read_text().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE")


def origin(index: int) -> Origin:
    return Origin("https", f"site{index}.example", 443)


def url(index: int) -> str:
    return f"https://site{index}.example/products/item-{index % 97}.html"


def fetched(cache: OriginCache, index: int, rules: RobotsTxt) -> None:
    """What a crawl's fetch does to the cache: a state, a 200 outcome, then its first use."""
    where = origin(index)
    state = cache.get_or_create(where)
    state.start_fetch(0.0, TIMING)
    hops = (Hop(where.robots_url, 200),)
    state.apply(Outcome(Status.RULES, "HTTP 200", rules, hops=hops), 0.0, TIMING)
    cache.get_or_create(where)


Sizes = tuple[list[int], list[int]]


def bytes_per_origin(blobs: list[bytes]) -> dict[str, Sizes]:
    """(measured, estimated) bytes each corpus file's origin holds in memory, live (its rules
    parsed, the token's group compiled) and packed (its record)."""
    live: Sizes = ([], [])
    cache = OriginCache(10**12)
    tracemalloc.start()
    for index, blob in enumerate(blobs):
        before = tracemalloc.get_traced_memory()[0]
        fetched(cache, index, pickle.loads(blob))
        state = cache.peek(origin(index))
        assert state is not None
        assert state.rules is not None
        state.rules.allowed(url(index), TOKEN)
        live[0].append(tracemalloc.get_traced_memory()[0] - before)
        live[1].append(state_bytes(state))
    del cache, state
    packed: Sizes = ([], [])
    # Live states get no share of the bound: the origin used before the current one is packed.
    cache = OriginCache(10**12, live_share=0.0)
    other = Origin("https", "other.example", 443)  # never fetched: dropped, never packed
    for index, blob in enumerate(blobs):
        before, estimated_before = tracemalloc.get_traced_memory()[0], cache.bytes
        rules = pickle.loads(blob)
        rules.allowed(url(index), TOKEN)
        fetched(cache, index, rules)  # drops other
        del rules
        cache.get_or_create(other)  # packs the origin (freeing its live state), brings other back
        packed[0].append(tracemalloc.get_traced_memory()[0] - before)
        packed[1].append(cache.bytes - estimated_before)
    tracemalloc.stop()
    return {"live": live, "packed": packed}


def fill(blobs: list[bytes], count: int, memory: int, directory: str) -> dict[str, object]:
    cache = OriginCache(memory, second=StateFile(directory))
    gc.collect()
    baseline = rss()
    samples = []
    started = time.perf_counter()
    for index in range(count):
        fetched(cache, index, pickle.loads(blobs[index % len(blobs)]))
        if (index + 1) % max(count // 20, 1) == 0:
            samples.append(
                {
                    "origins": index + 1,
                    "in_memory": len(cache),
                    "estimated_bytes": cache.bytes,
                    "rss_growth": rss() - baseline,
                }
            )
            print(
                f"  {index + 1:>9,} origins: {len(cache):,} in memory, RSS +"
                f"{(rss() - baseline) / 1e6:.1f} MB",
                flush=True,
            )
    fill_seconds = time.perf_counter() - started
    spilled = [i for i in random.Random(1).sample(range(count), count) if origin(i) not in cache]
    return {
        "cache": cache,
        "samples": samples,
        "fill_seconds": fill_seconds,
        "spilled": spilled,
        "baseline": baseline,
    }


def lookups(
    cache: OriginCache, spilled: list[int], count: int
) -> tuple[list[float], list[float], list[float]]:
    """Microseconds of, for origins that had left memory: reading one back (``peek``: the disk
    tier's row, unpacked), and for others taking one back into memory as a request does
    (``get_or_create``, with the upkeep its arrival causes: packing others, records leaving
    memory), alone and followed by a verdict."""
    read_back, alone, with_verdict = [], [], []
    for index in spilled[:count]:
        started = time.perf_counter()
        cache.peek(origin(index))
        read_back.append((time.perf_counter() - started) * 1e6)
    for index in spilled[count : 2 * count]:
        started = time.perf_counter()
        state = cache.get_or_create(origin(index))
        looked_up = time.perf_counter()
        assert state.rules is not None
        state.rules.allowed(url(index), TOKEN)
        done = time.perf_counter()
        alone.append((looked_up - started) * 1e6)
        with_verdict.append((done - started) * 1e6)
    return read_back, alone, with_verdict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--origins", type=int, default=1_000_000)
    parser.add_argument("--memory", type=int, default=64_000_000, help="ROBOTSTXT_CACHE_MEMORY")
    parser.add_argument("--lookups", type=int, default=20_000)
    args = parser.parse_args()

    bodies = list(corpus().values())
    blobs = []
    for body in bodies:
        rules = RobotsTxt.parse(body)
        rules.allowed("https://example.com/products/item-1.html", TOKEN)  # compiled, as in use
        blobs.append(pickle.dumps(rules, protocol=pickle.HIGHEST_PROTOCOL))
    print(f"{len(bodies)} corpus files; {machine()}\n")

    print(
        f"{args.origins:,} origins through a cache of {args.memory:,} bytes, then "
        f"{args.lookups:,} look-ups of origins that left memory"
    )
    with tempfile.TemporaryDirectory(prefix="bench-tiers-") as directory:
        filled = fill(blobs, args.origins, args.memory, directory)
        cache = filled["cache"]
        assert isinstance(cache, OriginCache)
        spilled = filled["spilled"]
        assert isinstance(spilled, list)
        read_back, alone, with_verdict = lookups(cache, spilled, args.lookups)
        disk_bytes = sum(f.stat().st_size for f in Path(directory).rglob("*") if f.is_file())
    sizes = bytes_per_origin(blobs)
    measured = sizes["packed"][0]
    print("Bytes per origin in memory, one token (tracemalloc, each corpus file once)")
    rows, figures = [], {}
    for form, (form_measured, form_estimated) in sizes.items():
        pairs = zip(form_measured, form_estimated, strict=True)
        under = sum(e >= m for m, e in pairs) / len(form_measured)
        rows += [
            [form, "median", f"{median(form_measured):,.0f}", f"{median(form_estimated):,.0f}"],
            [
                "",
                "p90",
                f"{percentile(form_measured, 0.9):,}",
                f"{percentile(form_estimated, 0.9):,}",
            ],
            ["", "estimate ≥ measured", f"{under:.0%} of the files", ""],
        ]
        figures[form] = {
            "measured_median": median(form_measured),
            "measured_p90": percentile(form_measured, 0.9),
            "estimated_median": median(form_estimated),
            "estimate_at_least_measured": under,
        }
    print(table(["form", "", "measured", "cache's estimate"], rows) + "\n")

    samples = filled["samples"]
    assert isinstance(samples, list)
    most_rss = max(sample["rss_growth"] for sample in samples)
    print(
        table(
            ["figure", "value", "target"],
            [
                [
                    "RSS growth over the baseline, most",
                    f"{most_rss / 1e6:,.1f} MB",
                    f"≤ {args.memory / 1e6:,.0f} MB (the bound)",
                ],
                ["origins in memory at the end", f"{len(cache):,} ({cache.live:,} live)", ""],
                ["second tier on disk", f"{disk_bytes / 1e6:,.0f} MB", ""],
                [
                    "filling, per origin",
                    f"{filled['fill_seconds'] / args.origins * 1e6:,.0f} µs",
                    "",
                ],
                [
                    "look-up of an origin that left memory (read back), median",
                    f"{median(read_back):,.1f} µs",
                    f"≤ {TARGET_LOOKUP_US:g} µs",
                ],
                ["  p90", f"{percentile(read_back, 0.9):,.1f} µs", ""],
                [
                    "taken back into memory, with the upkeep it causes, median",
                    f"{median(alone):,.1f} µs",
                    "",
                ],
                ["  p90", f"{percentile(alone, 0.9):,.1f} µs", ""],
                ["  and a verdict, median", f"{median(with_verdict):,.1f} µs", ""],
                [
                    "bytes per packed origin in memory, median",
                    f"{median(measured):,.0f}",
                    f"≤ {TARGET_BYTES_PER_ORIGIN:,}",
                ],
            ],
        )
    )
    write_figures(
        "tiers",
        {
            "machine": machine(),
            "origins": args.origins,
            "memory_bound": args.memory,
            "bytes_per_origin": {**figures, "target": TARGET_BYTES_PER_ORIGIN},
            "in_memory_at_the_end": {"origins": len(cache), "live": cache.live},
            "fill": {"seconds": filled["fill_seconds"], "samples": samples},
            "rss_growth_most": most_rss,
            "disk_bytes": disk_bytes,
            "lookup_us": {
                "read_back_median": median(read_back),
                "read_back_p90": percentile(read_back, 0.9),
                "into_memory_median": median(alone),
                "into_memory_p90": percentile(alone, 0.9),
                "into_memory_with_verdict_median": median(with_verdict),
                "target": TARGET_LOOKUP_US,
            },
        },
    )


if __name__ == "__main__":
    main()
