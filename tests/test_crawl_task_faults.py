"""A fault in the robots.txt part's background work (a storage that raises, here) is logged
with what it was doing, counted in ``robotstxt/task_errors``, and costs no request: the origin
is put back on a path that ends, and every page is still decided."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robotsmeta.storage import MemoryStorage
from scrapy_robotsmeta.testing import Site, html, static
from tests.crawl import FAST_RETRY, ListSpider, crawl, pages_fetched

if TYPE_CHECKING:
    from scrapy import Request

    from scrapy_robotsmeta.robotstxt.origin import Origin
    from scrapy_robotsmeta.robotstxt.state import Published

PAGES = [f"/page/{i}" for i in range(5)]


class StorageFault(Exception):
    pass


class ClaimFailsOnce(MemoryStorage):
    failed = False

    async def claim_fetch(self, origin: Origin, settles: Callable[[Published], bool]) -> bool:
        if not self.failed:
            self.failed = True
            raise StorageFault("claim")
        return True


class PublishFailsOnce(MemoryStorage):
    failed = False

    async def publish(
        self, origin: Origin, snapshot: dict[str, Any], body: bytes | None, fetched: bool
    ) -> None:
        if not self.failed:
            self.failed = True
            raise StorageFault("publish")


class ReleaseFailsOnce(MemoryStorage):
    failed = False

    async def release(self, origin: Origin) -> AsyncIterator[Request]:
        async for request in super().release(origin):
            yield request
            if not self.failed:
                self.failed = True
                raise StorageFault("release")


def _site(site: Site) -> list[str]:
    """Five pages, each a start URL, so that all five are parked together."""
    site.add({"/robots.txt": static("User-agent: *\nDisallow: /page/4\n")})
    site.add({path: html(path) for path in PAGES})
    return [site.url(path) for path in PAGES]


@pytest.mark.parametrize(
    ("storage", "what"),
    [
        pytest.param(ClaimFailsOnce, "The robots.txt fetch of", id="claim"),
        pytest.param(PublishFailsOnce, "The robots.txt fetch of", id="publish"),
        pytest.param(ReleaseFailsOnce, "Releasing the requests of", id="release"),
    ],
)
@deferred_f_from_coro_f
async def test_background_fault_is_logged_counted_and_loses_no_request(
    site: Site, caplog: pytest.LogCaptureFixture, storage: type[MemoryStorage], what: str
) -> None:
    settings: dict[str, Any] = {
        **FAST_RETRY,
        "ROBOTSTXT_HOLD_TIME": 0,  # every page is parked, and released by the storage
        "ROBOTSTXT_STORAGE": f"{__name__}.{storage.__name__}",
    }
    with caplog.at_level(logging.ERROR, logger="scrapy_robotsmeta"):
        result = await crawl(_site(site), settings, ListSpider)
    assert pages_fetched(site) == set(PAGES[:4])
    assert result.stat("robotstxt/forbidden") == 1
    assert result.stat("robotstxt/task_errors") == 1
    assert result.stat("robotstxt/dropped_on_close") == 0
    failures = [r for r in caplog.records if r.getMessage().startswith(what)]
    assert len(failures) == 1
    assert site.url("/").rstrip("/") in failures[0].getMessage()
    assert result.stat("test/errback_count") == 1  # the forbidden page, and no other
    assert "StorageFault" in (failures[0].exc_text or "")
