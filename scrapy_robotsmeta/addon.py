"""``ADDONS = {"scrapy_robotsmeta.Addon": 0}``: swap in both middlewares from settings alone."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, NoReturn

from scrapy import signals
from scrapy.downloadermiddlewares.httpcompression import HttpCompressionMiddleware
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as Builtin
from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings

from scrapy_robotsmeta.defaults import DEFAULTS, PackageSettings
from scrapy_robotsmeta.downloadermiddleware import RobotsTxtMiddleware
from scrapy_robotsmeta.fetcher import RobotsTxtBodyMiddleware
from scrapy_robotsmeta.spidermiddleware import RobotsMetaMiddleware
from scrapy_robotsmeta.startup import check_start, component_entry, refuse
from scrapy_robotsmeta.useragent import CrawlerToken

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

# Closer to the spider than every built-in spider middleware, so that requests dropped for
# nofollow are never seen (or counted) by DepthMiddleware and friends.
SPIDER_MIDDLEWARE_PRIORITY = 950

# The built-in formats whose exporter cannot write the robots field readably (a Python repr in
# one CSV cell, "None" as XML text); the others write its dict as it is.
FEED_EXPORTERS = {
    "csv": "scrapy_robotsmeta.exporters.CsvItemExporter",
    "xml": "scrapy_robotsmeta.exporters.XmlItemExporter",
}


def from_crawler(crawler: Crawler) -> NoReturn:
    """Scrapy builds an ``ADDONS`` entry through its ``from_crawler``, and an entry that names
    this module instead of its class reaches this one: say what to write instead."""
    refuse(
        "ADDONS names the module scrapy_robotsmeta.addon, not the add-on: write ADDONS = "
        '{"scrapy_robotsmeta.Addon": 0}'
    )


class Addon:
    """Replaces Scrapy's RobotsTxtMiddleware at its own priority and adds RobotsMetaMiddleware.

    Entries the user wrote for either middleware win: an explicit priority for ours (or a
    subclass) is kept, and a built-in that the user disabled (``None``) is not brought back
    under our name. Whatever the case, the built-in is never left active beside ours.

    It also registers every default of the package (at Scrapy's ``default`` priority, so that
    ``crawler.settings`` shows the value in force), the CSV and XML exporters of
    :mod:`!scrapy_robotsmeta.exporters` for formats the user gave no exporter, and says at start
    which parts are on.
    """

    def __init__(self, crawler: Crawler | None = None) -> None:
        self._crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Addon:
        addon = cls(crawler)
        crawler.signals.connect(addon._report_start, signal=signals.engine_started)
        return addon

    def update_settings(self, settings: BaseSettings) -> None:
        for name, value in DEFAULTS.items():
            settings.set(name, value, priority="default")
        self._replace_robotstxt(settings)
        self._add_body_decoder(settings)
        spider_mws = settings["SPIDER_MIDDLEWARES"]
        if component_entry(spider_mws, RobotsMetaMiddleware, subclasses=True) is None:
            spider_mws.set(RobotsMetaMiddleware, SPIDER_MIDDLEWARE_PRIORITY, priority="addon")
        exporters = settings["FEED_EXPORTERS"]
        for format_, exporter in FEED_EXPORTERS.items():
            if format_ not in exporters:
                exporters.set(format_, exporter, priority="addon")
        if self._crawler is not None:
            check_start(self._crawler)  # the earliest point where every setting is known

    @staticmethod
    def _replace_robotstxt(settings: BaseSettings) -> None:
        custom = settings["DOWNLOADER_MIDDLEWARES"]
        builtin = component_entry(custom, Builtin) or component_entry(
            settings["DOWNLOADER_MIDDLEWARES_BASE"], Builtin
        )
        if component_entry(custom, RobotsTxtMiddleware, subclasses=True) is not None:
            if builtin is not None:
                custom.set(builtin[0], None, priority="addon")
            return
        if builtin is None or builtin[1] is None:
            logger.warning(
                "Scrapy's RobotsTxtMiddleware is not enabled in DOWNLOADER_MIDDLEWARES, so "
                "scrapy_robotsmeta did not enable its replacement; add %s to "
                "DOWNLOADER_MIDDLEWARES yourself if you want robots.txt obeyed.",
                "scrapy_robotsmeta.RobotsTxtMiddleware",
            )
            return
        key, priority = builtin
        custom.set(key, None, priority="addon")
        custom.set(RobotsTxtMiddleware, priority, priority="addon")

    @staticmethod
    def _add_body_decoder(settings: BaseSettings) -> None:
        """RobotsTxtBodyMiddleware must see robots.txt responses before HttpCompression does:
        just above its priority (closer to the downloader)."""
        custom = settings["DOWNLOADER_MIDDLEWARES"]
        if component_entry(custom, RobotsTxtBodyMiddleware) is not None:
            return
        compression = component_entry(custom, HttpCompressionMiddleware) or component_entry(
            settings["DOWNLOADER_MIDDLEWARES_BASE"], HttpCompressionMiddleware
        )
        priority = 590 if compression is None or compression[1] is None else compression[1]
        custom.set(RobotsTxtBodyMiddleware, priority + 1, priority="addon")

    def _report_start(self) -> None:
        """One line saying what is on and which name is obeyed; warnings for what a user is
        unlikely to want: robots.txt off by Scrapy's default, a User-Agent with no token."""
        from scrapy_robotsmeta import __version__  # noqa: PLC0415 (the package imports us)

        assert self._crawler is not None
        crawler, settings = self._crawler, self._crawler.settings
        robotstxt = crawler.get_downloader_middleware(RobotsTxtMiddleware) is not None
        meta = crawler.get_spider_middleware(RobotsMetaMiddleware) is not None
        ours = PackageSettings(settings)
        crawl_delay = robotstxt and ours.getbool("ROBOTSTXT_OBEY_CRAWL_DELAY")
        storage = ours.get("ROBOTSTXT_STORAGE")
        if isinstance(storage, type):
            storage = f"{storage.__module__}.{storage.__qualname__}"
        names = CrawlerToken.from_settings(settings)
        token, name = names.for_request(None), names.name_for_request(None)
        logger.info(
            "scrapy-robotsmeta %s: robots.txt %s, meta %s, Crawl-delay %s, storage %s; "
            "product token %r, crawler name %r (from %s %r)",
            __version__,
            _on(robotstxt),
            _on(meta),
            _on(crawl_delay),
            storage if robotstxt else "unused",
            token,
            name,
            names.source,
            names.user_agent(None),
        )
        obey_set = settings.getpriority("ROBOTSTXT_OBEY") != SETTINGS_PRIORITIES["default"]
        if not settings.getbool("ROBOTSTXT_OBEY") and not obey_set:
            logger.warning(
                "robots.txt is not obeyed: ROBOTSTXT_OBEY is not set and Scrapy's default is "
                "False. Set ROBOTSTXT_OBEY = True to obey it (or False, to turn it off without "
                "this warning)."
            )
        if (robotstxt or meta) and not token:
            logger.warning(
                "%s %r gives no valid robots.txt product token (RFC 9309: letters, '_' and "
                "'-'), so no robots.txt group can name this crawler and only 'User-agent: *' "
                "groups apply to it%s.",
                names.source,
                names.user_agent(None),
                "; no page-level rule can name it either" if not name else "",
            )


def _on(enabled: bool) -> str:
    return "on" if enabled else "off"
