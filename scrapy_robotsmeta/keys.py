"""The names users see, each written once: the request meta keys the package reads or writes,
and the crawl stats it sets."""

#: Exempts a request from robots.txt (Scrapy's own key, with its meaning).
DONT_OBEY_ROBOTSTXT = "dont_obey_robotstxt"
#: Exempts a request's response from page-level rules (meta robots, X-Robots-Tag).
DONT_OBEY_ROBOTSMETA = "dont_obey_robotsmeta"
#: Carries, to the response, the usage preferences its origin's robots.txt stated for its URL
#: when it was downloaded (a Preferences; absent when none).
USAGE_META_KEY = "robotstxt_usage"
#: Marks a robots.txt request of this package.
ROBOTSTXT_FETCH = "robotstxt_fetch"
#: Carries, to the response, the references to the files that let its URL through, by kind
#: (robots.txt; see :mod:`scrapy_robotsmeta.evidence`; set only when the crawl keeps evidence).
EVIDENCE_META_KEY = "robotstxt_evidence"
#: Marks a tdmrep.json request of this package (it carries ROBOTSTXT_FETCH too: it is shaped
#: as robots.txt requests are).
TDMREP_FETCH = "tdmrep_fetch"
#: Carries, to the response, what its origin's tdmrep.json said of its URL when it was
#: downloaded (a TdmReading; absent when TDMRep was not consulted for it).
TDMREP_META_KEY = "tdmrep_file"
#: Marks a request sent back at its origin's turn (Crawl-delay): it asks for the turn, where
#: one newly met joins the requests already waiting. Meta, not the object: with a shared
#: scheduler (scrapy-redis), another process may take it.
TURN_META_KEY = "robotstxt_turn"
#: What the middleware sets on a request for its URL alone: a redirect's request, or one made
#: with a page's meta, comes with a copy of another request's, which says nothing of its URL.
PER_URL_META_KEYS = (USAGE_META_KEY, EVIDENCE_META_KEY, TDMREP_META_KEY)


# The crawl stats the package sets, each named once. A name with a variable part is a
# template for ``str.format``, its field named in braces.


class FileStats:
    """The stats of the fetches of one well-known file (robots.txt, tdmrep.json), under its
    prefix: the two are fetched the same way, and counted alike."""

    def __init__(self, prefix: str) -> None:
        #: Requests sent (each redirect hop is one).
        self.request_count = f"{prefix}/request_count"
        self.response_count = f"{prefix}/response_count"
        #: Responses by HTTP status.
        self.response_status_count = f"{prefix}/response_status_count/{{status}}"
        #: Downloads that failed, by exception class (named as Scrapy's built-in names it).
        self.exception_count = f"{prefix}/exception_count/{{exception}}"
        self.download_stopped = f"{prefix}/download_stopped"
        self.undecodable = f"{prefix}/undecodable"
        self.cached_unavailable_skipped = f"{prefix}/cached_unavailable_skipped"
        self.redirect_refused = f"{prefix}/redirect_refused"
        self.redirect_loop = f"{prefix}/redirect_loop"
        self.redirect_limit = f"{prefix}/redirect_limit"


# robots.txt fetch
ROBOTSTXT_FILE_STATS = FileStats("robotstxt")
ROBOTSTXT_TRUNCATED = "robotstxt/truncated"
ROBOTSTXT_OUTCOME = "robotstxt/outcome/{kind}"
ROBOTSTXT_KEPT_CACHED_COPY = "robotstxt/kept_cached_copy"
ROBOTSTXT_GIVEN_UP = "robotstxt/given_up"
ROBOTSTXT_SHARED_RESPONSE_ANSWERED = "robotstxt/shared_response/answered"
ROBOTSTXT_SHARED_RESPONSE_NOT_KEPT = "robotstxt/shared_response/not_kept"
ROBOTSTXT_TASK_ERRORS = "robotstxt/task_errors"

# robots.txt verdicts
ROBOTSTXT_FORBIDDEN = "robotstxt/forbidden"
ROBOTSTXT_UNDECIDED = "robotstxt/undecided"
ROBOTSTXT_UNAVAILABLE_DROPPED = "robotstxt/unavailable_dropped"
ROBOTSTXT_USAGE_IGNORED = "robotstxt/usage_ignored"

