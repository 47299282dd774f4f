"""The middleware's side of a shared storage (``sharing.py``): a published state is adopted
by the core when a fetch is claimed and at each poll; origins whose requests another process
left parked are handed on."""

from __future__ import annotations

from typing import Any

from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.defer import deferred_f_from_coro_f, maybe_deferred_to_future
from scrapy.utils.test import get_crawler
from twisted.internet.task import Clock, deferLater

from scrapy_robotsmeta.reactor import Tasks
from scrapy_robotsmeta.robotstxt.core import RobotsTxtCore
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import from_response
from scrapy_robotsmeta.robotstxt.state import Decision, OriginState, Published, Timing
from scrapy_robotsmeta.sharing import Sharing
from scrapy_robotsmeta.storage.base import Storage
from scrapy_robotsmeta.testing import installed_reactor

WAITED_ON = Origin("http", "a.example", 80)
LEFT_BY_ANOTHER = Origin("http", "b.example", 80)
BODY = b"User-agent: *\nDisallow: /private\n"


def published(now: float) -> Published:
    state = OriginState(WAITED_ON)
    state.start_fetch(now, Timing())
    state.apply(from_response(200, BODY), now, Timing())
    return Published(state.snapshot(), BODY)


class Shelf(Storage):
    """A shared storage in memory: what poll() answers is set by the test."""

    shared = True
    poll_interval = 1.0

    def __init__(self, answers: list[tuple[Origin, Published | None]]) -> None:
        super().__init__(get_crawler())
        self.answers = answers
        self.asked: list[list[Origin]] = []

    async def poll(self, origins: list[Origin]) -> list[tuple[Origin, Published | None]]:
        self.asked.append(origins)
        return self.answers

    def park(self, origin: Origin, request: Any) -> None:
        raise NotImplementedError

    def release(self, origin: Origin) -> Any:
        raise NotImplementedError

    def parked_origins(self) -> list[Origin]:
        return []

    async def close(self) -> int:
        return 0


def sharing(answers: list[tuple[Origin, Published | None]]) -> tuple[Sharing, Any, list[Origin]]:
    stats = MemoryStatsCollector(get_crawler())
    clock, news = Clock(), list[Origin]()
    core = RobotsTxtCore(Timing(), 10**6)
    shared = Sharing(core, Shelf(answers), clock, stats, Tasks(stats), on_news=news.append)
    return shared, (core, clock, stats), news


def test_a_claim_adopts_a_published_state_that_decides() -> None:
    shared, (core, _, stats), _ = sharing([])
    state = core.check(WAITED_ON, 0.0).state
    assert shared.settles(state)(published(0.0))
    assert state.decide(0.0) is Decision.RULES
    assert stats.get_value("robotstxt/redis/adopted") == 1


@deferred_f_from_coro_f
async def test_a_poll_adopts_what_changed_and_hands_on_what_others_left() -> None:
    shared, (core, clock, stats), news = sharing(
        [(WAITED_ON, published(0.0)), (LEFT_BY_ANOTHER, None)]
    )
    core.check(WAITED_ON, 0.0)  # requests wait on it here
    shared.start()
    clock.advance(1.0)
    await maybe_deferred_to_future(deferLater(installed_reactor(), 0.01, lambda: None))
    assert news == [WAITED_ON, LEFT_BY_ANOTHER]
    assert stats.get_value("robotstxt/redis/adopted") == 1
    assert core.check(WAITED_ON, 0.0).decision is Decision.RULES
    shared.close()
