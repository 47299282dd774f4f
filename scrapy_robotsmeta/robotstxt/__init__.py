"""robots.txt as RFC 9309 and Google's specification define it: ``RobotsTxt.parse(body)``."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

from scrapy_robotsmeta.robotstxt._encoding import canonical_url_path, match_plain_url
from scrapy_robotsmeta.robotstxt._matcher import (
    Group,
    PlainGroup,
    is_compiled,
    path_pattern_matches,
    usage_lines_for,
)
from scrapy_robotsmeta.robotstxt._parser import (
    MAX_BYTES,
    GroupSpec,
    ParsedFile,
    Rule,
    UsageLine,
    parse_file,
)
from scrapy_robotsmeta.robotstxt.explanation import Explanation
from scrapy_robotsmeta.robotstxt.origin import SCHEME_AUTHORITY
from scrapy_robotsmeta.robotstxt.status import Status
from scrapy_robotsmeta.usage.preferences import NO_PREFERENCES, Preferences, Statement
from scrapy_robotsmeta.usage.vocabulary import read_content_signal, read_content_usage
from scrapy_robotsmeta.useragent import product_token

__all__ = [
    "MAX_BYTES",
    "Explanation",
    "RobotsTxt",
    "Rule",
    "Status",
    "UsageReading",
    "Verdict",
    "path_pattern_matches",
    "url_path",
]


# What parsed rules hold in memory once a crawler's group is compiled, in bytes: a base, and a
# cost per part of the file (each string's characters aside), fitted with tracemalloc. Over the
# corpus the estimate is 0.77 to 0.98 of what a file holds at the quartiles (0.85 at the
# median), and 0.8 to 1.3 of it for files built to be hostile (thousands of groups naming one
# agent, merged, or an agent each). The file's length alone (8 bytes a byte) was 0.54 to 0.69 of
# it for hostile files of many groups, and thousands of times it for one of User-agent lines.
_BASE_BYTES = 1_200
_RULE_BYTES = 160  # a rule, as parsed or compiled (Usage lines count as much)
_CHAR_BYTES = 4  # a character of a rule's path or of a sitemap URL: its string and its prefix
_SHARED_RULE_BYTES = 20  # a rule again in another group a merge made (a reference)
_GROUP_BYTES = 200  # a group after merging
_AGENT_BYTES = 260  # a product token naming a group
_SITEMAP_BYTES = 60
# A file's groups as RobotsTxt keeps them: each as parsed until a check selects it (then a
# Group), or plain when read back from a record (None: not read back yet).
_Groups = list[Group | PlainGroup | GroupSpec | None]


def _size_hint(parsed: ParsedFile, groups: int, agents: int, shared: int) -> int:
    """An estimate of the memory *parsed* holds as a :class:`RobotsTxt` of *groups* groups
    (after merging), named by *agents* product tokens, whose rule lists hold *shared* rules
    again (in a merged group besides their own)."""
    lines = sum(len(spec.rules) + len(spec.usage) for spec in parsed.groups)
    return (
        _BASE_BYTES
        + _RULE_BYTES * lines
        + _CHAR_BYTES * (parsed.rule_chars + sum(map(len, parsed.sitemaps)))
        + _SHARED_RULE_BYTES * shared
        + _GROUP_BYTES * groups
        + _AGENT_BYTES * agents
        + _SITEMAP_BYTES * len(parsed.sitemaps)
    )


class UsageReading(NamedTuple):
    """The usage preferences that apply, and what was left out of them and why."""

    preferences: Preferences
    ignored: tuple[str, ...]


_NO_USAGE = UsageReading(NO_PREFERENCES, ())


@dataclass(frozen=True)
class Verdict:
    """Why a URL is allowed or not: the group that applied and the rule that decided."""

    allowed: bool
    rule: Rule | None
    #: The ``User-agent`` values of the group that applied; None when none did.
    agents: tuple[str, ...] | None

    @property
    def undecided(self) -> bool:
        """Whether the group's rules would have taken more work to match than a check may
        do (a hostile file): the URL is disallowed, and no rule decided."""
        return not self.allowed and self.rule is None

    def __str__(self) -> str:
        """``Disallow: /x (line 7, group a b)``, or why no rule decided."""
        if self.agents is None:
            return "allowed: no group applies"
        group = f"group {' '.join(self.agents)}"
        if self.undecided:
            return f"disallowed: too many rules to try to decide ({group})"
        if self.rule is None:
            return f"allowed: no rule matches ({group})"
        return f"{self.rule.field}: {self.rule.path} (line {self.rule.line}, {group})"


def url_path(url: str) -> str:
    """The URL's path and query in canonical form (RFC 9309 §2.2.2); the fragment is dropped."""
    plain = match_plain_url(url)
    if plain is not None:
        return plain[1]
    return _unusual_path_of(url)


