"""Cost of reading a Content-Usage value with http-sf, against the page it comes with.

    .venv/bin/python -m benchmarks.usage_values [--rounds 7]

A value is parsed once per distinct string (``vocabulary._content_usage`` is cached), then
every page that carries it costs a cache hit. Both are timed here for values of the shapes
sites serve: a parse (each call a string the cache does not hold: the value with other
surrounding whitespace, more of them than the cache keeps) and a read through the cache; each
figure is the best of the rounds, per call.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial
from itertools import cycle
from timeit import repeat

from benchmarks._common import machine, table
from benchmarks._results import write_figures
from scrapy_robotsmeta.usage import vocabulary

VALUES = (
    "train-ai=n",
    "train-ai=y, search=n",
    "search=y, train-ai=n, ai-use=n",
    'train-ai=n;note="licensed", search=y',
    "Train-AI=n",  # fails to parse: states nothing
)
CALLS = 20_000
#: More distinct strings than the reader's cache keeps (1,024), so that each call parses.
VARIANTS = 2_000


def per_call_us(call: Callable[[], object], rounds: int) -> float:
    return min(repeat(call, number=CALLS, repeat=rounds)) / CALLS * 1e6


def uncached_reader(value: str) -> Callable[[], object]:
    """A call that reads *value* each time under whitespace the cache has not seen lately."""
    variants = cycle([" " * (i % 40) + value + "\t" * (i // 40) for i in range(VARIANTS)])
    return lambda: vocabulary.read_content_usage(next(variants), "header")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    rows, figures = [], {}
    for value in VALUES:
        parse = per_call_us(uncached_reader(value), args.rounds)
        hit = per_call_us(partial(vocabulary.read_content_usage, value, "header"), args.rounds)
        rows.append((value, f"{parse:.2f}", f"{hit:.3f}"))
        figures[value] = {"parse_us": round(parse, 3), "cached_us": round(hit, 3)}
    print(machine())
    print(table(("value", "µs per distinct value", "µs per page (cached)"), rows))
    write_figures("usage_values", {"machine": machine(), "values": figures})


if __name__ == "__main__":
    main()
