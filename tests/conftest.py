from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted
from twisted.internet.task import Clock

from scrapy_robotsmeta.testing import Site
from tests.docs_outputs import demo_site, run_demo
from tests.redisserver import redis_server

if TYPE_CHECKING:
    from scrapy_robotsmeta.storage.redis_link import RedisLink


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
