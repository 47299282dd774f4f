"""Obey page-level robots rules in what a callback yields, and tag its items with them and with
the usage preferences that applied when the page was downloaded."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from itemadapter import ItemAdapter
from scrapy import Request, Spider
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware

from scrapy_robotsmeta.defaults import PackageSettings
from scrapy_robotsmeta.evidence import ITEM_KEY, evidence_file, item_evidence
from scrapy_robotsmeta.keys import (
    DONT_OBEY_ROBOTSMETA,
    ROBOTSMETA_ITEM_DROPPED,
    ROBOTSMETA_ITEM_DROPPED_NOINDEX,
    ROBOTSMETA_ITEM_DROPPED_TDMREP_UNREADABLE,
    ROBOTSMETA_ITEM_UNTAGGED,
    ROBOTSMETA_READ_ERROR,
    ROBOTSMETA_REQUEST_DROPPED_NOFOLLOW,
    ROBOTSMETA_REQUEST_DROPPED_REL_NOFOLLOW,
    ROBOTSMETA_RULE_IGNORED,
    ROBOTSMETA_USAGE_IGNORED,
    TDMREP_META_KEY,
    TDMREP_VALUE_IGNORED,
    USAGE_META_KEY,
)
from scrapy_robotsmeta.robotsmeta.directives import NO_RULES, Directives, read_rules
from scrapy_robotsmeta.robotsmeta.page import (
    NofollowTargets,
    header_values,
    named_metas,
    read_usage_headers,
    rel_nofollow_urls,
    robots_meta_names,
    tdmrep_values,
)
from scrapy_robotsmeta.robotstxt.origin import origin_of
from scrapy_robotsmeta.startup import check_settings, purposes, tdmrep_consulted
from scrapy_robotsmeta.usage.preferences import (
    NO_PREFERENCES,
    Preferences,
    Statement,
)
from scrapy_robotsmeta.usage.tdmrep import (
    META_NAMES,
    NOT_CONSULTED_READING,
    TdmReading,
    page_reading,
    value_ignored,
)
from scrapy_robotsmeta.useragent import CrawlerToken

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class _Page:
    """What is known of one response; it holds no reference to the response, its weak key."""

    owner: RobotsMetaMiddleware
    directives: Directives | None = None
    usage: Preferences | None = None
    nofollow_targets: NofollowTargets | None = None
    #: Every request the page yields passes, whatever it is: known once the first request has
    #: been judged (the directives and the nofollow links are then read).
    keeps_requests: bool = False


# Keyed by response, as Scrapy's own per-response caches are: an entry lives as long as its
# response, and the callback reaches it through directives_for() without a crawler at hand.
_PAGES: WeakKeyDictionary[Response, _Page] = WeakKeyDictionary()


def directives_for(response: Response) -> Directives | None:
    """The effective directives of the response a callback is handling.

    They are read on the first call (or on the callback's first output) and never again; a
    selector the callback built before is reused. None when RobotsMetaMiddleware did not see the
    response: it is disabled, or the response did not come through a callback's input.
    """
    page = _PAGES.get(response)
    return None if page is None else page.owner.directives(response)


def usage_for(response: Response) -> Preferences | None:
    """The usage preferences of the response a callback is handling, from all their sources
    (robots.txt as it was when the response was downloaded, headers, page rules); None as for
    :func:`directives_for`."""
    page = _PAGES.get(response)
    return None if page is None else page.owner.usage(response)


class RobotsMetaMiddleware(BaseSpiderMiddleware):
    """Drops what a ``nofollow`` page yields, tags its items, and optionally more (see the
    documentation)."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        check_settings(crawler)
        settings = PackageSettings(crawler.settings)
        if not settings.getbool("ROBOTSMETA_ENABLED"):
            raise NotConfigured
        assert crawler.stats is not None
        self._stats: StatsCollector = crawler.stats
        field = settings.get("ROBOTSMETA_ITEM_FIELD") or ""
        self._item_field = _ItemField(field, self._stats) if field else None
        self._obey_nofollow = settings.getbool("ROBOTSMETA_OBEY_NOFOLLOW")
        self._obey_rel_nofollow = settings.getbool("ROBOTSMETA_OBEY_REL_NOFOLLOW")
        self._drop_noindex = settings.getbool("ROBOTSMETA_DROP_NOINDEX")
        self._purposes = purposes(crawler.settings)
        self._evidence = evidence_file(settings) is not None
        self._tdmrep = tdmrep_consulted(crawler.settings)
        # A crawl for AI training keeps no page whose TDMRep reservation could not be read: a
        # deliberate departure from the protocol, which counts such a site as not using it.
        self._needs_reservation = self._tdmrep and bool(
            {"ai_train", "ai_train_images"} & set(self._purposes)
        )
        # (origin, use) pairs whose refusal was logged: once each, as the first item dropped.
        self._refusals_logged: set[tuple[str, str]] = set()
        self._names = CrawlerToken.from_settings(crawler.settings)
        self._recent_response: Response | None = None
        self._recent_page = _Page(self)

    def process_spider_input(self, response: Response, spider: Spider | None = None) -> None:
        # Only registers the response: reading waits until someone needs the directives, by
        # which time the callback may have built the selector that reading can reuse.
        self._page(response)

    def directives(self, response: Response) -> Directives:
        """The effective directives of *response*, read on the first call only."""
        return self._directives_of(self._page(response), response)

    def _directives_of(self, page: _Page, response: Response) -> Directives:
        if page.directives is None:
            page.directives, page.usage = self._read(response)
        return page.directives

    def usage(self, response: Response) -> Preferences:
        """The usage preferences of *response*, read on the first call only."""
        page = self._page(response)
        if page.usage is None:
            page.directives, page.usage = self._read(response)
        return page.usage

    async def process_spider_output_async(
        self,
        response: Response | None,
        result: AsyncIterator[Any],
        spider: Spider | None = None,
    ) -> AsyncIterator[Any]:
        # The base class' loop, without its wrapper (a second asynchronous generator that checks
        # the spider argument): a page yields dozens of requests, each stepping through it.
        async for output in result:
            if isinstance(output, Request):
                if (request := self.get_processed_request(output, response)) is not None:
                    yield request
            elif (item := self.get_processed_item(output, response)) is not None:
                yield item

    def get_processed_request(self, request: Request, response: Response | None) -> Request | None:
        if response is None:
            return request
        if response is self._recent_response and self._recent_page.keeps_requests:
            return request
        if request.meta.get(DONT_OBEY_ROBOTSMETA):
            return request
        page = self._page(response)
        if self._obey_nofollow and not self._directives_of(page, response).follow:
            self._drop_request(
                request, response, ROBOTSMETA_REQUEST_DROPPED_NOFOLLOW, "the page says nofollow"
            )
            return None
        targets = self._nofollow_targets(page, response) if self._obey_rel_nofollow else None
        if targets and request.url in targets:
            self._drop_request(
                request,
                response,
                ROBOTSMETA_REQUEST_DROPPED_REL_NOFOLLOW,
                'its links to it all have rel="nofollow"',
            )
            return None
        if not targets:  # nothing left that could drop a request of this page
            page.keeps_requests = True
        return request

    def get_processed_item(self, item: Any, response: Response | None) -> Any:
        if response is None or not (self._item_field or self._drop_noindex or self._purposes):
            return item
        directives = self.directives(response)
        if self._drop_noindex and not directives.index:
            self._stats.inc_value(ROBOTSMETA_ITEM_DROPPED_NOINDEX)
            logger.debug("Dropped an item of %s: the page says noindex", response)
            return None
        usage = self.usage(response)
        for use in self._purposes:
            refusal = usage.refusal(use)
            if refusal is not None:
                self._drop_refused(response, refusal)
                return None
        if self._needs_reservation and usage.tdmrep is not None and usage.tdmrep.unknown:
            self._drop_refused(response, None)
            return None
        if self._item_field is not None:
            value = directives.to_dict() | usage.to_dict()
            if self._evidence:
                value[ITEM_KEY] = item_evidence(response, usage)
            self._item_field.tag(item, value)
        return item

    def _page(self, response: Response) -> _Page:
        # Everything a callback yields asks for its page: the last one answers most of them
        # without the weak-key lookup (which builds a weak reference per call).
        if response is self._recent_response:
            return self._recent_page
        page = _PAGES.get(response)
        if page is None:
            page = _PAGES[response] = _Page(self)
        self._recent_response, self._recent_page = response, page
        return page

    def _read(self, response: Response) -> tuple[Directives, Preferences]:
        """The page's directives and usage preferences."""
        recorded = _recorded_usage(response)
        tdmrep = self._recorded_tdmrep(response)
        try:
            name = self._names.name_for_request(response.request)
            robots_names = robots_meta_names(name)
            metas = named_metas(response, robots_names + (META_NAMES if self._tdmrep else ()))
            robots_metas = [content for meta, content in metas if meta in robots_names]
            reading = read_rules(header_values(response), robots_metas, name)
            header_usage = self._header_usage(response)
            if self._tdmrep:
                tdmrep = self._page_tdmrep(response, tdmrep, metas)
        except Exception:  # a page must never break the crawl; the traceback is for a bug report
            self._stats.inc_value(ROBOTSMETA_READ_ERROR)
            logger.exception(
                "Could not read the robots rules of %s; it counts as unrestricted, with only "
                "the usage preferences of robots.txt and tdmrep.json",
                response,
            )
            return NO_RULES, recorded + _tdmrep_preferences(tdmrep)
        for reason in reading.ignored:
            self._stats.inc_value(ROBOTSMETA_RULE_IGNORED)
            logger.debug("Ignored a robots rule of %s: %s", response, reason)
        rules_usage = Preferences(reading.usage) if reading.usage else NO_PREFERENCES
        page_usage = header_usage + rules_usage + _tdmrep_preferences(tdmrep)
        return reading.directives, recorded + page_usage

    def _recorded_tdmrep(self, response: Response) -> TdmReading | None:
        """What tdmrep.json said of the response's URL when it was downloaded; None when the
        crawl does not consult TDMRep."""
        if not self._tdmrep:
            return None
        request = response.request
        recorded = request.meta.get(TDMREP_META_KEY) if request is not None else None
        # No file reading: robots.txt was not checked for the request (ROBOTSTXT_OBEY off,
        # dont_obey_robotstxt), so neither was tdmrep.json; its headers and metas still count.
        return recorded if isinstance(recorded, TdmReading) else NOT_CONSULTED_READING

    def _page_tdmrep(
        self, response: Response, base: TdmReading | None, metas: list[tuple[str, str]]
    ) -> TdmReading:
        """*base* (the file's reading) superseded by the response's TDMRep headers and metas."""
        headers, page_metas = tdmrep_values(response, metas)
        for kind, (reservation, _) in (("header", headers), ("meta", page_metas)):
            why = value_ignored(kind, reservation)
            if why is not None:
                self._stats.inc_value(TDMREP_VALUE_IGNORED)
                logger.debug("Ignored a TDMRep value of %s: %s", response, why)
        return page_reading(base or NOT_CONSULTED_READING, headers, page_metas)

    def _header_usage(self, response: Response) -> Preferences:
        reading = read_usage_headers(response)
        for reason in reading.ignored:
            self._stats.inc_value(ROBOTSMETA_USAGE_IGNORED)
            logger.debug("Ignored part of a usage preference of %s: %s", response, reason)
        return Preferences(reading.statements) if reading.statements else NO_PREFERENCES

    def _drop_refused(self, response: Response, refusal: Statement | None) -> None:
        """Drop an item refused by *refusal*, or (None) whose TDMRep reservation is unknown."""
        why = "tdmrep_unreadable" if refusal is None else refusal.use
        self._stats.inc_value(
            ROBOTSMETA_ITEM_DROPPED_TDMREP_UNREADABLE
            if refusal is None
            else ROBOTSMETA_ITEM_DROPPED.format(use=why)
        )
        origin = origin_of(response.url)
        key = (str(origin) if origin is not None else response.url, why)
        if key in self._refusals_logged:
            logger.debug("Dropped an item of %s: %s", response, refusal or why)
            return
        self._refusals_logged.add(key)
        if refusal is None:
            logger.info(
                "Dropping items of %(origin)s: its tdmrep.json could not be read and its "
                "pages state no reservation, and this crawl trains AI (ROBOTSMETA_PURPOSE); "
                "first one from %(response)s",
                {"origin": key[0], "response": response},
            )
            return
        logger.info(
            "Dropping items of %(origin)s: it refuses %(use)s, a purpose of this crawl "
            "(ROBOTSMETA_PURPOSE), by %(source)s; first one from %(response)s",
            {"origin": key[0], "use": refusal.use, "source": refusal.source, "response": response},
        )

    def _nofollow_targets(self, page: _Page, response: Response) -> NofollowTargets:
        if page.nofollow_targets is None:
            try:
                urls = rel_nofollow_urls(response)
            except Exception:  # as in _read: follow every link rather than break the crawl
                self._stats.inc_value(ROBOTSMETA_READ_ERROR)
                logger.exception(
                    "Could not read the links of %s; none counts as nofollow", response
                )
                urls = frozenset()
            page.nofollow_targets = NofollowTargets(urls)
        return page.nofollow_targets

    def _drop_request(self, request: Request, response: Response, stat: str, why: str) -> None:
        self._stats.inc_value(stat)
        logger.debug("Dropped %s from %s: %s", request, response, why)


class _ItemField:
    """Sets the page's directives and preferences in the items' field, and says once per item
    class why it cannot."""

    def __init__(self, name: str, stats: StatsCollector) -> None:
        self.name = name
        self._stats = stats
        self._warned_classes: set[type] = set()

    def tag(self, item: Any, value: dict[str, Any]) -> None:
        if type(item) is dict:  # what most spiders yield: its adapter would do just this
            item[self.name] = value
            return
        if not ItemAdapter.is_item(item):
            problem = "itemadapter does not support them"
        else:
            try:
                ItemAdapter(item)[self.name] = value
                return
            except KeyError:
                problem = f"they do not declare the field {self.name!r}"
            except Exception as exc:  # a validator of the item class refused the value
                problem = f"setting the field {self.name!r} failed ({exc!r})"
        self._stats.inc_value(ROBOTSMETA_ITEM_UNTAGGED)
        item_class = type(item)
        if item_class not in self._warned_classes:
            self._warned_classes.add(item_class)
            logger.warning(
                "Items of class %s.%s carry no robots directives: %s. Declare the field "
                "(scrapy.Field(), or a dataclass/attrs/pydantic field of type dict defaulting to "
                "None), or set ROBOTSMETA_ITEM_FIELD = '' to stop tagging.",
                item_class.__module__,
                item_class.__qualname__,
                problem,
            )


def _tdmrep_preferences(reading: TdmReading | None) -> Preferences:
    """The usage statements of a TDMRep reading, carrying the reading itself."""
    return NO_PREFERENCES if reading is None else Preferences(reading.statements(), reading)


def _recorded_usage(response: Response) -> Preferences:
    """What robots.txt stated for the response's URL when it was downloaded (see
    ``RobotsTxtMiddleware``); nothing when robots.txt was not checked."""
    request = response.request
    recorded = request.meta.get(USAGE_META_KEY) if request is not None else None
    return recorded if isinstance(recorded, Preferences) else NO_PREFERENCES
