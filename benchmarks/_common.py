"""What every benchmark shares: the corpus, robust statistics, a table, the machine."""

from __future__ import annotations

import argparse
import math
import os
import platform
import shutil
import statistics
import sys
from collections.abc import Iterable, Sequence
from dataclasses import replace
from importlib.metadata import version
from pathlib import Path

from scrapy_robotsmeta.robotstxt import policy
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import Hop, Outcome
from tests.shared import CORPUS


def corpus() -> dict[str, bytes]:
    """Host → robots.txt body, for every file of the corpus; exits when it is absent."""
    if not CORPUS.is_dir():
        sys.exit(f"robots.txt corpus not found at {CORPUS}")
    return {
        path.name: path.read_bytes()
        for path in sorted(CORPUS.iterdir())
        if path.is_file() and path.suffix != ".md"
    }


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile: a value that was actually measured."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def median(values: Iterable[float]) -> float:
    return statistics.median(values)


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table, so that the output can be pasted into the README as it is."""
    lines = [list(header), *([str(cell) for cell in row] for row in rows)]
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(header))]

    def render(cells: Sequence[object]) -> str:
        return (
            "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"
        )

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([render(lines[0]), rule, *(render(line) for line in lines[1:])])


def pin(cpu: int) -> None:
    """Keep this process on one CPU (an index into the allowed ones, as for a list): the crawl
    benchmark's server and crawler then never trade places, which made CPU times noisier."""
    if hasattr(os, "sched_setaffinity"):
        allowed = sorted(os.sched_getaffinity(0))
        if len(allowed) > 1:
            os.sched_setaffinity(0, {allowed[cpu]})


def machine() -> str:
    """One line naming what the figures were measured on."""
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    return (
        f"{os.cpu_count()} CPUs ({model}), Python {platform.python_version()}, "
        f"Scrapy {version('scrapy')}, Protego {version('protego')}, "
        f"parsel {version('parsel')}, lxml {version('lxml')}; load average {load}"
    )


def beside(value: str) -> tuple[str, Path]:
    """``LABEL=PATH`` of ``--beside``: another checkout of this project, whose code a
    benchmark runs in the same session as this one's, its modes named ``mode@LABEL``."""
    label, _, path = value.partition("=")
    checkout = Path(path).resolve()
    if not label or not (checkout / "scrapy_robotsmeta").is_dir():
        raise argparse.ArgumentTypeError(f"{value!r}: LABEL=PATH of a checkout of this project")
    return label, checkout


def in_checkout(checkout: Path | None) -> tuple[Path | None, dict[str, str] | None]:
    """The working directory and environment that run ``python -m benchmarks.…`` on
    *checkout*'s code (its benchmark too, so that each side is measured by its own script) or,
    for None, on this one's."""
    if checkout is None:
        return None, None
    return checkout, {**os.environ, "PYTHONPATH": str(checkout)}


def answered_200(origin: Origin, body: bytes) -> Outcome:
    """The outcome of a fetch of *origin*'s robots.txt answered 200 with *body*, with the one
    request such a fetch records."""
    return replace(policy.from_response(200, body), hops=(Hop(origin.robots_url, 200),))


def fleet_arguments(description: str, rounds: int, timeout: float) -> argparse.ArgumentParser:
    """The options every fleet benchmark takes: fleet sizes, the site's size, rounds, and a
    time limit per crawl (each adds its own)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--workers", default="1,2,4", help="fleet sizes, comma-separated")
    parser.add_argument("--origins", type=int, default=6)
    parser.add_argument("--pages", type=int, default=200, help="pages per origin")
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--timeout", type=float, default=timeout, help="per crawl")
    return parser


def fleet_sizes(args: argparse.Namespace) -> list[int]:
    """The fleet sizes asked for; exits saying how to get redis-server when it is missing."""
    from tests.redisserver import HOW_TO_GET_ONE  # noqa: PLC0415 (the fleet benchmarks only)

    if shutil.which("redis-server") is None:
        sys.exit(HOW_TO_GET_ONE)
    return [int(size) for size in args.workers.split(",")]
