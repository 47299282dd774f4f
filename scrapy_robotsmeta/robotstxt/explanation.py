"""Why robots.txt lets a URL through, refuses it or keeps it waiting, as data.

One :class:`Explanation` serves every reader: the middleware's log lines, ``scrapy robots``
(text and JSON), the demo and the benchmarks. It is built by
:meth:`OriginState.explain <scrapy_robotsmeta.robotstxt.state.OriginState.explain>` and read
through its public fields, so the state machine's internals stay private.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy_robotsmeta.robotstxt.status import Status

if TYPE_CHECKING:
    from scrapy_robotsmeta.robotstxt import Verdict
    from scrapy_robotsmeta.robotstxt.origin import Origin
    from scrapy_robotsmeta.robotstxt.policy import Hop


_POLICY_TEXT = {
    Status.RULES: "rules ({reason})",
    Status.ALLOW_ALL: "allow all ({reason})",
    Status.UNAVAILABLE: "unavailable, complete disallow ({reason})",
    Status.UNKNOWN: "not known yet ({reason})",
    Status.NOT_CHECKED: "not checked ({reason})",
}


@dataclass(frozen=True)
class Explanation:
    url: str
    #: None for a URL robots.txt does not apply to.
    origin: Origin | None
    #: How robots.txt applies to the URL: its origin's status (``policy`` in :meth:`as_dict`).
    policy: Status
    #: What the policy came from: "HTTP 200", "HTTP 404", "gave up after HTTP 503"…
    reason: str
    #: The requests of each try of the last fetch (every try of an outage): robots.txt,
    #: then each redirect target.
    tries: tuple[tuple[Hop, ...], ...] = ()
    #: The group and rule that decided, under the RULES policy.
    verdict: Verdict | None = None
    #: What the usage lines of that group say that states nothing, and why.
    usage_ignored: tuple[str, ...] = ()

    @classmethod
    def not_checked(cls, url: str, reason: str) -> Explanation:
        return cls(url, None, Status.NOT_CHECKED, reason)

    @property
    def allowed(self) -> bool:
        """Whether a request of the URL would be downloaded now."""
        if self.verdict is not None:
            return self.verdict.allowed
        return self.policy in (Status.ALLOW_ALL, Status.NOT_CHECKED)

    @property
    def policy_text(self) -> str:
        return _POLICY_TEXT[self.policy].format(reason=self.reason)

    def __str__(self) -> str:
        """One line: the deciding rule under RULES, else the policy and its reason."""
        if self.verdict is not None:
            return str(self.verdict)
        return self.policy_text

    def as_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready) with every field."""
        verdict = self.verdict
        rule = verdict.rule if verdict is not None else None
        return {
            "url": self.url,
            "origin": str(self.origin) if self.origin is not None else None,
            "policy": self.policy.value,
            "reason": self.reason,
            "tries": [
                [{"url": h.url, "status": h.status, "error": h.error} for h in hops]
                for hops in self.tries
            ],
            "group": list(verdict.agents) if verdict and verdict.agents is not None else None,
            "rule": (
                {"allow": rule.allow, "path": rule.path, "line": rule.line}
                if rule is not None
                else None
            ),
            "allowed": self.allowed,
            "usage_ignored": list(self.usage_ignored),
        }
