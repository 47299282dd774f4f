"""Downloads one origin's robots.txt through the crawl's own downloader, and says what the
answer means (RFC 9309 §2.3.1): following up to five redirects, counting every hop."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest
from scrapy.http.request import NO_CALLBACK
from w3lib.url import safe_url_string

from scrapy_robotsmeta.robotstxt import MAX_BYTES, policy
from scrapy_robotsmeta.robotstxt.policy import Kind, Outcome

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector

    from scrapy_robotsmeta.robotstxt.origin import Origin

logger = logging.getLogger(__name__)


class RobotsTxtFetcher:
    """``await fetcher.fetch(origin, timeout, trail)`` → the :class:`Outcome` of one fetch."""

    #: Ahead of the crawl's own requests in the downloader: every request of the origin waits.
    DOWNLOAD_PRIORITY = 1000

    def __init__(self, crawler: Crawler, stats: StatsCollector) -> None:
        self.crawler = crawler
        self.stats = stats

    async def fetch(self, origin: Origin, timeout: float, trail: list[str]) -> Outcome:
        """Fetch robots.txt of *origin*, each try within *timeout* seconds; *trail* records
        each hop ("URL STATUS", "URL failed", "URL ignored"). Never raises."""
        try:
            return await self._follow(origin.robots_url, timeout, trail)
        except Exception as exc:  # a fault here must not leave the origin waiting forever
            logger.exception("Error while fetching robots.txt of %s", origin)
            return policy.from_exception(exc)

    async def _follow(self, url: str, timeout: float, trail: list[str]) -> Outcome:
        seen = {url}
        for _ in range(policy.MAX_REDIRECTS + 1):
            request = self._request(url, timeout)
            self.stats.inc_value("robotstxt/request_count")
            try:
                response = await self.crawler.engine.download_async(request)
            except IgnoreRequest as exc:
                trail.append(f"{url} ignored")
                # Another middleware refused the fetch: not the site's answer. Like Scrapy's
                # built-in, treat robots.txt as missing.
                return policy.allow_all(f"robots.txt request ignored: {exc}")
            except Exception as exc:
                trail.append(f"{url} failed")
                self.stats.inc_value(f"robotstxt/exception_count/{type(exc)}")
                return policy.from_exception(exc)
            trail.append(f"{url} {response.status}")
            outcome = self._outcome(response)
            if outcome.kind is not Kind.REDIRECT:
                if outcome.kind is Kind.RULES:
                    await self.crawler.signals.send_catch_log_async(
                        signal=signals.robots_parsed, robotparser=outcome.rules, request=request
                    )
                return outcome
            assert outcome.location is not None
            url = safe_url_string(response.urljoin(outcome.location))
            if url in seen:
                self.stats.inc_value("robotstxt/redirect_loop")
                return policy.allow_all(f"redirect loop at {url}")
            seen.add(url)
        self.stats.inc_value("robotstxt/redirect_limit")
        return policy.allow_all(f"more than {policy.MAX_REDIRECTS} redirects")

    def _request(self, url: str, timeout: float) -> Request:
        return Request(
            url,
            priority=self.DOWNLOAD_PRIORITY,
            callback=NO_CALLBACK,
            dont_filter=True,
            meta={
                "dont_obey_robotstxt": True,
                # Redirects and retries are this package's job, with the spec's limits.
                "dont_redirect": True,
                "dont_retry": True,
                "allow_offsite": True,
                "download_timeout": timeout,
            },
        )

    def _outcome(self, response: Response) -> Outcome:
        self.stats.inc_value("robotstxt/response_count")
        self.stats.inc_value(f"robotstxt/response_status_count/{response.status}")
        outcome = policy.from_response(
            response.status,
            response.body,
            location=response.headers.get(b"Location"),
            cache_control=response.headers.get(b"Cache-Control"),
            truncated="dataloss" in response.flags,
        )
        if outcome.rules is not None and outcome.rules.truncated:
            self.stats.inc_value("robotstxt/truncated")
            logger.info(
                "robots.txt at %s is larger than %d bytes; the rest is ignored",
                response.url,
                MAX_BYTES,
            )
        return outcome
