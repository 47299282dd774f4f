"""``ADDONS = {"scrapy_robotsmeta.Addon": 0}``: swap in both middlewares from settings alone."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as Builtin
from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object

from scrapy_robotsmeta.downloadermiddleware import RobotsTxtMiddleware
from scrapy_robotsmeta.spidermiddleware import RobotsMetaMiddleware

logger = logging.getLogger(__name__)

# Closer to the spider than every built-in spider middleware, so that requests dropped for
# nofollow are never seen (or counted) by DepthMiddleware and friends.
SPIDER_MIDDLEWARE_PRIORITY = 950


def component_entry(
    components: Mapping[Any, Any], cls: type, subclasses: bool = False
) -> tuple[Any, Any] | None:
    """The (key, priority) under which *cls* (or, if asked, a subclass) appears, whether keyed
    by class or by import path."""
    for key, priority in components.items():
        component = load_object(key) if isinstance(key, str) else key
        if component is cls or (
            subclasses and isinstance(component, type) and issubclass(component, cls)
        ):
            return key, priority
    return None


class Addon:
    """Replaces Scrapy's RobotsTxtMiddleware at its own priority and adds RobotsMetaMiddleware.

    Entries the user wrote for either middleware win: an explicit priority for ours (or a
    subclass) is kept, and a built-in that the user disabled (``None``) is not brought back
    under our name. Whatever the case, the built-in is never left active beside ours.
    """

    def update_settings(self, settings: BaseSettings) -> None:
        self._replace_robotstxt(settings)
        spider_mws = settings["SPIDER_MIDDLEWARES"]
        if component_entry(spider_mws, RobotsMetaMiddleware, subclasses=True) is None:
            spider_mws.set(RobotsMetaMiddleware, SPIDER_MIDDLEWARE_PRIORITY, priority="addon")

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