# Waiting and parking
ROBOTSTXT_HELD = "robotstxt/held"
ROBOTSTXT_REPARKED = "robotstxt/reparked"
ROBOTSTXT_PARKED = "robotstxt/parked"
ROBOTSTXT_PARKED_MEMORY = "robotstxt/parked/memory"
ROBOTSTXT_PARKED_DISK = "robotstxt/parked/disk"
ROBOTSTXT_PARKED_UNSERIALIZABLE = "robotstxt/parked/unserializable"
ROBOTSTXT_PARKED_DISK_ERRORS = "robotstxt/parked/disk_errors"
ROBOTSTXT_PARKED_DAMAGED = "robotstxt/parked/damaged"
ROBOTSTXT_PARKED_LOST = "robotstxt/parked/lost"
ROBOTSTXT_PARKED_MALFORMED = "robotstxt/parked/malformed"
ROBOTSTXT_DROPPED_ON_CLOSE = "robotstxt/dropped_on_close"

# Redis
ROBOTSTXT_REDIS_PARKED = "robotstxt/redis/parked"
ROBOTSTXT_REDIS_RELEASED = "robotstxt/redis/released"
ROBOTSTXT_REDIS_MALFORMED = "robotstxt/redis/malformed"
ROBOTSTXT_REDIS_PUBLISHED = "robotstxt/redis/published"
ROBOTSTXT_REDIS_ADOPTED = "robotstxt/redis/adopted"
ROBOTSTXT_REDIS_LEASE_BUSY = "robotstxt/redis/lease_busy"
ROBOTSTXT_REDIS_UNREADABLE_STATE = "robotstxt/redis/unreadable_state"
ROBOTSTXT_REDIS_ERRORS = "robotstxt/redis/errors"
ROBOTSTXT_REDIS_RECOVERED = "robotstxt/redis/recovered"

# Cache (set as the crawl closes)
ROBOTSTXT_CACHE_MEMORY_HITS = "robotstxt/cache/memory_hits"
ROBOTSTXT_CACHE_PACKED_HITS = "robotstxt/cache/packed_hits"
ROBOTSTXT_CACHE_DISK_HITS = "robotstxt/cache/disk_hits"
ROBOTSTXT_CACHE_PACKED = "robotstxt/cache/packed"
ROBOTSTXT_CACHE_SPILLED = "robotstxt/cache/spilled"
ROBOTSTXT_CACHE_FORGOTTEN = "robotstxt/cache/forgotten"
ROBOTSTXT_CACHE_DAMAGED = "robotstxt/cache/damaged"
ROBOTSTXT_CACHE_DISK_ERRORS = "robotstxt/cache/disk_errors"

# Crawl-delay
ROBOTSTXT_CRAWL_DELAY_APPLIED = "robotstxt/crawl_delay_applied"
ROBOTSTXT_CRAWL_DELAY_MAX = "robotstxt/crawl_delay/max"
ROBOTSTXT_CRAWL_DELAY_BOUNDED = "robotstxt/crawl_delay/bounded"
ROBOTSTXT_CRAWL_DELAY_SET_ASIDE = "robotstxt/crawl_delay/set_aside"
ROBOTSTXT_CRAWL_DELAY_LOCAL_TURNS = "robotstxt/crawl_delay/local_turns"

# Evidence
ROBOTSTXT_EVIDENCE_RECORDS = "robotstxt/evidence/records"
ROBOTSTXT_EVIDENCE_WRITE_ERRORS = "robotstxt/evidence/write_errors"

# Page rules (meta robots, X-Robots-Tag, rel=nofollow)
ROBOTSMETA_REQUEST_DROPPED_NOFOLLOW = "robotsmeta/request_dropped/nofollow"
ROBOTSMETA_REQUEST_DROPPED_REL_NOFOLLOW = "robotsmeta/request_dropped/rel_nofollow"
ROBOTSMETA_ITEM_DROPPED_NOINDEX = "robotsmeta/item_dropped/noindex"
ROBOTSMETA_RULE_IGNORED = "robotsmeta/rule_ignored"
ROBOTSMETA_READ_ERROR = "robotsmeta/read_error"
ROBOTSMETA_ITEM_UNTAGGED = "robotsmeta/item_untagged"

# Usage preferences and TDMRep
ROBOTSMETA_ITEM_DROPPED = "robotsmeta/item_dropped/{use}"
ROBOTSMETA_ITEM_DROPPED_TDMREP_UNREADABLE = "robotsmeta/item_dropped/tdmrep_unreadable"
ROBOTSMETA_USAGE_IGNORED = "robotsmeta/usage_ignored"
TDMREP_FILE_STATS = FileStats("robotsmeta/tdmrep")
TDMREP_FILE = "robotsmeta/tdmrep/file/{file_status}"
TDMREP_RULE_IGNORED = "robotsmeta/tdmrep/rule_ignored"
TDMREP_VALUE_IGNORED = "robotsmeta/tdmrep/value_ignored"
