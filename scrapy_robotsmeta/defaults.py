"""Every setting of the package with its default: the one place where a default is written.

The middlewares read their settings through these defaults, so they also work when enabled in
``DOWNLOADER_MIDDLEWARES`` / ``SPIDER_MIDDLEWARES`` without the add-on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

DEFAULTS: dict[str, Any] = {
    # robots.txt part
    "ROBOTSTXT_CACHE_EXPIRATION": 86400.0,
    # Memory for origin states, in bytes (estimated); past it the least recently used leave
    # memory for the second tier (on disk), or are forgotten without it.
    "ROBOTSTXT_CACHE_MEMORY": 64_000_000,
    # Whether origins that leave memory are kept on disk (JOBDIR/robotstxt-states.sqlite, or a
    # temporary file), so that none is fetched twice in its lifetime.
    "ROBOTSTXT_CACHE_SPILL": True,
    "ROBOTSTXT_RETRY_DELAY": 2.0,
    "ROBOTSTXT_RETRY_MAX_DELAY": 60.0,
    "ROBOTSTXT_UNAVAILABLE_TIMEOUT": 600.0,
    "ROBOTSTXT_OBEY_CRAWL_DELAY": False,
    # Seconds a Crawl-delay is cut to (None: obeyed whatever it is).
    "ROBOTSTXT_MAX_CRAWL_DELAY": None,
    # Whether the download slot's delay (DOWNLOAD_DELAY, AutoThrottle's) spaces the requests
    # of the whole crawl to an origin (every process of a fleet), not of each process.
    "ROBOTSTXT_FLEET_DOWNLOAD_DELAY": False,
    # Seconds a request may wait inside the downloader for its origin's robots.txt fetch
    # before it is parked; 0: parked at once.
    "ROBOTSTXT_HOLD_TIME": 5.0,
    # Meta keys of a request that its origin's robots.txt request takes too (proxy,
    # bindaddress and download_slot always are).
    "ROBOTSTXT_REQUEST_META_KEYS": [],
    # Memory for the last robots.txt response of each origin, in bytes (estimated), kept to
    # answer the spider's own requests for robots.txt; 0: none kept (each is downloaded).
    "ROBOTSTXT_RESPONSE_MEMORY": 8_000_000,
    "ROBOTSTXT_STORAGE": "scrapy_robotsmeta.storage.MemoryStorage",
    # Parked requests held in memory before the rest wait on disk (in JOBDIR, or a temporary
    # directory without one).
    "ROBOTSTXT_PARKED_MEMORY_LIMIT": 10_000,
    # How parked requests are written (to disk, to Redis): an object with dumps() and loads(),
    # or its import path. Pickle, as Scrapy's disk queues; the JSON one runs no code on reading.
    "ROBOTSTXT_PARKED_SERIALIZER": "scrapy_robotsmeta.serializers.pickle",
    "ROBOTSTXT_REDIS_URL": None,
    "ROBOTSTXT_REDIS_KEY_PREFIX": "robotsmeta:%(spider)s",
    "ROBOTSTXT_REDIS_LEASE_TIME": 60.0,
    "ROBOTSTXT_REDIS_POLL_INTERVAL": 1.0,
    # A JSON Lines file for the record of each robots.txt fetch in force; when set, every item
    # also gets the evidence of what applied to it. None: no evidence is kept.
    "ROBOTSTXT_EVIDENCE_FILE": None,
    # meta part
    "ROBOTSMETA_ENABLED": True,
    "ROBOTSMETA_ITEM_FIELD": "robots",
    "ROBOTSMETA_OBEY_NOFOLLOW": True,
    "ROBOTSMETA_OBEY_REL_NOFOLLOW": False,
    "ROBOTSMETA_DROP_NOINDEX": False,
    # The crawl's purposes (uses: search, ai-input, ai-train, ai-use, ai-train-images): items
    # of a page whose site or page refuses one of them are dropped. Empty: none is.
    "ROBOTSMETA_PURPOSE": [],
    # Whether TDMRep is consulted (tdmrep.json fetched with robots.txt, its headers and metas
    # read): True, False, or None for "when ROBOTSMETA_PURPOSE names a use it speaks to".
    "ROBOTSMETA_TDMREP": None,
}


class PackageSettings:
    """A crawl's settings as the package reads them: any name of :data:`DEFAULTS` not set in
    them takes its default from there (a name missing from DEFAULTS is a ``KeyError``)."""

    def __init__(self, settings: BaseSettings) -> None:
        self.settings = settings

    def get(self, name: str) -> Any:
        return self.settings.get(name, DEFAULTS[name])

    def getbool(self, name: str) -> bool:
        return self.settings.getbool(name, DEFAULTS[name])

    def getint(self, name: str) -> int:
        return self.settings.getint(name, DEFAULTS[name])

    def getfloat(self, name: str) -> float:
        return self.settings.getfloat(name, DEFAULTS[name])

    def getlist(self, name: str) -> list[Any]:
        return self.settings.getlist(name, DEFAULTS[name])
