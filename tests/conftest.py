from __future__ import annotations

import functools
import re
import string
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted
from scrapy.statscollectors import StatsCollector
from twisted.internet.task import Clock

from scrapy_robotsmeta.keys import STATS
from scrapy_robotsmeta.testing import Site
from tests.docs_outputs import demo_site, run_demo
from tests.redisserver import redis_server

if TYPE_CHECKING:
    from scrapy_robotsmeta.storage.redis_link import RedisLink

ROOT = Path(__file__).resolve().parents[1]
# The documentation's generator of its references (docs/_ext/references.py), which the tests
# of the references import as Sphinx does.
sys.path.insert(0, str(ROOT / "docs" / "_ext"))


@pytest.fixture
def site() -> Iterator[Site]:
    """A fresh origin on 127.0.0.1 with a free port."""
    started = Site().start()
    yield started
    pytest_twisted.blockon(started.stop())


@pytest.fixture
def other_site() -> Iterator[Site]:
    """A second origin, on another port of 127.0.0.1."""
    started = Site().start()
    yield started
    pytest_twisted.blockon(started.stop())


@pytest.fixture
def clock() -> Clock:
    """A clock the test advances by hand, for the robots.txt part (``crawl(..., clock=)``)."""
    return Clock()


@pytest.fixture(scope="session")
def redis_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture
def redis_url(redis_server_url: str) -> str:
    """A Redis of the tests' own, emptied before each test."""
    import redis  # noqa: PLC0415 (a test dependency only the Redis tests need)

    client = redis.Redis.from_url(redis_server_url)
    client.flushall()
    client.close()
    return redis_server_url


@pytest.fixture
def redis_links(redis_url: str, clock: Clock) -> Iterator[Callable[..., RedisLink]]:
    """Make the link to the tests' Redis of one RedisStorage of ``ListSpider`` (a process of
    the fleet), with the settings given; its own time is *clock*'s, 0 until a test moves it.
    The links made are closed after the test."""
    # Imported here: the package's modules load once the test's reactor is installed.
    from scrapy.utils.defer import deferred_from_coro  # noqa: PLC0415

    from scrapy_robotsmeta.storage.redis_link import RedisLink  # noqa: PLC0415
    from tests.crawl import ListSpider, make_crawler  # noqa: PLC0415

    links: list[RedisLink] = []

    def make(**settings: Any) -> RedisLink:
        crawler = make_crawler(ListSpider, settings, clock=clock)
        crawler.spider = ListSpider([])
        links.append(RedisLink(crawler, redis_url))
        return links[-1]

    yield make
    for link in links:
        pytest_twisted.blockon(deferred_from_coro(link.close()))


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One run of the demo as ``make demo`` runs it, for every test that reads it: the folder
    of its exports and log, and what it printed."""
    output = tmp_path_factory.mktemp("demo")
    return output, run_demo(output)


@pytest.fixture(scope="module")
def demo() -> Iterator[dict[str, str]]:
    """The demo site, served by its own process as ``python demosite.py`` serves it."""
    with demo_site() as origins:
        yield origins


# -- Every stat the session's crawls set is in the stats reference ---------------------------
#
# Each key a StatsCollector of this process is given is written down as it is set (the crawls of
# every test and the collectors tests build), and so are the keys of the stats dumps that
# subprocess crawls logged to files under the session's temporary directory (the demo, the
# fleet's workers that closed; a worker killed, or a crawl that logs to its output, leaves
# none). At the session's end, a key of the package (``robotstxt/…``, ``robotsmeta/…``) whose
# name or template is not in keys.STATS fails the run.

STAT_PREFIXES = ("robotstxt/", "robotsmeta/")
_seen_stats: set[str] = set()
_stat_logs: list[Path] = []
_undeclared_stats: list[str] = []


def _field_patterns() -> dict[str, str]:
    """What each variable part of a stat's template takes, as a regular expression."""
    # Imported here: the package's modules load once the test's reactor is installed.
    from scrapy_robotsmeta.robotstxt.status import Status  # noqa: PLC0415
    from scrapy_robotsmeta.usage.preferences import USES  # noqa: PLC0415
    from scrapy_robotsmeta.usage.tdmrep import FILE_STATUSES  # noqa: PLC0415

    return {
        "status": r"[1-5][0-9]{2}",
        "exception": r"<class '[A-Za-z_][\w.]*'>",
        "kind": "|".join(re.escape(status.value) for status in Status),
        "use": "|".join(re.escape(use) for use in USES),
        "file_status": "|".join(re.escape(status) for status in FILE_STATUSES),
    }


@functools.cache
def _templates() -> dict[str, re.Pattern[str]]:
    """Each template of keys.STATS (a name with a variable part) → what matches its names."""
    fields = _field_patterns()
    patterns = {}
    for name in STATS:
        parts = list(string.Formatter().parse(name))
        if any(field for _, field, _, _ in parts):
            patterns[name] = re.compile(
                "".join(
                    re.escape(text) + (f"(?:{fields[field]})" if field else "")
                    for text, field, _, _ in parts
                )
            )
    return patterns


def stat_template(key: str) -> str | None:
    """The name or template of keys.STATS that the stat *key* was set under; None when none."""
    if key in STATS:
        return key
    return next((name for name, match in _templates().items() if match.fullmatch(key)), None)


_DUMP = "Dumping Scrapy stats:\n"
# A key of the dump (pprint of the stats dict: one key per line, quoted as repr quotes it).
_DUMPED_KEY = re.compile(r"""[{ ] ?(['"])((?:robotstxt|robotsmeta)/.*?)\1: """)


def dumped_stats(log: str) -> set[str]:
    """The package's stat keys of every stats dump in a Scrapy log."""
    keys = set()
    for dump in log.split(_DUMP)[1:]:
        for line in dump.splitlines():
            if not line.startswith(("{", " ")):
                break
            if found := _DUMPED_KEY.match(line):
                keys.add(found[2])
    return keys


def _observed(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def observed(self: StatsCollector, key: str, *args: Any, **kwargs: Any) -> Any:
        if key.startswith(STAT_PREFIXES):
            _seen_stats.add(key)
        return method(self, key, *args, **kwargs)

    return observed


_OBSERVED = ("set_value", "inc_value", "max_value", "min_value")
_originals = {name: getattr(StatsCollector, name) for name in _OBSERVED}


def pytest_configure(config: pytest.Config) -> None:
    for name, method in _originals.items():
        setattr(StatsCollector, name, _observed(method))


def pytest_unconfigure(config: pytest.Config) -> None:
    for name, method in _originals.items():
        setattr(StatsCollector, name, method)


@pytest.fixture(scope="session", autouse=True)
def _subprocess_stat_logs(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Where the session's subprocess crawls write their logs: under its temporary directory."""
    _stat_logs.append(tmp_path_factory.getbasetemp())


def undeclared_stats(keys: Iterable[str]) -> list[str]:
    """The package's stat keys among *keys* that keys.STATS does not declare."""
    return sorted(key for key in keys if key.startswith(STAT_PREFIXES) and not stat_template(key))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    seen = set(_seen_stats)
    for folder in _stat_logs:
        for log in folder.rglob("*.log"):
            seen |= dumped_stats(log.read_text(encoding="utf-8", errors="replace"))
    _undeclared_stats[:] = undeclared_stats(seen)
    if _undeclared_stats and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _undeclared_stats:
        terminalreporter.section("stats missing from the stats reference", red=True)
        terminalreporter.write_line(
            "The crawls set stats that scrapy_robotsmeta/keys.py does not declare (declare each"
            " in keys.STATS, with its description): " + ", ".join(_undeclared_stats)
        )
