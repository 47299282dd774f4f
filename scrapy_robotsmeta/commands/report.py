"""What ``scrapy robots`` found for one URL, and how it is printed (text or JSON).

A fetch may pass through several URLs (redirects), and robots.txt is checked for each, so the
report holds one :class:`Check` per URL requested, in order, then the page when it arrived.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from scrapy_robotsmeta.robotstxt.policy import ALLOW_ALL_RULES

if TYPE_CHECKING:
    from scrapy_robotsmeta.robotstxt import Rule
    from scrapy_robotsmeta.robotstxt.state import OriginState

#: How robots.txt applied: its rules; allow all (4xx, too many redirects…); unavailable
#: (5xx, 429, network error: complete disallow); not checked (``data:``/``file:`` URLs).
Policy = Literal["rules", "allow_all", "unavailable", "not_checked"]

EXIT_ALLOWED = 0
EXIT_DISALLOWED = 1
EXIT_ERROR = 2

_LABEL = 14


@dataclass(frozen=True)
class Check:
    """The robots.txt decision for one URL, as RobotsTxtMiddleware took it."""

    url: str
    origin: str | None
    #: Each hop of the robots.txt fetch, of every try when it was retried: "URL STATUS",
    #: "URL failed (why)" or "URL ignored".
    fetches: tuple[str, ...]
    #: The answer of each try, in order: that of its last hop ("503", "failed (why)"…).
    tries: tuple[str, ...]
    policy: Policy
    reason: str
    group: tuple[str, ...] | None
    rule: Rule | None
    allowed: bool

    @classmethod
    def of(cls, url: str, state: OriginState | None, token: str) -> Check:
        """The check of *url* from the state of its origin after the crawl."""
        if state is None:
            return cls(
                url, None, (), (), "not_checked", "no robots.txt for this URL", None, None, True
            )
        origin, fetches = str(state.origin), tuple(state.trail)
        tries = _tries(fetches, state.origin.robots_url)
        if state.rules is None:
            return cls(url, origin, fetches, tries, "unavailable", state.reason, None, None, False)
        verdict = state.rules.explain(url, token)
        return cls(
            url,
            origin,
            fetches,
            tries,
            "allow_all" if state.rules is ALLOW_ALL_RULES else "rules",
            state.reason,
            verdict.agents,
            verdict.rule,
            verdict.allowed,
        )

    def as_dict(self) -> dict[str, Any]:
        rule = self.rule
        return {
            "url": self.url,
            "origin": self.origin,
            "robots_txt_fetches": list(self.fetches),
            "robots_txt_tries": list(self.tries),
            "policy": self.policy,
            "reason": self.reason,
            "group": list(self.group) if self.group is not None else None,
            "rule": (
                {"allow": rule.allow, "path": rule.path, "line": rule.line}
                if rule is not None
                else None
            ),
            "allowed": self.allowed,
        }

    def lines(self, token: str) -> list[str]:
        lines = [self.url]
        if self.origin is not None:
            lines.append(_row("origin", self.origin))
        lines += [_row("robots.txt" if i == 0 else "", hop) for i, hop in enumerate(self.fetches)]
        tries = self.tries
        if len(tries) > 1:
            # The hops above say why each failed; here only the answers, as "503 503 200".
            answers = " ".join(answer.split(" ", 1)[0] for answer in tries)
            lines.append(_row("tries", f"{len(tries)}: {answers}"))
        lines.append(_row("policy", self.policy_text))
        if self.policy == "rules":
            lines.append(_row("group", self._group_text(token)))
            lines.append(_row("rule", self._rule_text()))
        lines.append(_row("verdict", "allowed" if self.allowed else "disallowed"))
        return lines

    @property
    def policy_text(self) -> str:
        return _POLICY_TEXT[self.policy].format(reason=self.reason)

    def _group_text(self, token: str) -> str:
        if self.group is None:
            return f"none (no group for {token} and no * group)"
        return " ".join(self.group)

    def _rule_text(self) -> str:
        if self.rule is None:
            return "none matches"
        field = "Allow" if self.rule.allow else "Disallow"
        return f"{field}: {self.rule.path} (line {self.rule.line})"


def _tries(hops: tuple[str, ...], robots_url: str) -> tuple[str, ...]:
    answers: list[str] = []
    for hop in hops:
        # safe_url_string quotes spaces, so a hop's URL ends at its first one.
        url, _, answer = hop.partition(" ")
        if url == robots_url or not answers:
            answers.append(answer)  # each try starts at robots.txt itself
        else:
            answers[-1] = answer  # a redirect hop: its answer is the try's
    return tuple(answers)


_POLICY_TEXT: dict[Policy, str] = {
    "rules": "rules ({reason})",
    "allow_all": "allow all ({reason})",
    "unavailable": "unavailable, complete disallow ({reason})",
    "not_checked": "not checked ({reason})",
}


@dataclass(frozen=True)
class Page:
    """The response that arrived, and what it says to robots."""

    url: str
    status: int
    x_robots_tag: tuple[str, ...]
    #: Contents of the metas named ``robots`` or the crawler's name, in document order.
    metas: tuple[str, ...]
    #: The item field value; None when RobotsMetaMiddleware is not enabled.
    directives: dict[str, Any] | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "status": self.status,
            "x_robots_tag": list(self.x_robots_tag),
            "metas": list(self.metas),
            "directives": self.directives,
        }

    def lines(self, name: str) -> list[str]:
        lines = [f"Page {self.status} {self.url}"]
        lines += [_row("X-Robots-Tag", value) for value in self.x_robots_tag] or [
            _row("X-Robots-Tag", "none")
        ]
        lines += [_row("meta", content) for content in self.metas] or [
            _row("meta", f"none named robots or {name}")
        ]
        if self.directives is None:
            lines.append(_row("directives", "not read: RobotsMetaMiddleware is not enabled"))
        else:
            lines.append("  effective directives")
            lines += [
                f"    {key:<20}{json.dumps(value)}" for key, value in self.directives.items()
            ]
        return lines


@dataclass(frozen=True)
class Report:
    url: str
    user_agent: str
    #: The robots.txt product token, and the crawler's name that page-level rules address.
    token: str
    name: str
    checks: tuple[Check, ...]
    page: Page | None
    #: Why the page did not arrive, when it did not.
    error: str | None
    notes: tuple[str, ...] = ()

    @property
    def allowed(self) -> bool:
        return bool(self.checks) and all(check.allowed for check in self.checks)

    @property
    def exit_status(self) -> int:
        if self.page is not None and self.allowed:
            return EXIT_ALLOWED
        if self.checks and self.checks[-1].policy == "rules" and not self.checks[-1].allowed:
            return EXIT_DISALLOWED
        return EXIT_ERROR

    def as_json(self) -> str:
        return json.dumps(
            {
                "url": self.url,
                "user_agent": self.user_agent,
                "token": self.token,
                "crawler_name": self.name,
                "checks": [check.as_dict() for check in self.checks],
                "allowed": self.allowed,
                "page": self.page.as_dict() if self.page is not None else None,
                "error": self.error,
                "notes": list(self.notes),
                "exit_status": self.exit_status,
            },
            indent=2,
        )

    def as_text(self) -> str:
        lines = [_top("URL", self.url), _top("User-Agent", self.user_agent)]
        lines += [_top("token", self.token), _top("crawler name", self.name), ""]
        for check in self.checks:
            lines += [*check.lines(self.token), ""]
        if self.page is not None:
            lines += [*self.page.lines(self.name), ""]
        lines += [f"note: {note}" for note in self.notes]
        lines.append(f"result: {self._result_text()} (exit status {self.exit_status})")
        return "\n".join(lines)

    def _result_text(self) -> str:
        status = self.exit_status
        if status == EXIT_ALLOWED:
            return "allowed"
        if status == EXIT_DISALLOWED:
            return "disallowed by robots.txt"
        return f"error: {self.error}"


def _top(label: str, value: str) -> str:
    return f"{label:<{_LABEL + 2}}{value}"


def _row(label: str, value: str) -> str:
    return f"  {label:<{_LABEL}}{value}"
