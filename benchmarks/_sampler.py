"""Which part of a process' CPU time robots handling takes, measured inside one run.

On a shared machine the CPU time of a whole crawl varies by ±20 % from run to run (compare
``--modes none,none``), which hides a cost of a few per cent. A share measured within one run
does not suffer from that: whatever slows the machine slows both sides of it.

About every millisecond of CPU time (SIGPROF), the CPU time since the last sample goes to the
nearest frame on the stack that *owns* work: the robots.txt part (every module of this package
but the meta part's: middleware, fetcher, parking lot, storages, matcher; or Scrapy's robots.txt
middleware and parser), the meta part (this package's spider middleware and readers), or
anything else of Scrapy, Twisted, asyncio or the spider. Frames of helper libraries (urllib,
w3lib, lxml, logging, Protego, redis-py...) count for whoever called them. Two kinds of Scrapy
frames run our code for us and count as ours: the spider middleware base class looping over a
callback's output for our middleware, and the signal dispatch calling one of our handlers.
A crawl may also name libraries that only our code uses in it (redis-py for RedisStorage):
their frames are then ours even when the event loop runs them. Frames are told apart by the
name of their module (the frame's ``__name__``), never by their file's path: code that moves,
or a package installed elsewhere, keeps its owner.
"""

from __future__ import annotations

import signal
import time
from collections import defaultdict
from types import FrameType
from typing import Any

ROBOTSTXT, META, OTHER = "robots.txt", "meta", "other"
# This package's modules by name: the meta part's are listed, and every other module of the
# package is the robots.txt part (middleware, fetcher, parking lot, reactor helpers, storages,
# matcher), so code that moves between modules stays counted where it belongs. The
# user-agent helpers and the usage preferences' readers serve both parts and count for their
# caller.
_META_MODULES = ("spidermiddleware", "robotsmeta")
_SHARED_MODULES = ("useragent", "defaults", "usage")
_PACKAGE = "scrapy_robotsmeta"
# Other code by module name, the most specific first. A spider run as a script
# (``python -m benchmarks.crawl``) is ``__main__``.
_OWNERS = (
    ("scrapy.downloadermiddlewares.robotstxt", ROBOTSTXT),
    ("scrapy.robotstxt", ROBOTSTXT),
    ("scrapy", OTHER),
    ("twisted", OTHER),
    ("asyncio", OTHER),
    ("benchmarks", OTHER),
    ("__main__", OTHER),
)
# Scrapy frames that run one of our objects' code: (module, local variable holding it).
_RUNNING_OURS = (
    ("scrapy.spidermiddlewares.base", "self"),
    ("pydispatch.robustapply", "receiver"),
)


def _in(module: str, package: str) -> bool:
    """Whether *module* is *package* or one of its submodules."""
    return module == package or module.startswith(package + ".")


def _module_part(module: str) -> str | None:
    """The part a module belongs to, None when its frames count for their caller's (the
    package's shared helpers, helper libraries)."""
    if _in(module, _PACKAGE):
        name = module.split(".")[1] if "." in module else ""
        if name in _META_MODULES:
            return META
        if name in _SHARED_MODULES:
            return None
        return ROBOTSTXT
    for package, part in _OWNERS:
        if _in(module, package):
            return part
    return None


def _part_of(obj: Any) -> str | None:
    """The part an object (or the object of a bound method) belongs to, by its class' module."""
    return _module_part(type(getattr(obj, "__self__", obj)).__module__)


def owner(frame: FrameType | None, libraries: tuple[str, ...] = ()) -> str:
    """The part that owns the innermost frame; *libraries*: packages (module names) whose
    frames are the robots.txt part's even when no frame of ours is below them."""
    while frame is not None:
        module = frame.f_globals.get("__name__")
        if isinstance(module, str):
            if any(_in(module, library) for library in libraries):
                return ROBOTSTXT
            for running, variable in _RUNNING_OURS:
                if module == running:
                    part = _part_of(frame.f_locals.get(variable))
                    if part is not None:
                        return part
            part = _module_part(module)
            if part is not None:
                return part
        frame = frame.f_back
    return OTHER


class Sampler:
    def __init__(self, interval: float = 0.001, libraries: tuple[str, ...] = ()) -> None:
        self.interval = interval
        self.libraries = libraries
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self._last = 0.0

    def _sample(self, signum: int, frame: FrameType | None) -> None:
        # Python runs the handler between two bytecodes: the signals of a long C call (lxml
        # parsing a page) arrive as one, so each sample weighs the CPU time it stands for.
        now = time.process_time()
        self.seconds[owner(frame, self.libraries)] += now - self._last
        self._last = now

    def start(self) -> None:
        self._last = time.process_time()
        signal.signal(signal.SIGPROF, self._sample)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)

    def stop(self) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)

    def share(self, part: str) -> float:
        return self.seconds[part] / (sum(self.seconds.values()) or 1.0)
