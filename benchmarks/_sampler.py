"""Which part of a process' CPU time robots handling takes, measured inside one run.

On a shared machine the CPU time of a whole crawl varies by ±20 % from run to run (compare
``--modes none,none``), which hides a cost of a few per cent. A share measured within one run
does not suffer from that: whatever slows the machine slows both sides of it.

About every millisecond of CPU time (SIGPROF), the CPU time since the last sample goes to the
nearest frame on the stack that *owns* work: the robots.txt part (this package's downloader
middleware and matcher, or Scrapy's robots.txt middleware and parser), the meta part (this
package's spider middleware and readers), or anything else of Scrapy, Twisted, asyncio or the
spider. Frames of helper libraries (urllib, w3lib, lxml, logging, Protego...) count for whoever
called them. Two kinds of Scrapy frames run our code for us and count as ours: the spider
middleware base class looping over a callback's output for our middleware, and the signal
dispatch calling one of our handlers.
"""

from __future__ import annotations

import signal
import time
from collections import defaultdict
from types import FrameType
from typing import Any

ROBOTSTXT, META, OTHER = "robots.txt", "meta", "other"
_OWNERS = (
    ("/scrapy_robotsmeta/downloadermiddleware.py", ROBOTSTXT),
    ("/scrapy_robotsmeta/robotstxt/", ROBOTSTXT),
    ("/scrapy/downloadermiddlewares/robotstxt.py", ROBOTSTXT),
    ("/scrapy/robotstxt.py", ROBOTSTXT),
    ("/scrapy_robotsmeta/spidermiddleware.py", META),
    ("/scrapy_robotsmeta/pagemeta.py", META),
    ("/scrapy_robotsmeta/directives.py", META),
    ("/scrapy/", OTHER),
    ("/twisted/", OTHER),
    ("/asyncio/", OTHER),
    ("/benchmarks/", OTHER),
)
# Scrapy frames that run one of our objects' code: (file, local variable holding it), and
# the modules of the classes that count.
_RUNNING_OURS = (("spidermiddlewares/base.py", "self"), ("pydispatch/robustapply.py", "receiver"))
_CLASS_PARTS = {
    "scrapy_robotsmeta.downloadermiddleware": ROBOTSTXT,
    "scrapy_robotsmeta.spidermiddleware": META,
    "scrapy.downloadermiddlewares.robotstxt": ROBOTSTXT,
}


def _part_of(obj: Any) -> str | None:
    """The part an object (or the object of a bound method) belongs to, if it is ours."""
    return _CLASS_PARTS.get(type(getattr(obj, "__self__", obj)).__module__)


def owner(frame: FrameType | None) -> str:
    while frame is not None:
        filename = frame.f_code.co_filename
        for fragment, variable in _RUNNING_OURS:
            if filename.endswith(fragment):
                part = _part_of(frame.f_locals.get(variable))
                if part is not None:
                    return part
        for fragment, part in _OWNERS:
            if fragment in filename:
                return part
        frame = frame.f_back
    return OTHER


class Sampler:
    def __init__(self, interval: float = 0.001) -> None:
        self.interval = interval
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self._last = 0.0

    def _sample(self, signum: int, frame: FrameType | None) -> None:
        # Python runs the handler between two bytecodes: the signals of a long C call (lxml
        # parsing a page) arrive as one, so each sample weighs the CPU time it stands for.
        now = time.process_time()
        self.seconds[owner(frame)] += now - self._last
        self._last = now

    def start(self) -> None:
        self._last = time.process_time()
        signal.signal(signal.SIGPROF, self._sample)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)

    def stop(self) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)

    def share(self, part: str) -> float:
        return self.seconds[part] / (sum(self.seconds.values()) or 1.0)
