"""Downloads one origin's ``/.well-known/tdmrep.json`` beside its robots.txt, and says what the
answer means for TDMRep.

The request is shaped as a robots.txt request is (see :mod:`.fetcher`): through the crawl's
own downloader, with the routing meta keys of the request that needed it, its content capped at
500 KiB, an unavailable answer never replayed from the HTTP cache, and up to five redirects to
``http``/``https`` URLs only. Its meaning is TDMRep's:

| answer                                  | the file                                      |
|-----------------------------------------|-----------------------------------------------|
| 2xx, a JSON array                       | READ: its rules                               |
| 2xx, anything else                      | MALFORMED: as no file (an HTML "not found")   |
| 3xx                                     | followed, at most 5 hops                      |
| 4xx but 429, a redirect not followed    | ABSENT: the origin does not use the file      |
| 429, 5xx, network error, a cut body     | UNREADABLE                                    |
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy_robotsmeta.keys import (
    TDMREP_FETCH,
    TDMREP_FILE,
    TDMREP_FILE_STATS,
    TDMREP_RULE_IGNORED,
)
from scrapy_robotsmeta.robotstxt import policy
from scrapy_robotsmeta.robotstxt.policy import Outcome
from scrapy_robotsmeta.robotstxt.status import Status
from scrapy_robotsmeta.usage import tdmrep
from scrapy_robotsmeta.usage.tdmrep import TdmFile

if TYPE_CHECKING:
    from scrapy.http import Response

    from scrapy_robotsmeta.fetcher import RobotsTxtFetcher
    from scrapy_robotsmeta.robotstxt.origin import Origin

logger = logging.getLogger(__name__)


class TdmRepFetcher:
    """``await fetcher.fetch(origin, timeout, meta, fresh)`` → the origin's :class:`TdmFile`."""

    def __init__(self, fetcher: RobotsTxtFetcher) -> None:
        self.fetcher = fetcher
        self.stats = fetcher.stats

    async def fetch(
        self, origin: Origin, timeout: float, meta: dict[str, Any], fresh: bool
    ) -> TdmFile:
        """The tdmrep.json of *origin*, each request within *timeout* seconds, with the
        routing *meta* of the request that needs it; *fresh*: past the HTTP cache. Never
        raises: a fault of its own counts as an unreadable file."""
        try:
            found = await self._follow(f"{origin}{tdmrep.WELL_KNOWN_PATH}", timeout, meta, fresh)
        except Exception as exc:
            logger.exception("Error while fetching tdmrep.json of %s", origin)
            found = tdmrep.unreadable(f"{type(exc).__name__}: {exc}".rstrip(": "))
        self.stats.inc_value(TDMREP_FILE.format(file_status=found.status))
        if found.status in (tdmrep.UNREADABLE, tdmrep.MALFORMED):
            logger.info("tdmrep.json of %s is %s: %s", origin, found.status, found.reason)
        for reason in found.ignored:
            self.stats.inc_value(TDMREP_RULE_IGNORED)
            logger.debug("Ignored part of tdmrep.json of %s: %s", origin, reason)
        return found

    async def _follow(
        self, url: str, timeout: float, meta: dict[str, Any], fresh: bool
    ) -> TdmFile:
        meta = {**meta, TDMREP_FETCH: True}
        seen = {url}
        for _ in range(policy.MAX_REDIRECTS + 1):
            request, response, fresh = await self.fetcher.download_fresh(
                url, timeout, meta, fresh, TDMREP_FILE_STATS
            )
            if isinstance(response, Outcome):
                return _without_response(response)
            self.stats.inc_value(TDMREP_FILE_STATS.response_count)
            self.stats.inc_value(
                TDMREP_FILE_STATS.response_status_count.format(status=response.status)
            )
            found = _file(response)
            if found is None:  # a redirect
                location = response.headers.get(b"Location")
                if not location:
                    return tdmrep.absent(f"HTTP {response.status} without a Location header")
                url, refused = self.fetcher.redirect_target(
                    response, location.decode("latin-1"), seen, TDMREP_FILE_STATS
                )
                if refused:
                    return tdmrep.absent(refused)
                continue
            if fresh and found.status != tdmrep.UNREADABLE:
                self.fetcher.store_in_http_cache(request, response)
            return found
        self.stats.inc_value(TDMREP_FILE_STATS.redirect_limit)
        return tdmrep.absent(f"more than {policy.MAX_REDIRECTS} redirects")


def _without_response(outcome: Outcome) -> TdmFile:
    """A download that gave no response: refused by a middleware (as no file), or failed."""
    if outcome.kind is Status.ALLOW_ALL:
        return tdmrep.absent(outcome.reason)
    return tdmrep.unreadable(outcome.reason)


def _file(response: Response) -> TdmFile | None:
    """What one answer means; None for a redirect, which is followed."""
    status = response.status
    reason = f"HTTP {status}"
    if "dataloss" in response.flags:
        return tdmrep.unreadable(f"{reason} with a truncated body")
    if 200 <= status < 300:
        if "download_stopped" in response.flags:
            # Cut at 500 KiB, a JSON array cannot be read: no rule of it is trusted.
            return TdmFile(tdmrep.MALFORMED, reason=f"{reason}, larger than the size limit")
        return tdmrep.parse_file(response.body)
    if 300 <= status < 400:
        return None
    if policy.is_unavailable_status(status):
        return tdmrep.unreadable(reason)
    return tdmrep.absent(reason)
