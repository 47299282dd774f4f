"""The middleware's side of a storage shared by the processes of a crawl: what another
process published is adopted by this process's core, when a fetch is claimed and every
``poll_interval`` seconds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_robotsmeta.keys import ROBOTSTXT_REDIS_ADOPTED

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.statscollectors import StatsCollector
    from twisted.internet.base import DelayedCall

    from scrapy_robotsmeta.reactor import Clock, Tasks
    from scrapy_robotsmeta.robotstxt.core import RobotsTxtCore
    from scrapy_robotsmeta.robotstxt.origin import Origin
    from scrapy_robotsmeta.robotstxt.state import OriginState, Published
    from scrapy_robotsmeta.storage import Storage


class Sharing:
    """Polls *storage* while requests wait or others may leave some; *on_news* is told each
    origin whose state changed here or whose requests another process left parked."""

    def __init__(
        self,
        core: RobotsTxtCore,
        storage: Storage,
        clock: Clock,
        stats: StatsCollector,
        tasks: Tasks,
        *,
        on_news: Callable[[Origin], None],
    ) -> None:
        self.core, self.storage, self.clock, self.stats = core, storage, clock, stats
        self._tasks, self._on_news = tasks, on_news
        self._poller: DelayedCall | None = None

    def settles(self, state: OriginState) -> Callable[[Published], bool]:
        """What a claim asks of a published state: whether it makes the fetch *state* began
        needless (the core adopts it then)."""

        def settles(published: Published) -> bool:
            changes = state.changes
            settled = self.core.adopt_if_settling(state, published, self.clock.seconds())
            if state.changes != changes:
                self.stats.inc_value(ROBOTSTXT_REDIS_ADOPTED)
            return settled

        return settles

    def start(self) -> None:
        """Poll after ``poll_interval``, unless a poll is due already or the crawl closed."""
        if self._poller is None and not self.core.closed:
            self._poller = self.clock.callLater(self.storage.poll_interval, self._poll)

    def _poll(self) -> None:
        self._poller = None
        self._tasks.run(self._poll_once(), "Polling the shared robots.txt states", self._next)

    async def _poll_once(self) -> None:
        pending = self.core.pending
        for origin, published in await self.storage.poll(pending):
            adopted = published is not None and self.core.adopt(origin, published)
            if adopted:
                self.stats.inc_value(ROBOTSTXT_REDIS_ADOPTED)
            if adopted or origin not in pending:  # not pending: requests left by another
                self._on_news(origin)
        self._next(None)

    def _next(self, _: BaseException | None) -> None:
        if self.core.any_pending or self.storage.shared:
            self.start()

    def close(self) -> None:
        if self._poller is not None and self._poller.active():
            self._poller.cancel()