def _unusual_path_of(url: str) -> str:
    """:func:`url_path` for a URL with a fragment, an escape or other text to rewrite."""
    authority = SCHEME_AUTHORITY.match(url)
    path = url[authority.end() :] if authority else url
    fragment = path.find("#")
    if fragment >= 0:
        path = path[:fragment]
    if not path.startswith("/"):
        path = "/" + path
    return canonical_url_path(path)


def _bytes_of(body: object) -> bytes:
    # Checked whatever the annotation says: a caller passing None or a Response deserves to be
    # told so, not an error from deep inside the parser.
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        # surrogatepass: any text (lone surrogates included) has bytes to read.
        return body.encode("utf-8", "surrogatepass")
    if isinstance(body, (bytearray, memoryview)):
        return bytes(body)
    raise TypeError(
        f"RobotsTxt.parse() takes the robots.txt body as bytes or str, not {type(body).__name__}"
    )


@lru_cache(maxsize=4096)  # per request otherwise; sites share their lines (Cloudflare's above all)
def _reading_of(lines: tuple[UsageLine, ...]) -> UsageReading:
    statements: list[Statement] = []
    ignored: list[str] = []
    for line in lines:
        read = read_content_signal if line.field == "Content-Signal" else read_content_usage
        reading = read(line.value, str(line))
        statements += reading.statements
        ignored += reading.ignored
    return UsageReading(Preferences(tuple(statements)), tuple(ignored))


def _merged(specs: list[GroupSpec]) -> GroupSpec:
    """One group of the groups *specs* that name the same agent (RFC 9309 §2.2.1)."""
    merged = GroupSpec()
    merged.agents = [agent for spec in specs for agent in spec.agents]
    # The largest Crawl-delay of the merged groups, as within one group.
    merged.crawl_delay = max(
        (spec.crawl_delay for spec in specs if spec.crawl_delay is not None), default=None
    )
    merged.rules = [rule for spec in specs for rule in spec.rules]
    merged.usage = [line for spec in specs for line in spec.usage]
    return merged


def _groups_of(specs: list[GroupSpec]) -> tuple[_Groups, dict[str, int], int]:
    """A file's groups, the position of each agent's, and how many times rules were put in
    more than one group (by merging groups).

    Each group stays as parsed until a check selects it: most of a file's groups never are.
    """
    groups: _Groups = []
    agents: dict[str, int] = {}
    for spec in specs:
        if spec.agents:
            at = len(groups)
            for agent in spec.agents:
                if agents.setdefault(agent, at) != at:
                    return _merged_groups(specs)
            groups.append(spec)
    # Most files: no agent named by two groups, so no group to merge.
    return groups, agents, 0


def _merged_groups(groups: list[GroupSpec]) -> tuple[_Groups, dict[str, int], int]:
    """:func:`_groups_of` for a file where an agent is named by several groups, which are
    merged into one (RFC 9309 §2.2.1)."""
    members: dict[str, list[int]] = {}
    for index, spec in enumerate(groups):
        for agent in spec.agents:
            members.setdefault(agent, []).append(index)
    merged: _Groups = []
    agents: dict[str, int] = {}
    positions: dict[tuple[int, ...], int] = {}
    references = 0
    for agent, indexes in members.items():
        key = tuple(dict.fromkeys(indexes))
        if key not in positions:
            specs = [groups[i] for i in key]
            positions[key] = len(merged)
            merged.append(specs[0] if len(specs) == 1 else _merged(specs))
            references += sum(len(spec.rules) for spec in specs)
        agents[agent] = positions[key]
    # Beyond the file's own rules: those merging put in a second group (or more).
    return merged, agents, max(0, references - sum(len(spec.rules) for spec in groups))


