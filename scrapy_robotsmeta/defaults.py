"""Every setting of the package: its default, type and meaning, each written here once.

The middlewares read their settings through these defaults, so they also work when enabled in
``DOWNLOADER_MIDDLEWARES`` / ``SPIDER_MIDDLEWARES`` without the add-on. The documentation's
settings reference is rendered from :data:`SETTINGS` (and :data:`SCRAPY_SETTINGS`), so a
setting's description is Markdown (MyST) as the documentation writes it; its roles
(``{setting}``, ``{stat}``, ``{py:class}``) link to the other references.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings


@dataclass(frozen=True)
class Setting:
    """One setting as the documentation describes it."""

    name: str
    default: Any
    #: The values it takes, in words (a Python type, and what its unit is).
    type: str
    #: What it does, in MyST Markdown.
    description: str


@dataclass(frozen=True)
class ScrapySetting:
    """One of Scrapy's own settings that the package reads, as the documentation describes it
    (its default is Scrapy's, read from Scrapy where it is shown)."""

    name: str
    type: str
    description: str


#: The package's own settings: ``ROBOTSTXT_*`` ones for the robots.txt part (the downloader
#: middleware), ``ROBOTSMETA_*`` ones for the page part (the spider middleware).
SETTINGS: tuple[Setting, ...] = (
    Setting(
        "ROBOTSTXT_CACHE_EXPIRATION",
        86400.0,
        "float (seconds)",
        "How long a fetched robots.txt, or an origin given up, is kept before its robots.txt is"
        " fetched again.",
    ),
    Setting(
        "ROBOTSTXT_CACHE_MEMORY",
        64_000_000,
        "int (bytes, estimated)",
        "Memory for origin states: at most half of it for live ones, the rest for states packed"
        " into compact records. Past it the least recently used records leave memory for the"
        " disk tier ({setting}`ROBOTSTXT_CACHE_SPILL`), or are forgotten without it.",
    ),
    Setting(
        "ROBOTSTXT_CACHE_SPILL",
        True,
        "bool",
        "Whether origin states that leave memory are kept on disk"
        " (`JOBDIR/robotstxt-states.sqlite`, or a temporary file without `JOBDIR`) rather than"
        " forgotten, so that no robots.txt is fetched twice within its lifetime.",
    ),
    Setting(
        "ROBOTSTXT_RETRY_DELAY",
        2.0,
        "float (seconds)",
        "The wait before the first new try of an unavailable robots.txt (a 5xx, a 429, a network"
        " error); it doubles at each try, up to {setting}`ROBOTSTXT_RETRY_MAX_DELAY`.",
    ),
    Setting(
        "ROBOTSTXT_RETRY_MAX_DELAY",
        60.0,
        "float (seconds)",
        "The longest wait between two tries of an unavailable robots.txt.",
    ),
    Setting(
        "ROBOTSTXT_UNAVAILABLE_TIMEOUT",
        600.0,
        "float (seconds)",
        "How long an origin's robots.txt may stay unavailable before the origin is given up"
        " ({stat}`robotstxt/given_up`): its requests are dropped from then on"
        " ({stat}`robotstxt/unavailable_dropped`).",
    ),
    Setting(
        "ROBOTSTXT_OBEY_CRAWL_DELAY",
        False,
        "bool",
        "Whether each origin's requests are spaced by the `Crawl-delay` of its robots.txt, for"
        " the whole crawl: every process of a fleet sharing"
        " {py:class}`~scrapy_robotsmeta.storage.RedisStorage` takes the same turns.",
    ),
    Setting(
        "ROBOTSTXT_MAX_CRAWL_DELAY",
        None,
        "float (seconds) or None",
        "The longest `Crawl-delay` obeyed: a larger one is cut to it, with a WARNING"
        " ({stat}`robotstxt/crawl_delay/bounded`). `None`: every `Crawl-delay` is obeyed"
        " whatever it is (one over a minute with a WARNING).",
    ),
    Setting(
        "ROBOTSTXT_FLEET_DOWNLOAD_DELAY",
        False,
        "bool",
        "Whether the download slot's delay (`DOWNLOAD_DELAY`, AutoThrottle's) spaces the"
        " requests to an origin for the whole crawl (every process of a fleet) rather than for"
        " each process.",
    ),
    Setting(
        "ROBOTSTXT_HOLD_TIME",
        5.0,
        "float (seconds)",
        "How long a request may wait inside the downloader (holding a place of"
        " `CONCURRENT_REQUESTS`) for its origin's robots.txt fetch before it is parked out of"
        " it ({stat}`robotstxt/reparked`); `0`: parked at once.",
    ),
    Setting(
        "ROBOTSTXT_REQUEST_META_KEYS",
        [],
        "list of str",
        "Meta keys that an origin's robots.txt request takes from the request that needed it,"
        " besides `proxy`, `bindaddress` and `download_slot`, which it always takes.",
    ),
    Setting(
        "ROBOTSTXT_RESPONSE_MEMORY",
        8_000_000,
        "int (bytes, estimated)",
        "Memory for the last robots.txt response of each origin, kept to answer the spider's"
        " own requests for robots.txt ({stat}`robotstxt/shared_response/answered`), the least"
        " recently fetched dropped first; `0`: none is kept, and each such request is"
        " downloaded.",
    ),
    Setting(
        "ROBOTSTXT_STORAGE",
        "scrapy_robotsmeta.storage.MemoryStorage",
        "str (import path) or class",
        "Where origin states and parked requests are kept:"
        " {py:class}`~scrapy_robotsmeta.storage.MemoryStorage` (this process, spilling to disk)"
        " or {py:class}`~scrapy_robotsmeta.storage.RedisStorage` (shared by every process of"
        " a crawl), or a {py:class}`~scrapy_robotsmeta.storage.Storage` of your own.",
    ),
    Setting(
        "ROBOTSTXT_PARKED_MEMORY_LIMIT",
        10_000,
        "int",
        "How many parked requests are held in memory; past it the others wait on disk (in a"
        " temporary directory). With `JOBDIR` every parked request is written to"
        " `JOBDIR/robotstxt-parked/` as it is parked.",
    ),
    Setting(
        "ROBOTSTXT_PARKED_SERIALIZER",
        "scrapy_robotsmeta.serializers.pickle",
        "str (import path) or object",
        "How parked requests are written to disk and to Redis: an object (or module) with"
        " `dumps()` and `loads()`, or its import path. The default is pickle, as Scrapy's disk"
        " queues use; `scrapy_robotsmeta.serializers.json` runs no code when it reads.",
    ),
    Setting(
        "ROBOTSTXT_REDIS_URL",
        None,
        "str or None",
        "The Redis of {py:class}`~scrapy_robotsmeta.storage.RedisStorage`; `None`: the one"
        " scrapy-redis's `REDIS_URL` names.",
    ),
    Setting(
        "ROBOTSTXT_REDIS_KEY_PREFIX",
        "robotsmeta:%(spider)s",
        "str",
        "The prefix of every Redis key of {py:class}`~scrapy_robotsmeta.storage.RedisStorage`;"
        " `%(spider)s` stands for the spider's name.",
    ),
    Setting(
        "ROBOTSTXT_REDIS_LEASE_TIME",
        60.0,
        "float (seconds)",
        "How long the lease on an origin's robots.txt fetch lasts in Redis unless the process"
        " holding it renews it (another process takes the fetch over past it).",
    ),
    Setting(
        "ROBOTSTXT_REDIS_POLL_INTERVAL",
        1.0,
        "float (seconds)",
        "The time between two looks at Redis for the origins this process's requests wait on.",
    ),
    Setting(
        "ROBOTSTXT_EVIDENCE_FILE",
        None,
        "str (path) or None",
        "A JSON Lines file for the record of each robots.txt fetch in force; when set, every"
        " item's field ({setting}`ROBOTSMETA_ITEM_FIELD`) also gets an `evidence` key naming"
        " the records that let its page through. `None`: no evidence is kept.",
    ),
    Setting(
        "ROBOTSMETA_ENABLED",
        True,
        "bool",
        "`False` removes the spider middleware: no item field, and no request or item dropped"
        " for a page's rules.",
    ),
    Setting(
        "ROBOTSMETA_ITEM_FIELD",
        "robots",
        "str",
        'The name of the item field that gets the page\'s rules and usage preferences; `""`:'
        " items are not tagged.",
    ),
    Setting(
        "ROBOTSMETA_OBEY_NOFOLLOW",
        True,
        "bool",
        "Whether every request yielded for a response whose rules say `nofollow` (or `none`)"
        " is dropped ({stat}`robotsmeta/request_dropped/nofollow`).",
    ),
    Setting(
        "ROBOTSMETA_OBEY_REL_NOFOLLOW",
        False,
        "bool",
        'Whether requests for the page\'s `rel="nofollow"` links are dropped'
        " ({stat}`robotsmeta/request_dropped/rel_nofollow`); Google treats them as a hint.",
    ),
    Setting(
        "ROBOTSMETA_DROP_NOINDEX",
        False,
        "bool",
        "Whether the items of a response whose rules say `noindex` (or `none`) are dropped"
        " ({stat}`robotsmeta/item_dropped/noindex`).",
    ),
    Setting(
        "ROBOTSMETA_PURPOSE",
        [],
        "list of str",
        "The crawl's purposes, among `search`, `ai-input`, `ai-train`, `ai-use` and"
        " `ai-train-images`: the items of a page whose site or page refuses one of them are"
        " dropped ({stat}`robotsmeta/item_dropped/{use}`). Empty: none is.",
    ),
    Setting(
        "ROBOTSMETA_TDMREP",
        None,
        "bool or None",
        "Whether TDMRep is consulted (`tdmrep.json` fetched beside robots.txt, `tdm-reservation`"
        " headers and metas read): `True` always, `False` never, `None` when"
        " {setting}`ROBOTSMETA_PURPOSE` names a use a reservation speaks to (an AI use).",
    ),
)

#: Scrapy's own settings that the package reads, as it reads them.
SCRAPY_SETTINGS: tuple[ScrapySetting, ...] = (
    ScrapySetting(
        "ROBOTSTXT_OBEY",
        "bool",
        "Enables the robots.txt part, as it enables Scrapy's own middleware. Scrapy's default is"
        " `False` (`True` in the `settings.py` of `scrapy startproject`); with the add-on and"
        " the setting left unset, a WARNING says that robots.txt is not obeyed.",
    ),
    ScrapySetting(
        "ROBOTSTXT_USER_AGENT",
        "str or None",
        "The crawler's name, or a full User-Agent, that robots.txt and the page rules are read"
        " for; `None`: each request's own `User-Agent`. The robots.txt product token is taken"
        " from it.",
    ),
)

#: Each of the package's settings with its default (the add-on registers them all at Scrapy's
#: default priority).
DEFAULTS: dict[str, Any] = {setting.name: setting.default for setting in SETTINGS}


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
