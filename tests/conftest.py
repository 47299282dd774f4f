from __future__ import annotations

from collections.abc import Iterator

import pytest
import pytest_twisted
from twisted.internet.task import Clock

from tests.server import Site


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
