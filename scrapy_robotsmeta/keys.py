"""The names users see, each written once with what it means: the request meta keys the package
reads or writes (:data:`META_KEYS`), and the crawl stats it sets (:data:`STATS`).

The documentation's references of both are rendered from those registries, so a description is
Markdown (MyST) as the documentation writes it; its roles (``{setting}``, ``{stat}``,
``{reqmeta}``) link to the other references.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple


class Described(NamedTuple):
    """A name's entry in a registry: the group of the reference it is listed under, and what
    it means."""

    group: str
    description: str


def _registrar(registry: dict[str, Described], group: str) -> Callable[[str, str], str]:
    """A function that enters a name of *group* in *registry* and gives the name back, so that
    a constant and its description are written together."""

    def declare(name: str, description: str) -> str:
        registry[name] = Described(group, description)
        return name

    return declare


# -- Request meta keys -----------------------------------------------------------------------

#: Each request meta key the package reads or sets → its group and what it does. Groups:
#: ``"set_by_you"`` (keys a spider sets) and ``"set_by_package"`` (keys the package sets).
META_KEYS: dict[str, Described] = {}
_yours = _registrar(META_KEYS, "set_by_you")
_ours = _registrar(META_KEYS, "set_by_package")

DONT_OBEY_ROBOTSTXT = _yours(
    "dont_obey_robotstxt",
    "Scrapy's own key, with its meaning: the request is not checked against robots.txt."
    " (`data:` and `file:` URLs never are.) A request for a robots.txt with it is downloaded,"
    " not answered from the package's own fetch.",
)
DONT_OBEY_ROBOTSMETA = _yours(
    "dont_obey_robotsmeta",
    'Set on a request a callback yields: neither `nofollow` nor `rel="nofollow"` drops it.',
)
USAGE_META_KEY = _ours(
    "robotstxt_usage",
    "Carries, to the response, the usage preferences that its origin's robots.txt stated for"
    " its URL when it was downloaded (a {py:class}`~scrapy_robotsmeta.Preferences`); absent"
    " when it stated none.",
)
# Marks the package's robots.txt request (and tdmrep.json's, shaped the same way), so that
# the downloader middleware lets it through unchecked and the fetcher knows its own.
ROBOTSTXT_FETCH = _ours(
    "robotstxt_fetch",
    "Marks a robots.txt request of the package (a tdmrep.json request carries it too).",
)
EVIDENCE_META_KEY = _ours(
    "robotstxt_evidence",
    "Carries, to the response, the references to the robots.txt files that let its URL"
    " through; set only when {setting}`ROBOTSTXT_EVIDENCE_FILE` keeps evidence.",
)
TDMREP_FETCH = _ours(
    "tdmrep_fetch",
    "Marks a tdmrep.json request of the package.",
)
TDMREP_META_KEY = _ours(
    "tdmrep_file",
    "Carries, to the response, what its origin's tdmrep.json said of its URL when it was"
    " downloaded (a {py:class}`~scrapy_robotsmeta.TdmReading`); absent when TDMRep was not"
    " consulted for it ({setting}`ROBOTSMETA_TDMREP`).",
)
# Meta, not an attribute of the request object: with a shared scheduler (scrapy-redis),
# another process may take the request.
TURN_META_KEY = _ours(
    "robotstxt_turn",
    "Marks a request sent back at its origin's turn (`Crawl-delay`): it asks for the turn,"
    " where a request newly met joins those already waiting.",
)
#: What the middleware sets on a request for its URL alone: a redirect's request, or one made
#: with a page's meta, comes with a copy of another request's, which says nothing of its URL.
PER_URL_META_KEYS = (USAGE_META_KEY, EVIDENCE_META_KEY, TDMREP_META_KEY)


# -- Crawl stats -----------------------------------------------------------------------------

#: Each crawl stat the package sets → its group and what it counts. A name with a variable
#: part is a template for ``str.format``, its field named in braces.
STATS: dict[str, Described] = {}


class FileStats:
    """The stats of the fetches of one well-known file (robots.txt, tdmrep.json), under its
    prefix: the two are fetched the same way, and counted alike."""

    def __init__(self, prefix: str, file: str, group: str) -> None:
        stat = _registrar(STATS, group)
        self.request_count = stat(
            f"{prefix}/request_count", f"{file} requests sent (each redirect hop is one)."
        )
        self.response_count = stat(f"{prefix}/response_count", f"{file} responses received.")
        self.response_status_count = stat(
            f"{prefix}/response_status_count/{{status}}",
            f"{file} responses by HTTP status (`{{status}}`: `200`, `404`…).",
        )
        self.exception_count = stat(
            f"{prefix}/exception_count/{{exception}}",
            f"{file} downloads that failed, by exception: `{{exception}}` is the exception's"
            " class as Python prints it (`<class 'twisted.internet.error.DNSLookupError'>`),"
            " as in the stats of Scrapy's own robots.txt middleware.",
        )
        self.download_stopped = stat(
            f"{prefix}/download_stopped",
            f"{file} downloads stopped because the body went past the size limit.",
        )
        self.undecodable = stat(
            f"{prefix}/undecodable",
            f"{file} bodies whose `Content-Encoding` could not be decoded (the file is then"
            " unavailable).",
        )
        self.cached_unavailable_skipped = stat(
            f"{prefix}/cached_unavailable_skipped",
            f"Unavailable {file} answers found in Scrapy's HTTP cache, and asked of the site"
            " instead.",
        )
        self.redirect_refused = stat(
            f"{prefix}/redirect_refused",
            f"{file} redirects to a URL that is not `http` or `https`, not followed (nothing"
            " local is read on a site's say-so).",
        )
        self.redirect_loop = stat(
            f"{prefix}/redirect_loop",
            f"{file} fetches that ended in a redirect loop (the file then counts as a 404).",
        )
        self.redirect_limit = stat(
            f"{prefix}/redirect_limit",
            f"{file} fetches that ended after too many redirects (the file then counts as a 404).",
        )


# robots.txt fetch
_fetch = _registrar(STATS, "fetch")
ROBOTSTXT_FILE_STATS = FileStats("robotstxt", "robots.txt", "fetch")
ROBOTSTXT_TRUNCATED = _fetch(
    "robotstxt/truncated", "robots.txt bodies longer than 500 KiB (the rest is ignored)."
)
ROBOTSTXT_OUTCOME = _fetch(
    "robotstxt/outcome/{kind}",
    "robots.txt fetches by outcome, `{kind}`: `rules`, `allow_all` or `unavailable` (an"
    " outage counts one `unavailable` per try).",
)
ROBOTSTXT_KEPT_CACHED_COPY = _fetch(
    "robotstxt/kept_cached_copy", "Failed refreshes of a robots.txt that kept the earlier copy."
)
ROBOTSTXT_GIVEN_UP = _fetch(
    "robotstxt/given_up",
    "Origins given up after their robots.txt stayed unavailable for"
    " {setting}`ROBOTSTXT_UNAVAILABLE_TIMEOUT`.",
)
ROBOTSTXT_SHARED_RESPONSE_ANSWERED = _fetch(
    "robotstxt/shared_response/answered",
    "The spider's own requests for robots.txt answered from the package's download (their"
    " responses flagged `robotstxt-shared`).",
)
ROBOTSTXT_SHARED_RESPONSE_NOT_KEPT = _fetch(
    "robotstxt/shared_response/not_kept",
    "The spider's own requests for robots.txt whose answer was not kept (past"
    " {setting}`ROBOTSTXT_RESPONSE_MEMORY` or {setting}`ROBOTSTXT_CACHE_EXPIRATION`, fetched by"
    " another process, or no response): downloaded, or dropped with their origin if it was"
    " given up.",
)
ROBOTSTXT_TASK_ERRORS = _fetch(
    "robotstxt/task_errors",
    "Failures of the robots.txt part's background work (a fetch's bookkeeping, a release, a"
    " poll of the shared states), each logged at ERROR with what it was doing and its origin."
    " The origin is put back on its way: a failed fetch counts as a failed try, a failed"
    " release is tried again when the crawl is idle.",
)

# robots.txt verdicts
_verdict = _registrar(STATS, "verdicts")
ROBOTSTXT_FORBIDDEN = _verdict("robotstxt/forbidden", "Requests refused by a robots.txt rule.")
ROBOTSTXT_UNDECIDED = _verdict(
    "robotstxt/undecided",
    "Requests refused because checking them would have taken more work than one check may.",
)
ROBOTSTXT_UNAVAILABLE_DROPPED = _verdict(
    "robotstxt/unavailable_dropped", "Requests dropped because their origin was given up."
)
ROBOTSTXT_USAGE_IGNORED = _verdict(
    "robotstxt/usage_ignored",
    "Parts of robots.txt `Content-Usage` / `Content-Signal` lines that state nothing, counted"
    " for each request they apply to (logged at DEBUG with the line).",
)

# Waiting and parking
_waiting = _registrar(STATS, "waiting")
ROBOTSTXT_HELD = _waiting(
    "robotstxt/held",
    "Requests that reached the downloader while their origin's robots.txt was being fetched,"
    " and waited there for it ({setting}`ROBOTSTXT_HOLD_TIME`).",
)
ROBOTSTXT_REPARKED = _waiting(
    "robotstxt/reparked",
    "Requests that reached the downloader before their origin had a verdict and were sent"
    " back to be parked: held past {setting}`ROBOTSTXT_HOLD_TIME`, or their robots.txt"
    " unavailable.",
)
ROBOTSTXT_PARKED = _waiting(
    "robotstxt/parked", "Times a request was parked to wait for its origin's robots.txt."
)
ROBOTSTXT_PARKED_MEMORY = _waiting(
    "robotstxt/parked/memory",
    "Parked requests kept in memory. With {py:class}`~scrapy_robotsmeta.storage.RedisStorage`,"
    " those that waited in memory before their write to Redis (each counted once, however"
    " many writes failed).",
)
ROBOTSTXT_PARKED_DISK = _waiting(
    "robotstxt/parked/disk",
    "Parked requests kept on disk (past {setting}`ROBOTSTXT_PARKED_MEMORY_LIMIT`, or in"
    " `JOBDIR`).",
)
ROBOTSTXT_PARKED_UNSERIALIZABLE = _waiting(
    "robotstxt/parked/unserializable",
    "Parked requests that {setting}`ROBOTSTXT_PARKED_SERIALIZER` could not serialize, kept in"
    " memory.",
)
ROBOTSTXT_PARKED_DISK_ERRORS = _waiting(
    "robotstxt/parked/disk_errors",
    "Writes to the parked queues that failed: a request then kept in memory, or a queue's"
    " state at close (the next run recovers its requests from its files).",
)
ROBOTSTXT_PARKED_DAMAGED = _waiting(
    "robotstxt/parked/damaged",
    "Parked queues that could not be read back whole (damaged files, malformed entries).",
)
ROBOTSTXT_PARKED_LOST = _waiting(
    "robotstxt/parked/lost", "Parked requests that a damaged queue no longer held."
)
ROBOTSTXT_PARKED_MALFORMED = _waiting(
    "robotstxt/parked/malformed",
    "Parked entries that did not make a request again (damaged, crafted, or written by"
    " another serializer), skipped.",
)
ROBOTSTXT_DROPPED_ON_CLOSE = _waiting(
    "robotstxt/dropped_on_close",
    "Waiting requests lost because the crawl closed (without `JOBDIR`, or not serializable).",
)

# Redis
_redis = _registrar(STATS, "redis")
ROBOTSTXT_REDIS_PARKED = _redis(
    "robotstxt/redis/parked", "Requests written to the parked lists in Redis."
)
ROBOTSTXT_REDIS_RELEASED = _redis(
    "robotstxt/redis/released", "Requests taken from the parked lists in Redis."
)
ROBOTSTXT_REDIS_MALFORMED = _redis(
    "robotstxt/redis/malformed",
    "Parked requests taken from Redis that could not be loaded, skipped.",
)
ROBOTSTXT_REDIS_PUBLISHED = _redis(
    "robotstxt/redis/published", "Origin states this process published in Redis."
)
ROBOTSTXT_REDIS_ADOPTED = _redis(
    "robotstxt/redis/adopted", "Origin states published by other processes that this one took."
)
ROBOTSTXT_REDIS_LEASE_BUSY = _redis(
    "robotstxt/redis/lease_busy",
    "Fetches left to the process holding the origin's lease.",
)
ROBOTSTXT_REDIS_UNREADABLE_STATE = _redis(
    "robotstxt/redis/unreadable_state",
    "Origins whose state in Redis could not be read (damaged, or written by another version):"
    " fetched again, and the state overwritten.",
)
ROBOTSTXT_REDIS_ERRORS = _redis("robotstxt/redis/errors", "Redis calls that failed.")
ROBOTSTXT_REDIS_RECOVERED = _redis(
    "robotstxt/redis/recovered", "Returns of Redis after a failure."
)

# Cache (set as the crawl closes)
_cache = _registrar(STATS, "cache")
ROBOTSTXT_CACHE_MEMORY_HITS = _cache(
    "robotstxt/cache/memory_hits", "Origin look-ups answered by a live origin state."
)
ROBOTSTXT_CACHE_PACKED_HITS = _cache(
    "robotstxt/cache/packed_hits",
    "Origin look-ups answered by unpacking a record kept in memory.",
)
ROBOTSTXT_CACHE_DISK_HITS = _cache(
    "robotstxt/cache/disk_hits", "Origin look-ups answered by a record of the disk tier."
)
ROBOTSTXT_CACHE_PACKED = _cache(
    "robotstxt/cache/packed", "Live origin states packed into records."
)
ROBOTSTXT_CACHE_SPILLED = _cache(
    "robotstxt/cache/spilled",
    "Records that left memory for the disk tier ({setting}`ROBOTSTXT_CACHE_MEMORY`).",
)
ROBOTSTXT_CACHE_FORGOTTEN = _cache(
    "robotstxt/cache/forgotten",
    "Records that left memory with no disk tier to go to ({setting}`ROBOTSTXT_CACHE_SPILL`).",
)
ROBOTSTXT_CACHE_DAMAGED = _cache(
    "robotstxt/cache/damaged",
    "Records found damaged when read back (a failed checksum, or unreadable), each time one"
    " is: logged, and the origin's robots.txt fetched again.",
)
ROBOTSTXT_CACHE_DISK_ERRORS = _cache(
    "robotstxt/cache/disk_errors",
    "Reads and writes of the disk tier that failed (logged once); those origins are fetched"
    " again if met again.",
)

# Crawl-delay
_crawl_delay = _registrar(STATS, "crawl_delay")
ROBOTSTXT_CRAWL_DELAY_APPLIED = _crawl_delay(
    "robotstxt/crawl_delay_applied",
    "Origins whose requests were spaced by their `Crawl-delay` (each counted once per crawl).",
)
ROBOTSTXT_CRAWL_DELAY_MAX = _crawl_delay(
    "robotstxt/crawl_delay/max", "The largest spacing applied for a `Crawl-delay`, in seconds."
)
ROBOTSTXT_CRAWL_DELAY_BOUNDED = _crawl_delay(
    "robotstxt/crawl_delay/bounded",
    "Origins whose `Crawl-delay` was cut to {setting}`ROBOTSTXT_MAX_CRAWL_DELAY`.",
)
ROBOTSTXT_CRAWL_DELAY_SET_ASIDE = _crawl_delay(
    "robotstxt/crawl_delay/set_aside",
    "Times a request was set aside out of the downloader to wait for its origin's turn.",
)
ROBOTSTXT_CRAWL_DELAY_LOCAL_TURNS = _crawl_delay(
    "robotstxt/crawl_delay/local_turns",
    "Turns this process took alone because the shared storage (Redis) failed.",
)

# Evidence
_evidence = _registrar(STATS, "evidence")
ROBOTSTXT_EVIDENCE_RECORDS = _evidence(
    "robotstxt/evidence/records", "Records written to {setting}`ROBOTSTXT_EVIDENCE_FILE`."
)
ROBOTSTXT_EVIDENCE_WRITE_ERRORS = _evidence(
    "robotstxt/evidence/write_errors",
    "Writes to {setting}`ROBOTSTXT_EVIDENCE_FILE` that failed (the first one logged at ERROR).",
)

# Page rules (meta robots, X-Robots-Tag, rel=nofollow)
_page = _registrar(STATS, "page_rules")
ROBOTSMETA_REQUEST_DROPPED_NOFOLLOW = _page(
    "robotsmeta/request_dropped/nofollow",
    "Requests dropped because their response said `nofollow` (or `none`)"
    " ({setting}`ROBOTSMETA_OBEY_NOFOLLOW`).",
)
ROBOTSMETA_REQUEST_DROPPED_REL_NOFOLLOW = _page(
    "robotsmeta/request_dropped/rel_nofollow",
    'Requests dropped for `rel="nofollow"` links ({setting}`ROBOTSMETA_OBEY_REL_NOFOLLOW`).',
)
ROBOTSMETA_ITEM_DROPPED_NOINDEX = _page(
    "robotsmeta/item_dropped/noindex",
    "Items dropped by {setting}`ROBOTSMETA_DROP_NOINDEX`.",
)
ROBOTSMETA_RULE_IGNORED = _page(
    "robotsmeta/rule_ignored",
    "Unknown rules, invalid values and meta bot prefixes that were ignored.",
)
ROBOTSMETA_READ_ERROR = _page(
    "robotsmeta/read_error",
    "Responses whose reading failed (a bug: logged at ERROR with its traceback); the response"
    " counts as unrestricted.",
)
ROBOTSMETA_ITEM_UNTAGGED = _page(
    "robotsmeta/item_untagged",
    "Items that could not get the field ({setting}`ROBOTSMETA_ITEM_FIELD`).",
)

# Usage preferences
_usage = _registrar(STATS, "usage")
ROBOTSMETA_ITEM_DROPPED = _usage(
    "robotsmeta/item_dropped/{use}",
    "Items dropped by {setting}`ROBOTSMETA_PURPOSE`, by the use refused: `{use}` is `search`,"
    " `ai_input`, `ai_train`, `ai_use` or `ai_train_images`.",
)
ROBOTSMETA_ITEM_DROPPED_TDMREP_UNREADABLE = _usage(
    "robotsmeta/item_dropped/tdmrep_unreadable",
    "Items dropped by a purpose of AI training because their origin's tdmrep.json could not be"
    " read and the page stated no reservation.",
)
ROBOTSMETA_USAGE_IGNORED = _usage(
    "robotsmeta/usage_ignored",
    "Parts of `Content-Usage` / `Content-Signal` headers that state nothing (a malformed"
    " value, an unknown label).",
)

# TDMRep
_tdmrep = _registrar(STATS, "tdmrep")
TDMREP_FILE_STATS = FileStats("robotsmeta/tdmrep", "tdmrep.json", "tdmrep")
TDMREP_FILE = _tdmrep(
    "robotsmeta/tdmrep/file/{file_status}",
    "tdmrep.json fetches by what the file is, `{file_status}`: `read`, `absent`, `malformed`"
    " or `unreadable`.",
)
TDMREP_RULE_IGNORED = _tdmrep(
    "robotsmeta/tdmrep/rule_ignored",
    "tdmrep.json rules (or parts of them) that state nothing: not an object, no location, a"
    " `tdm-reservation` other than 0 or 1.",
)
TDMREP_VALUE_IGNORED = _tdmrep(
    "robotsmeta/tdmrep/value_ignored",
    "`tdm-reservation` headers and metas whose value is not 0 or 1.",
)