class RobotsTxt:
    """The parsed rules of one robots.txt file. Build it with :meth:`parse`."""

    __slots__ = (
        "_agents",
        "_groups",
        "_last_agent",
        "_last_group",
        "_rest",
        "_sitemaps",
        "selected",
        "size_hint",
        "truncated",
    )

    def __init__(
        self,
        groups: _Groups,
        agents: dict[str, int],
        sitemaps: list[str] | None,
        truncated: bool,
        size_hint: int = 0,
        *,
        rest: bytes | None = None,
        selected: int = 0,
    ) -> None:
        # A group that several agents name is kept once. Read back from an origin's record,
        # the groups checks had selected stay in their plain form until a check selects one,
        # and the others (with the sitemaps) stay in *rest*, pickled, until something needs
        # them: most files have a group for ``*`` and others for crawlers that are not this
        # one, and a broad crawl reads most origins back from disk for a single check.
        self._groups = groups
        #: Product token → the position of its group.
        self._agents = agents
        self._sitemaps = sitemaps
        self._rest = rest
        #: Whether the body was longer than :data:`MAX_BYTES` and its tail ignored.
        self.truncated = truncated
        #: About how many bytes of memory these rules hold once the group a crawler uses is
        #: compiled (for a cache bounded in bytes).
        self.size_hint = size_hint
        #: How many groups checks have selected (each compiled after its first checks, or when
        #: packed): it only grows, so a copy made before the last check selected one has a
        #: smaller count.
        self.selected = selected
        # The User-Agent of the last check and its group: a crawler checks every URL
        # with one, so most checks skip finding the group (a third of a check's time).
        self._last_agent: str | None = None
        self._last_group: Group | None = None

    @classmethod
    def parse(cls, body: bytes | bytearray | memoryview | str) -> RobotsTxt:
        """Parse a robots.txt body: its bytes, or text (``response.text``), read as UTF-8.

        Never raises on any content (unreadable lines are skipped); anything but bytes or
        ``str`` is a ``TypeError``.
        """
        body = _bytes_of(body)
        parsed = parse_file(body)
        groups, agents, shared = _groups_of(parsed.groups)
        size_hint = _size_hint(parsed, len(groups), len(agents), shared)
        return cls(groups, agents, parsed.sitemaps, parsed.truncated, size_hint)

    @property
    def sitemaps(self) -> list[str]:
        """The ``Sitemap`` URLs of the file, in its order."""
        if self._sitemaps is None:
            self._read_rest()
            assert self._sitemaps is not None
        return self._sitemaps

    def _read_rest(self) -> None:
        rest, self._rest = self._rest, None
        if rest is None:
            self._sitemaps = []
            return
        groups, self._sitemaps = pickle.loads(rest)
        for at, group in enumerate(groups):
            if group is not None:
                self._groups[at] = group

    def to_plain(self) -> tuple[Any, ...]:
        """These rules as tuples, strings and numbers, for an origin's record: read back
        (:meth:`from_plain`) with no class to look up and nothing to parse or compile again.
        The groups checks selected come first, compiled, so that reading them back leaves
        nothing to do before a check; the others and the sitemaps are pickled apart, read only
        when needed."""
        groups = self._groups
        for group in groups:
            if isinstance(group, Group) and group.selected:
                group.compile()  # if its checks have not yet
        plain = [None if group is None else _plain(group) for group in groups]
        selected = tuple(
            group if group is not None and is_compiled(group) else None for group in plain
        )
        rest = self._rest  # still as it was read: nothing in it changed
        if rest is None:
            others = tuple(
                None if group is None or is_compiled(group) else group for group in plain
            )
            if self.sitemaps or others.count(None) < len(others):
                rest = pickle.dumps((others, self.sitemaps), protocol=pickle.HIGHEST_PROTOCOL)
        return selected, self._agents, rest, self.truncated, self.size_hint

    @classmethod
    def from_plain(cls, plain: tuple[Any, ...]) -> RobotsTxt:
        groups, agents, rest, truncated, size_hint = plain
        # Without a rest, a check selected every group and there is no sitemap.
        sitemaps: list[str] | None = [] if rest is None else None
        selected = len(groups) - groups.count(None)
        return cls(
            list(groups), agents, sitemaps, truncated, size_hint, rest=rest, selected=selected
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return _from_plain, (self.to_plain(),)

    def _group(self, user_agent: str) -> Group | None:
        agents = self._agents
        at = agents.get(product_token(user_agent))
        if at is None:
            at = agents.get("*")
            if at is None:
                return None
        group = self._groups[at]
        if group is None:
            self._read_rest()
            group = self._groups[at]
        if isinstance(group, GroupSpec):
            group = self._groups[at] = Group(
                _agents_of(group), group.rules, group.crawl_delay, tuple(group.usage)
            )
        elif isinstance(group, tuple):
            group = self._groups[at] = Group.from_plain(group)
        assert group is not None
        return group

    def _checked(self, user_agent: str) -> Group | None:
        """The group that applies to *user_agent*, ready for checks."""
        group = self._group(user_agent)
        if group is not None and group.select():
            self.selected += 1
        return group

    def explain(self, url: str, user_agent: str) -> Verdict:
        """The verdict for *url*, with the group and the rule that decided it."""
        group = self._checked(user_agent)
        if group is None:
            return Verdict(True, None, None)
        path = url_path(url)
        allowed, rule = (True, None) if path == "/robots.txt" else group.deciding_rule(path)
        return Verdict(allowed, rule, group.agents)

    def allowed(self, url: str, user_agent: str) -> bool:
        """Whether the crawler named by *user_agent* (a product token or a full User-Agent
        header) may fetch *url*."""
        if user_agent == self._last_agent:
            group = self._last_group
        else:
            group = self._checked(user_agent)
            self._last_agent, self._last_group = user_agent, group
        if group is None:
            return True
        plain = match_plain_url(url)  # url_path written out: every check of a crawl
        path = plain[1] if plain is not None else _unusual_path_of(url)
        return path == "/robots.txt" or group.allows(path)

    def usage(self, url: str, user_agent: str) -> Preferences:
        """The usage preferences the file states for *url* to the crawler named by
        *user_agent*: the Content-Signal lines and the Content-Usage rules of the group that
        applies, chosen as for the rules (a crawler with a group of its own gets none of
        ``*``'s)."""
        return self.read_usage(url, user_agent).preferences

    def read_usage(self, url: str, user_agent: str) -> UsageReading:
        """:meth:`usage`, with what its lines say that was left out, and why."""
        group = self._group(user_agent)
        if group is None or not group.usage:
            return _NO_USAGE
        lines = group.usage
        if group.usage_scoped:  # only then does the URL's path matter
            lines = usage_lines_for(lines, url_path(url))
        return _reading_of(lines)

    def crawl_delay(self, user_agent: str) -> float | None:
        """The ``Crawl-delay`` of the group that applies to *user_agent*, in seconds: the
        largest of its lines (and of the groups merged into it), ignoring those that are not a
        number or are negative."""
        group = self._group(user_agent)
        return group.crawl_delay if group is not None else None


# A function, not the class method: Twisted registers a pickler of bound methods that cannot
# pickle one bound to a class.
def _from_plain(plain: tuple[Any, ...]) -> RobotsTxt:
    return RobotsTxt.from_plain(plain)


def _plain(group: Group | PlainGroup | GroupSpec) -> PlainGroup:
    """*group* in its plain form (see Group.to_plain)."""
    if isinstance(group, tuple):
        return group
    if isinstance(group, Group):
        return group.to_plain()
    return _agents_of(group), group.crawl_delay, group.rules, (), None, tuple(group.usage)


def _agents_of(spec: GroupSpec) -> tuple[str, ...]:
    """The product tokens that name *spec*, each once."""
    return tuple(spec.agents) if len(spec.agents) == 1 else tuple(dict.fromkeys(spec.agents))
