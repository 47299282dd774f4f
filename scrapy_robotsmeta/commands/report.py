"""What ``scrapy robots`` found for one URL, and how it is printed (text or JSON).

A fetch may pass through several URLs (redirects), and robots.txt is checked for each, so the
report holds one :class:`Explanation` per URL requested, in order, then the page when it arrived.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

from scrapy_robotsmeta.robotstxt.explanation import Explanation
from scrapy_robotsmeta.robotstxt.policy import Hop
from scrapy_robotsmeta.robotstxt.status import Status
from scrapy_robotsmeta.usage.preferences import USES, Preferences
from scrapy_robotsmeta.usage.tdmrep import NOT_CONSULTED, READ, TdmReading

EXIT_ALLOWED = 0
EXIT_DISALLOWED = 1
EXIT_ERROR = 2

_LABEL = 14


def check_lines(check: Explanation, token: str) -> list[str]:
    """The robots.txt decision for one URL, as text rows."""
    lines = [check.url]
    if check.origin is not None:
        lines.append(_row("origin", str(check.origin)))
    lines += _try_lines(check.tries)
    if len(check.tries) > 1:
        # The hops above say why each failed; here only each try's answer, as "503 x2, 200".
        answers = [hops[-1].answer.split(" ", 1)[0] for hops in check.tries if hops]
        lines.append(_row("tries", f"{len(check.tries)}: {_counted(answers)}"))
    lines.append(_row("policy", check.policy_text))
    verdict = check.verdict
    if verdict is not None:
        group = (
            " ".join(verdict.agents)
            if verdict.agents is not None
            else f"none (no group for {token} and no * group)"
        )
        lines.append(_row("group", group))
        lines.append(_row("rule", str(verdict.rule) if verdict.rule else "none matches"))
    lines += [_row("usage", f"ignored: {reason}") for reason in check.usage_ignored]
    lines.append(_row("verdict", "allowed" if check.allowed else "disallowed"))
    return lines


def _try_lines(tries: tuple[tuple[Hop, ...], ...]) -> list[str]:
    """The hops of each try; a run of identical tries (an outage's retries) once, with its
    count."""
    texts: list[str] = []
    for hops, run in itertools.groupby(tries):
        count = len(list(run))
        hop_texts = [str(hop) for hop in hops]
        if count > 1 and hop_texts:
            hop_texts[-1] += f"  ({count} identical tries)"
        texts += hop_texts
    return [_row("robots.txt" if i == 0 else "", text) for i, text in enumerate(texts)]


def _counted(values: list[str]) -> str:
    """``["503", "503", "200"]`` → ``"503 x2, 200"``."""
    runs = ((value, len(list(run))) for value, run in itertools.groupby(values))
    return ", ".join(value if count == 1 else f"{value} x{count}" for value, count in runs)


@dataclass(frozen=True)
class TdmPage:
    """What TDMRep said of the page, each source apart, then after its precedence."""

    #: What the origin's tdmrep.json said of the URL (its status, the rule that matched).
    file: TdmReading
    #: Why the file is what it is (``HTTP 404``, ``not JSON (…)``), "" when read.
    file_reason: str
    #: The tdm-reservation and tdm-policy values of the headers, then of the metas.
    headers: tuple[str | None, str | None]
    metas: tuple[str | None, str | None]
    result: TdmReading

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file.file,
            "file_reason": self.file_reason,
            "file_rule": self.file.source or None,
            "file_reservation": self.file.reserved,
            "headers": dict(zip(_TDM_NAMES, self.headers, strict=True)),
            "metas": dict(zip(_TDM_NAMES, self.metas, strict=True)),
            **self.result.to_dict(),
            "source": self.result.source or None,
            "policy_source": self.result.policy_source or None,
        }

    def lines(self) -> list[str]:
        lines = ["  TDMRep (a header supersedes the file, a meta both)"]
        lines.append(f"    {'tdmrep.json':<20}{self._file_text()}")
        for label, values in (("header", self.headers), ("meta", self.metas)):
            said = [f"{n}: {v}" for n, v in zip(_TDM_NAMES, values, strict=True) if v is not None]
            lines.append(f"    {label:<20}{'; '.join(said) or 'none'}")
        result = self.result
        by = f"by {result.source}" if result.source else "no statement"
        lines.append(f"    {'tdm_reservation':<20}{json.dumps(result.reserved):<6} {by}")
        policy = result.to_dict()["tdm_policy"]
        source = f"by {result.policy_source}" if policy else ""
        lines.append(f"    {'tdm_policy':<20}{json.dumps(policy):<6} {source}".rstrip())
        return lines

    def _file_text(self) -> str:
        file = self.file
        if file.file == NOT_CONSULTED:
            return "not fetched: robots.txt was not checked for this request"
        if file.file != READ:
            return f"{file.file} ({self.file_reason})" if self.file_reason else file.file
        if not file.source:
            return "read: no rule matches"
        policy = f", tdm-policy {file.policy}" if file.policy else ""
        return f"read: {file.source}: tdm-reservation {json.dumps(file.reserved)}{policy}"


_TDM_NAMES = ("tdm-reservation", "tdm-policy")


@dataclass(frozen=True)
class Page:
    """The response that arrived, and what it says to robots."""

    url: str
    status: int
    x_robots_tag: tuple[str, ...]
    #: Contents of the metas named ``robots`` or the crawler's name, in document order.
    metas: tuple[str, ...]
    #: The directives of the item field; None when RobotsMetaMiddleware is not enabled.
    directives: dict[str, Any] | None
    #: Every usage statement that applied, with its source; None as for ``directives``.
    usage: Preferences | None = None
    #: What the page's Content-Usage / Content-Signal headers say that states nothing, and why.
    usage_ignored: tuple[str, ...] = ()
    #: What TDMRep said, by source; None when it was not consulted.
    tdmrep: TdmPage | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "status": self.status,
            "x_robots_tag": list(self.x_robots_tag),
            "metas": list(self.metas),
            "directives": self.directives,
            "usage": self._usage_dict(),
            "usage_ignored": list(self.usage_ignored),
            "tdmrep": self.tdmrep.as_dict() if self.tdmrep is not None else None,
        }

    def _usage_dict(self) -> dict[str, Any] | None:
        """Use → its combined value and each statement about it, with where it was read."""
        if self.usage is None:
            return None
        return {
            use: {
                "allowed": self.usage.allows(use),
                "statements": [
                    {"allowed": s.allowed, "source": s.source} for s in self.usage.about(use)
                ],
            }
            for use in USES
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
        if self.usage is not None:
            lines.append("  usage preferences (most restrictive of their statements)")
            for use in USES:
                sources = [
                    f"{'yes' if s.allowed else 'no'} by {s.source}" for s in self.usage.about(use)
                ]
                value = json.dumps(self.usage.allows(use))
                lines.append(f"    {use:<20}{value:<7}{'; '.join(sources) or 'no statement'}")
            lines += [f"    {'ignored':<20}{reason}" for reason in self.usage_ignored]
        if self.tdmrep is not None:
            lines += self.tdmrep.lines()
        return lines


@dataclass(frozen=True)
class Report:
    url: str
    user_agent: str
    #: The robots.txt product token, and the crawler's name that page-level rules address.
    token: str
    name: str
    checks: tuple[Explanation, ...]
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
        last = self.checks[-1] if self.checks else None
        if last is not None and last.policy is Status.RULES and not last.allowed:
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
            lines += [*check_lines(check, self.token), ""]
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
