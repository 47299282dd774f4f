"""Downloads one origin's robots.txt through the crawl's own downloader, and says what the
answer means (RFC 9309 §2.3.1): following up to five redirects, counting every hop.

The robots.txt request goes through the user's whole downloader stack, so it is shaped here
to stay the package's:

- its content is capped at 500 KiB (RFC 9309 §2.5), whatever ``DOWNLOAD_MAXSIZE`` says: the
  download is stopped past it, and :class:`RobotsTxtBodyMiddleware` decodes a compressed body
  up to it, before Scrapy's HttpCompressionMiddleware would refuse a large one;
- an unavailable answer is never replayed from Scrapy's HTTP cache, and a refresh or a retry
  always reaches the site (its answer is still stored for offline replays);
- it takes the routing meta keys (proxy, bind address, download slot, and
  ``ROBOTSTXT_REQUEST_META_KEYS``) of the request that needed it;
- only ``http``/``https`` redirect targets are followed.

When the crawl consults TDMRep, the origin's ``/.well-known/tdmrep.json`` is fetched at the same
time, shaped the same way (:mod:`.tdmrepfetcher`): the fetch ends when both have answered.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest, StopDownload
from scrapy.http import TextResponse
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from w3lib.url import safe_url_string

from scrapy_robotsmeta._compat import ROBOTS_PARSED, download, send_signal
from scrapy_robotsmeta.keys import (
    DONT_OBEY_ROBOTSTXT,
    ROBOTSTXT_FETCH,
    ROBOTSTXT_FILE_STATS,
    ROBOTSTXT_TRUNCATED,
    TDMREP_FETCH,
    TDMREP_FILE_STATS,
    FileStats,
)
from scrapy_robotsmeta.robotparser import ScrapyRobotParser
from scrapy_robotsmeta.robotstxt import MAX_BYTES, policy
from scrapy_robotsmeta.robotstxt.body import (
    ACCEPT_ENCODING,
    TRANSFER_MARGIN,
    UndecodableBody,
    decode,
)
from scrapy_robotsmeta.robotstxt.policy import Hop, Outcome
from scrapy_robotsmeta.robotstxt.status import Status
from scrapy_robotsmeta.startup import tdmrep_consulted
from scrapy_robotsmeta.tdmrepfetcher import TdmRepFetcher
from scrapy_robotsmeta.usage.tdmrep import TdmFile

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from scrapy_robotsmeta.defaults import PackageSettings
    from scrapy_robotsmeta.evidence import EvidenceLog
    from scrapy_robotsmeta.robotstxt.origin import Origin
    from scrapy_robotsmeta.robotstxt_responses import RobotsTxtResponses

logger = logging.getLogger(__name__)

#: Meta keys of the triggering request that choose the route, always carried over.
ROUTING_META_KEYS = ("proxy", "bindaddress", "download_slot")
_WEB_SCHEMES = ("http://", "https://")


class RobotsTxtFetcher:
    """``await fetcher.fetch(origin, timeout)`` → the :class:`Outcome` of one fetch."""

    #: Ahead of the crawl's own requests in the downloader: every request of the origin waits.
    DOWNLOAD_PRIORITY = 1000

    def __init__(
        self,
        crawler: Crawler,
        stats: StatsCollector,
        extra_meta_keys: Iterable[str] = (),
        responses: RobotsTxtResponses | None = None,
        *,
        evidence: bool = False,
    ) -> None:
        self.crawler = crawler
        #: Whether outcomes carry what the crawl's evidence records (policy.stamped).
        self.evidence = evidence
        self.stats = stats
        #: Where the last response of each fetch is kept, for the spider's own requests.
        self.responses = responses
        self.meta_keys = tuple(dict.fromkeys([*ROUTING_META_KEYS, *extra_meta_keys]))
        self._received: dict[Request, int] = {}
        self._decodes_bodies: bool | None = None
        #: Fetches tdmrep.json beside robots.txt when the crawl consults TDMRep.
        self.tdmrep = TdmRepFetcher(self) if tdmrep_consulted(crawler.settings) else None

    @classmethod
    def from_settings(
        cls,
        crawler: Crawler,
        settings: PackageSettings,
        responses: RobotsTxtResponses,
        evidence: EvidenceLog | None,
    ) -> RobotsTxtFetcher:
        """The crawl's fetcher; *evidence*: where the crawl keeps the record of its fetches."""
        assert crawler.stats is not None
        meta_keys = settings.getlist("ROBOTSTXT_REQUEST_META_KEYS")
        return cls(crawler, crawler.stats, meta_keys, responses, evidence=evidence is not None)

    async def fetch(
        self,
        origin: Origin,
        timeout: float,
        context: Request | None = None,
        fresh: bool = False,
    ) -> Outcome:
        """Fetch robots.txt of *origin*, each request within *timeout* seconds; the outcome
        lists each request made (its ``hops``). *context*: the request that needs it, whose
        routing meta keys the fetch takes. *fresh*: never answer from the HTTP cache (a retry,
        or a refresh after expiry). Never raises."""
        meta = {k: context.meta[k] for k in self.meta_keys if context and k in context.meta}
        # Started first, so that both files are downloaded at the same time.
        tdmrep = (
            deferred_from_coro(self.tdmrep.fetch(origin, timeout, meta, fresh))
            if self.tdmrep is not None
            else None
        )
        hops: list[Hop] = []
        try:
            outcome = await self._follow(origin, timeout, hops, meta, fresh)
        except Exception as exc:  # a fault here must not leave the origin waiting forever
            logger.exception("Error while fetching robots.txt of %s", origin)
            outcome = policy.from_exception(exc)
        tdm_file: TdmFile | None = None
        if tdmrep is not None:
            tdm_file = await maybe_deferred_to_future(tdmrep)
        outcome = dataclasses.replace(outcome, hops=tuple(hops), tdmrep=tdm_file)
        return policy.stamped(outcome, time.time()) if self.evidence else outcome

    async def _follow(
        self, origin: Origin, timeout: float, hops: list[Hop], meta: dict[str, Any], fresh: bool
    ) -> Outcome:
        url = origin.robots_url
        seen = {url}
        for _ in range(policy.MAX_REDIRECTS + 1):
            request, response, fresh = await self.download_fresh(
                url, timeout, meta, fresh, ROBOTSTXT_FILE_STATS
            )
            if self.responses is not None:
                # Each hop's answer replaces the last: the fetch's final one stays.
                self.responses.keep(origin, None if isinstance(response, Outcome) else response)
            if isinstance(response, Outcome):
                hops.append(_hop_without_response(url, response))
                return response
            hops.append(Hop(url, response.status))
            outcome = self._outcome(response)
            self.stats.inc_value(ROBOTSTXT_FILE_STATS.response_count)
            self.stats.inc_value(
                ROBOTSTXT_FILE_STATS.response_status_count.format(status=response.status)
            )
            if fresh and outcome.kind is not Status.UNAVAILABLE:
                self.store_in_http_cache(request, response)
            if outcome.location is None:  # not a redirect: the fetch's answer
                if outcome.kind is Status.RULES:
                    self._log_truncation(response, outcome)
                    await self._send_robots_parsed(outcome, request)
                return outcome
            assert outcome.location is not None
            url, refused = self.redirect_target(
                response, outcome.location, seen, ROBOTSTXT_FILE_STATS
            )
            if refused:
                # RFC 9309 §2.3.1.2 counts a robots.txt that cannot be reached by redirects as
                # unavailable (4xx): nothing local is ever read on a site's say-so.
                return policy.allow_all(refused)
        self.stats.inc_value(ROBOTSTXT_FILE_STATS.redirect_limit)
        return policy.allow_all(f"more than {policy.MAX_REDIRECTS} redirects")

    def redirect_target(
        self, response: Response, location: str, seen: set[str], names: FileStats
    ) -> tuple[str, str]:
        """The URL a redirect points to, and why it is not followed ("" when it is): not an
        http(s) URL, or one seen before in this fetch. *names*: its stats."""
        url = safe_url_string(response.urljoin(location))
        if not url.lower().startswith(_WEB_SCHEMES):
            self.stats.inc_value(names.redirect_refused)
            logger.info("%s redirect to %s refused: not an http(s) URL", response.url, url)
            return url, f"redirect to a non-HTTP URL ({url})"
        if url in seen:
            self.stats.inc_value(names.redirect_loop)
            return url, f"redirect loop at {url}"
        seen.add(url)
        return url, ""

    async def download_fresh(
        self, url: str, timeout: float, meta: dict[str, Any], fresh: bool, names: FileStats
    ) -> tuple[Request, Response | Outcome, bool]:
        """One hop (see :meth:`download`), asked of the site itself when the HTTP cache replays
        an unavailable answer; and whether the rest of the fetch must reach the site too."""
        request, response = await self.download(url, timeout, meta, fresh, names)
        if isinstance(response, Outcome) or not (
            "cached" in response.flags and policy.is_unavailable_status(response.status)
        ):
            return request, response, fresh
        # A replayed outage would keep the origin down for as long as the cache lasts.
        self.stats.inc_value(names.cached_unavailable_skipped)
        request, response = await self.download(url, timeout, meta, True, names)
        return request, response, True

    async def download(
        self, url: str, timeout: float, meta: dict[str, Any], fresh: bool, names: FileStats
    ) -> tuple[Request, Response | Outcome]:
        """One hop: the response, or the outcome of a download that gave none. *names*: its
        stats (robots.txt's, or tdmrep.json's)."""
        request = self._request(url, timeout, meta, fresh)
        self.stats.inc_value(names.request_count)
        if not self._received:
            self.crawler.signals.connect(self._bytes_received, signals.bytes_received)
        self._received[request] = 0
        try:
            return request, await download(self.crawler.engine, request)
        except IgnoreRequest as exc:
            # Another middleware refused the fetch: not the site's answer. Like Scrapy's
            # built-in, treat robots.txt as missing.
            return request, policy.allow_all(f"robots.txt request ignored: {exc}")
        except UndecodableBody as exc:
            self.stats.inc_value(names.undecodable)
            return request, policy.unavailable(f"body not decodable ({exc})")
        except Exception as exc:
            self.stats.inc_value(names.exception_count.format(exception=type(exc)))
            return request, policy.from_exception(exc)
        finally:
            del self._received[request]
            if not self._received:
                # Connected only while a fetch is in flight: the handler would otherwise run
                # for every chunk of every response of the crawl.
                self.crawler.signals.disconnect(self._bytes_received, signals.bytes_received)

    def _bytes_received(self, data: bytes, request: Request, **kwargs: Any) -> None:
        if request not in self._received:
            return
        received = self._received[request] = self._received[request] + len(data)
        if received > MAX_BYTES + TRANSFER_MARGIN:
            names = TDMREP_FILE_STATS if request.meta.get(TDMREP_FETCH) else ROBOTSTXT_FILE_STATS
            self.stats.inc_value(names.download_stopped)
            raise StopDownload(fail=False)

    def _request(self, url: str, timeout: float, meta: dict[str, Any], fresh: bool) -> Request:
        return Request(
            url,
            priority=self.DOWNLOAD_PRIORITY,
            callback=NO_CALLBACK,
            dont_filter=True,
            headers={"Accept-Encoding": ACCEPT_ENCODING},
            meta={
                **meta,
                ROBOTSTXT_FETCH: True,
                DONT_OBEY_ROBOTSTXT: True,
                # Redirects and retries are this package's job, with the spec's limits.
                "dont_redirect": True,
                "dont_retry": True,
                "allow_offsite": True,
                "download_timeout": timeout,
                "dont_cache": fresh,
                **self._size_meta(),
            },
        )

    def _size_meta(self) -> dict[str, Any]:
        if self._decodes_bodies is None:
            self._decodes_bodies = (
                self.crawler.get_downloader_middleware(RobotsTxtBodyMiddleware) is not None
            )
        if not self._decodes_bodies:
            # Without RobotsTxtBodyMiddleware, HttpCompressionMiddleware decodes robots.txt
            # with DOWNLOAD_MAXSIZE as its only bound: keep it.
            return {}
        # The size limit is the fetcher's (_bytes_received), not DOWNLOAD_MAXSIZE, which
        # would cancel a large robots.txt rather than read its first 500 KiB.
        return {"download_maxsize": 0}

    def _outcome(self, response: Response) -> Outcome:
        return policy.from_response(
            response.status,
            response.body,
            location=response.headers.get(b"Location"),
            cache_control=response.headers.get(b"Cache-Control"),
            truncated="dataloss" in response.flags,
            stopped="download_stopped" in response.flags,
        )

    def _log_truncation(self, response: Response, outcome: Outcome) -> None:
        if outcome.rules is not None and (
            outcome.rules.truncated or "download_stopped" in response.flags
        ):
            self.stats.inc_value(ROBOTSTXT_TRUNCATED)
            logger.info(
                "robots.txt at %s is larger than %d bytes; the rest is ignored",
                response.url,
                MAX_BYTES,
            )

    async def _send_robots_parsed(self, outcome: Outcome, request: Request) -> None:
        if ROBOTS_PARSED is not None and outcome.rules is not None:
            parser = ScrapyRobotParser(outcome.rules)
            await send_signal(
                self.crawler.signals, ROBOTS_PARSED, robotparser=parser, request=request
            )

    def store_in_http_cache(self, request: Request, response: Response) -> None:
        """Store an answer fetched past the HTTP cache, so that an offline replay of the crawl
        still finds the site's latest robots.txt."""
        from scrapy.downloadermiddlewares.httpcache import HttpCacheMiddleware  # noqa: PLC0415

        cache = self.crawler.get_downloader_middleware(HttpCacheMiddleware)
        if cache is None or not cache.policy.should_cache_response(response, request):
            return
        cache.storage.store_response(self.crawler.spider, request, response)


