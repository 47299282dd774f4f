"""What a decided request gets: it goes on, with the usage preferences robots.txt states for
it (and, when the crawl keeps evidence, the reference to the robots.txt that let it through)
recorded for its response, or it is refused with ``IgnoreRequest``, its reason logged and
counted."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest

from scrapy_robotsmeta.keys import (
    EVIDENCE_META_KEY,
    ROBOTSTXT_FORBIDDEN,
    ROBOTSTXT_UNAVAILABLE_DROPPED,
    ROBOTSTXT_UNDECIDED,
    ROBOTSTXT_USAGE_IGNORED,
    TDMREP_META_KEY,
    USAGE_META_KEY,
)
from scrapy_robotsmeta.robotstxt.state import Decision
from scrapy_robotsmeta.usage.tdmrep import file_reading

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.statscollectors import StatsCollector

    from scrapy_robotsmeta.evidence import EvidenceLog
    from scrapy_robotsmeta.robotstxt import RobotsTxt
    from scrapy_robotsmeta.robotstxt.state import OriginState

# The middleware's name: these lines are its lines.
logger = logging.getLogger("scrapy_robotsmeta.downloadermiddleware")


class Verdicts:
    """Applies the decision of one check to its request."""

    def __init__(
        self, stats: StatsCollector, spider: Spider | None, evidence: EvidenceLog | None = None
    ) -> None:
        self.stats, self.spider, self.evidence = stats, spider, evidence

    def apply(self, decision: Decision, state: OriginState, request: Request, token: str) -> None:
        """Let *request* go on by *state*'s rules for the crawler *token*, or raise
        IgnoreRequest with the reason."""
        if decision is Decision.DROP:
            self._note(
                ROBOTSTXT_UNAVAILABLE_DROPPED,
                logging.DEBUG,
                "Dropped %(request)s: robots.txt of %(origin)s unavailable (%(reason)s)",
                request=request,
                origin=state.origin,
                reason=state.reason,
            )
            raise IgnoreRequest(f"robots.txt of {state.origin} unavailable ({state.reason})")
        assert state.rules is not None
        if self.evidence is not None:
            # The verdict with its deciding rule, in the one look-up a check makes.
            verdict = state.rules.explain(request.url, token)
            if not verdict.allowed:
                self._refuse(state, request, token)
            request.meta[EVIDENCE_META_KEY] = self.evidence.references(state, verdict)
        elif not state.rules.allowed(request.url, token):
            self._refuse(state, request, token)
        self._record_usage(state.rules, request, token)
        if state.tdmrep is not None:
            # As for robots.txt's preferences: the file as it is now, for the response.
            request.meta[TDMREP_META_KEY] = file_reading(state.tdmrep, request.url)

    def _refuse(self, state: OriginState, request: Request, token: str) -> None:
        explanation = state.explain(request.url, token)
        if explanation.verdict is not None and explanation.verdict.undecided:
            self._note(
                ROBOTSTXT_UNDECIDED,
                logging.INFO,
                "robots.txt of %(origin)s has too many rules to try for %(request)s within "
                "the bound of one check: refused, as if disallowed",
                origin=state.origin,
                request=request,
            )
        why = str(explanation)
        self._note(
            ROBOTSTXT_FORBIDDEN,
            logging.DEBUG,
            "Forbidden by robots.txt: %(request)s, by %(why)s",
            request=request,
            why=why,
        )
        raise IgnoreRequest(f"Forbidden by robots.txt: {why}")

    def _record_usage(self, rules: RobotsTxt, request: Request, token: str) -> None:
        """Put on the request, for its response, the preferences robots.txt states for it now:
        by the time an item is made of the response, the origin may have been refreshed or
        have left the cache."""
        reading = rules.read_usage(request.url, token)
        if reading.preferences.statements:
            request.meta[USAGE_META_KEY] = reading.preferences
        for reason in reading.ignored:
            self._note(
                ROBOTSTXT_USAGE_IGNORED,
                logging.DEBUG,
                "Ignored part of a usage preference for %(request)s: %(reason)s",
                request=request,
                reason=reason,
            )

    def _note(self, stat: str, level: int, message: str, **values: object) -> None:
        """Count *stat*, and log *message* with *values*."""
        self.stats.inc_value(stat)
        logger.log(level, message, values, extra={"spider": self.spider})
