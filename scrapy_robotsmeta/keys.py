"""The request meta keys the package reads or writes, each named once."""

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