def _hop_without_response(url: str, outcome: Outcome) -> Hop:
    if outcome.kind is Status.ALLOW_ALL:
        return Hop(url, error=policy.IGNORED)
    # The network error itself (refused, DNS, timeout…): "failed" alone hides which it was.
    return Hop(url, error=outcome.reason)


class RobotsTxtBodyMiddleware:
    """Decodes a compressed robots.txt body up to 500 KiB, before HttpCompressionMiddleware.

    HttpCompressionMiddleware refuses a body that decodes past ``DOWNLOAD_MAXSIZE`` rather than
    cutting it, and decodes without bound when there is none; either would turn a large or
    hostile robots.txt into "no robots.txt" or into all the crawler's memory. Only robots.txt
    requests of this package are touched. The add-on places it just before
    HttpCompressionMiddleware (closer to the downloader).
    """

    def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Response:
        # Every response of the crawl comes through here: the meta key rules out nearly all
        # of them, at a fraction of the cost of a header look-up.
        if not request.meta.get(ROBOTSTXT_FETCH):
            return response
        encoding = response.headers.get(b"Content-Encoding")
        if not encoding:
            return response
        headers = response.headers.copy()
        del headers[b"Content-Encoding"]
        # One byte past the limit tells the parser that the file went on (a stat and a log).
        body = decode(response.body, encoding, MAX_BYTES + 1)
        if isinstance(response, TextResponse):
            # As HttpCompressionMiddleware does: the encoding is found again from the decoded
            # body, where replace() would carry over one guessed from the compressed bytes.
            return response.replace(body=body, headers=headers, encoding=None)
        return response.replace(body=body, headers=headers)
