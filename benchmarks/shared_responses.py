"""Memory a kept robots.txt response costs per origin (``ROBOTSTXT_RESPONSE_MEMORY``).

    .venv/bin/python -m benchmarks.shared_responses

For every file of the corpus, a response is built as Scrapy's downloader builds one for a
robots.txt (a ``TextResponse`` with the headers a web server commonly sends: type, length,
date, server, validators, caching) and handed to ``RobotsTxtResponses.keep()`` as a fetch does;
the response built (with a body of its own) is then let go, so that what stays is what the
package keeps. Measured with
``tracemalloc`` per origin (the kept copy, its headers, the body and the table's entry),
against the estimate the memory bound counts (``RESPONSE_BYTES`` + body + header bytes).
"""

from __future__ import annotations

import argparse
import gc
import math
import tracemalloc
from typing import Any

from benchmarks._common import corpus, machine, median, percentile, table
from benchmarks._results import write_figures

HEADERS = {
    "Content-Type": "text/plain; charset=utf-8",
    "Date": "Wed, 25 Nov 2026 17:00:00 GMT",
    "Server": "nginx",
    "Last-Modified": "Mon, 02 Nov 2026 09:12:44 GMT",
    "ETag": '"6547a9dc-1b3"',
    "Cache-Control": "max-age=86400",
    "Vary": "Accept-Encoding",
    "Accept-Ranges": "bytes",
}


def measure() -> dict[str, Any]:
    from scrapy import Request  # noqa: PLC0415
    from scrapy.http import TextResponse  # noqa: PLC0415
    from scrapy.utils.test import get_crawler  # noqa: PLC0415
    from twisted.internet.task import Clock  # noqa: PLC0415

    from scrapy_robotsmeta.robotstxt.origin import origin_of  # noqa: PLC0415
    from scrapy_robotsmeta.robotstxt_responses import (  # noqa: PLC0415
        RESPONSE_BYTES,
        RobotsTxtResponses,
    )

    files = corpus()
    stats = get_crawler().stats
    assert stats is not None
    kept = RobotsTxtResponses(stats, 1 << 40, math.inf, Clock())
    measured: list[int] = []
    estimated: list[int] = []
    bodies: list[int] = []
    tracemalloc.start()
    for host, body in files.items():
        origin = origin_of(f"https://{host}/")
        assert origin is not None
        url = origin.robots_url
        headers = {**HEADERS, "Content-Length": str(len(body))}
        gc.collect()
        estimated_before = kept.kept_bytes
        before = tracemalloc.get_traced_memory()[0]
        # A body of its own, as a download's is: kept by nothing but the response.
        fresh = bytes(bytearray(body))
        response = TextResponse(url, body=fresh, headers=headers, request=Request(url))
        del fresh
        kept.keep(origin, response)
        del response
        gc.collect()
        measured.append(tracemalloc.get_traced_memory()[0] - before)
        estimated.append(kept.kept_bytes - estimated_before)
        answer = kept.answer(Request(url), origin)
        assert answer is not None
        bodies.append(len(answer.body))
    tracemalloc.stop()
    overheads = [m - b for m, b in zip(measured, bodies, strict=True)]
    ratios = [e / m for e, m in zip(estimated, measured, strict=True) if m > 0]
    return {
        "files": len(files),
        "response_bytes_constant": RESPONSE_BYTES,
        "measured_bytes": summary(measured),
        "body_bytes": summary(bodies),
        "beside_the_body_bytes": summary(overheads),
        "estimate_over_measured": summary(ratios),
    }


def summary(values: list[int] | list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median": median(ordered),
        "p10": percentile(ordered, 0.1),
        "p90": percentile(ordered, 0.9),
        "max": ordered[-1],
        "mean": sum(ordered) / len(ordered),
    }


def report(figures: dict[str, Any]) -> None:
    print(
        f"{figures['files']} corpus files, RESPONSE_BYTES = {figures['response_bytes_constant']}"
    )
    rows = []
    for name in (
        "measured_bytes",
        "body_bytes",
        "beside_the_body_bytes",
        "estimate_over_measured",
    ):
        values = figures[name]
        rows.append(
            [name.replace("_", " ")]
            + [
                f"{values[k]:,.2f}" if name.startswith("estimate") else f"{values[k]:,.0f}"
                for k in ("p10", "median", "p90", "max", "mean")
            ]
        )
    print(table(["per origin", "p10", "median", "p90", "max", "mean"], rows))


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    print(machine())
    figures = measure()
    report(figures)
    write_figures("shared_responses", figures)


if __name__ == "__main__":
    main()
