"""Every setting of the package with its default: the one place where a default is written.

The middlewares read their settings through these defaults, so they also work when enabled in
``DOWNLOADER_MIDDLEWARES`` / ``SPIDER_MIDDLEWARES`` without the add-on.
"""

from __future__ import annotations

from typing import Any

DEFAULTS: dict[str, Any] = {
    # robots.txt part
    "ROBOTSTXT_CACHE_EXPIRATION": 86400.0,
    "ROBOTSTXT_CACHE_SIZE": 10_000,
    "ROBOTSTXT_RETRY_DELAY": 2.0,
    "ROBOTSTXT_RETRY_MAX_DELAY": 60.0,
    "ROBOTSTXT_UNAVAILABLE_TIMEOUT": 600.0,
    "ROBOTSTXT_OBEY_CRAWL_DELAY": False,
    # Meta keys of a request that its origin's robots.txt request takes too (proxy,
    # bindaddress and download_slot always are).
    "ROBOTSTXT_REQUEST_META_KEYS": [],
    "ROBOTSTXT_STORAGE": "scrapy_robotsmeta.storage.MemoryStorage",
    # Parked requests held in memory before the rest wait on disk (in JOBDIR, or a temporary
    # directory without one).
    "ROBOTSTXT_PARKED_MEMORY_LIMIT": 10_000,
    "ROBOTSTXT_REDIS_URL": None,
    "ROBOTSTXT_REDIS_KEY_PREFIX": "robotsmeta:%(spider)s",
    "ROBOTSTXT_REDIS_LEASE_TIME": 60.0,
    "ROBOTSTXT_REDIS_POLL_INTERVAL": 1.0,
    # meta part
    "ROBOTSMETA_ENABLED": True,
    "ROBOTSMETA_ITEM_FIELD": "robots",
    "ROBOTSMETA_OBEY_NOFOLLOW": True,
    "ROBOTSMETA_OBEY_REL_NOFOLLOW": False,
    "ROBOTSMETA_DROP_NOINDEX": False,
}
