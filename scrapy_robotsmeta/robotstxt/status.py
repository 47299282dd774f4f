"""What robots.txt is for an origin: the one type that says it.

A fetch's outcome (:class:`~scrapy_robotsmeta.robotstxt.policy.Outcome`) has one of the three
answers RFC 9309 §2.3.1 gives robots.txt: RULES, ALLOW_ALL or UNAVAILABLE; an origin's state
(:class:`~scrapy_robotsmeta.robotstxt.state.OriginState`) keeps the first two with its rules;
an explanation of a URL adds UNKNOWN and NOT_CHECKED. The values are the words users read:
the stats ``robotstxt/outcome/<value>``, the ``policy`` of ``scrapy robots --json`` and of the
evidence file, the ``kind`` of a state's record and of what a fleet publishes in Redis.

A redirect is no status: it is the answer of one hop inside a fetch, which goes on at its
target (``Outcome.location``) until an answer says what robots.txt is; until then, what
robots.txt is stays UNKNOWN, the kind of the redirect's outcome.

What a request gets (:class:`~scrapy_robotsmeta.robotstxt.state.Decision`: decided by the
rules, dropped, or waiting) is another question, answered at a time: the status stays RULES
while rules that expired are fetched again, yet a request waits for the new ones; it is
UNAVAILABLE both while an outage is retried (requests wait) and once the origin is given up
(they are dropped); RULES and ALLOW_ALL both let the rules decide. So a decision is not derived
from the status, and each keeps its own type.
"""

from __future__ import annotations

import enum


class Status(enum.Enum):
    """What robots.txt is for an origin, and so how it applies to the origin's URLs."""

    RULES = "rules"  # a 2xx body: its rules decide
    ALLOW_ALL = "allow_all"  # 4xx, too many redirects…: RFC 9309 §2.3.1.3, anything goes
    UNAVAILABLE = "unavailable"  # 5xx, 429, network error: RFC 9309 §2.3.1.4, complete disallow
    UNKNOWN = "unknown"  # not fetched yet, or the first fetch is under way: requests wait
    NOT_CHECKED = "not_checked"  # no robots.txt applies (data:, file:, dont_obey_robotstxt)
