"""The rules of one group, arranged so that finding the deciding rule touches few of them.

RFC 9309 §2.2.2: the most specific (longest) matching rule decides, and ``allow`` wins a tie.
Rules are sorted by that precedence (a stable sort: among equals, the rule written first is the
one that explains a verdict), so within a list the first match is the best one. A rule can only
match a path that starts with its literal prefix (the text before its first ``*``): a small
group first asks whether the path starts with any of its prefixes, one C-level
``str.startswith`` that rules most checks out at once. A large group is indexed (``_Index``) so
that a check looks at a handful of its rules, however many it has and whatever they say: a
hostile file may hold tens of thousands of ``/*x…`` rules, checked against 8 KB URLs.
Everything is built on first use: most groups of a file are never selected.

A cache may hold thousands of origins, each with a compiled group, so a group's compiled rules
are kept as a few tuples, one entry per rule in each (a ``_Table``), rather than as one object
per rule, and the index holds positions in them; the parsed ``Rule`` is only rebuilt to
explain a verdict.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from operator import itemgetter
from typing import Any, NamedTuple

from scrapy_robotsmeta.robotstxt._encoding import canonical_rule_path
from scrapy_robotsmeta.robotstxt._parser import Rule, UsageLine

#: A group as :meth:`Group.to_plain` gives it.
PlainGroup = tuple[Any, ...]

# The group size from which an index beats one scan of all prefixes; the index's key lengths.
_INDEX_FROM = 32
_PREFIX_KEY = 4
_PIECE_KEY = 3

# What follows a rule's literal prefix: the literal pieces after each "*" and whether the rule
# ends with "$". None for the common plain rule, which matches every path its prefix starts.
_Tail = tuple[tuple[str, ...], bool] | None
# One rule as a row of a _Table: prefix, tail, precedence, path as written, line.
_Entry = tuple[str, _Tail, int, str, int]
_precedence = itemgetter(2)


def _entry(pattern: str, allow: bool, path: str, line: int) -> _Entry:
    """A rule's row of a :class:`_Table`, for its canonical *pattern*."""
    # Longer patterns first; on equal length, allow (odd) before disallow (even).
    precedence = 2 * len(pattern) + allow
    if "*" in pattern or pattern.endswith("$"):
        return (*_split_pattern(pattern), precedence, path, line)
    return pattern, None, precedence, path, line  # most rules: a plain prefix


def _split_pattern(pattern: str) -> tuple[str, _Tail]:
    anchored = pattern.endswith("$")
    prefix, *pieces = (pattern[:-1] if anchored else pattern).split("*")
    return prefix, (tuple(pieces), anchored) if pieces or anchored else None


def _matches(path: str, prefix: str, tail: _Tail) -> bool:
    return path.startswith(prefix) and (
        tail is None or _matches_after_prefix(path, len(prefix), *tail)
    )


@lru_cache(maxsize=4096)  # sites share their few Content-Usage paths ("/" above all)
def _usage_pattern(path: str) -> tuple[int, str, _Tail]:
    pattern = canonical_rule_path(path)
    return (len(pattern), *_split_pattern(pattern))


def usage_lines_for(lines: tuple[UsageLine, ...], path: str) -> tuple[UsageLine, ...]:
    """The usage lines of a group that apply to a canonical *path*.

    Every Content-Signal line applies to the whole group. Of the Content-Usage rules, those
    whose path matches longest apply, matched as Allow and Disallow paths are
    (draft-ietf-aipref-attach-05 §3.1); a rule without a path counts as "/", the whole site.
    Rules of the same length all apply: the draft combines those with identical paths as the
    vocabulary combines statements, and equal lengths are the same question.
    """
    best = -1
    rules: list[UsageLine] = []
    for line in lines:
        if line.field == "Content-Usage":
            length, prefix, tail = _usage_pattern(line.path or "/")
            if length >= best and _matches(path, prefix, tail):
                if length > best:
                    best, rules = length, []
                rules.append(line)
    # In file order, as the group has them.
    return tuple(line for line in lines if line.field != "Content-Usage" or line in rules)


class _Table(NamedTuple):
    """Rules in precedence order, one tuple per attribute."""

    prefixes: tuple[str, ...]
    tails: tuple[_Tail, ...]
    precedences: tuple[int, ...]
    paths: tuple[str, ...]
    lines: tuple[int, ...]

    def first_match(self, path: str, indexes: Iterable[int]) -> int | None:
        """The first (so the best) of the rules at *indexes* that matches *path*."""
        prefixes, tails = self.prefixes, self.tails
        for index in indexes:
            prefix = prefixes[index]
            if path.startswith(prefix):
                tail = tails[index]
                if tail is None or _matches_after_prefix(path, len(prefix), *tail):
                    return index
        return None


def _matches_after_prefix(path: str, start: int, pieces: tuple[str, ...], anchored: bool) -> bool:
    """Match the pieces that follow each ``*`` from *start* on.

    With only ``*`` as an operator, placing every piece at its earliest possible position is
    always right, so this is a left-to-right scan with ``str.find``: linear in the pattern,
    never the backtracking a regular expression risks on patterns with many ``*``.
    """
    end = len(path)
    if anchored:
        if not pieces:
            return start == end
        last = pieces[-1]
        end -= len(last)
        if end < start or not path.endswith(last):
            return False
        pieces = pieces[:-1]
    for piece in pieces:
        found = path.find(piece, start, end)
        if found < 0:
            return False
        start = found + len(piece)
    return True


_NO_RULES = _Table((), (), (), (), ())


class _Index:
    """Which rules of a large group can match a path, found without looking at the others.

    A rule with a literal piece after a ``*`` is keyed by the first characters of its longest
    piece, which any path it matches holds: its prefix (most often just ``/``) would select it
    for every path. Every other rule is keyed by the first characters of its prefix, which a
    path it matches starts with. Positions are added in precedence order, so each key's list
    stays in it.
    """

    __slots__ = ("by_piece", "by_prefix", "piece_key_lengths")

    def to_plain(self) -> tuple[Any, ...]:
        return self.by_prefix, self.by_piece, self.piece_key_lengths

    @classmethod
    def from_plain(cls, plain: tuple[Any, ...]) -> _Index:
        index = cls.__new__(cls)
        index.by_prefix, index.by_piece, index.piece_key_lengths = plain
        return index

    def __init__(self, table: _Table) -> None:
        by_prefix: dict[str, list[int]] = {}
        by_piece: dict[str, list[int]] = {}
        for index, (prefix, tail) in enumerate(zip(table.prefixes, table.tails, strict=True)):
            longest = max(tail[0], key=len, default="") if tail is not None else ""
            if longest:
                by_piece.setdefault(longest[:_PIECE_KEY], []).append(index)
            else:
                by_prefix.setdefault(prefix[:_PREFIX_KEY], []).append(index)
        self.by_prefix = {key: tuple(indexes) for key, indexes in by_prefix.items()}
        self.by_piece = {key: tuple(indexes) for key, indexes in by_piece.items()}
        self.piece_key_lengths = sorted({len(key) for key in by_piece})

    def decide(self, table: _Table, path: str) -> int | None:
        best: int | None = None
        for length in range(min(len(path), _PREFIX_KEY) + 1):
            rules = self.by_prefix.get(path[:length])
            if rules is not None:
                index = table.first_match(path, rules)
                # Positions follow precedence, and file order among equals: the lowest wins.
                if index is not None and (best is None or index < best):
                    best = index
        if self.by_piece:
            candidates: set[int] = set()
            for size in self.piece_key_lengths:
                held = (
                    set(path)
                    if size == 1
                    else {path[start : start + size] for start in range(len(path) - size + 1)}
                )
                for key in held & self.by_piece.keys():
                    candidates.update(self.by_piece[key])
            better = sorted(i for i in candidates if best is None or i < best)
            index = table.first_match(path, better)
            if index is not None:
                best = index
        return best


class Group:
    """The rules that apply to one product token, its crawl delay and its usage lines."""

    __slots__ = ("_index", "_rules", "_table", "agents", "crawl_delay", "usage", "usage_scoped")

    def __init__(
        self,
        agents: tuple[str, ...],
        rules: list[Rule] | list[tuple[bool, str, int]],
        crawl_delay: float | None,
        usage: tuple[UsageLine, ...] = (),
    ):
        self.agents = agents
        self.crawl_delay = crawl_delay
        self.usage = usage
        #: Whether a Content-Usage rule has a path: only then do the lines that apply to a
        #: URL depend on it.
        self.usage_scoped = any(line.path is not None for line in usage)
        #: The rules as parsed (or as plain tuples, read back from a pickle), until the first
        #: check compiles them.
        self._rules: list[Rule] | list[tuple[bool, str, int]] | None = rules
        self._table = _NO_RULES
        self._index: _Index | None = None

    def to_plain(self) -> PlainGroup:
        """The group as tuples, strings and numbers: read back (:meth:`from_plain`) without
        a class to look up for each part, and without compiling again what was compiled."""
        rules = None if self._rules is None else [tuple(rule) for rule in self._rules]
        index = None if self._index is None else self._index.to_plain()
        usage = tuple(tuple(line) for line in self.usage)
        return self.agents, self.crawl_delay, rules, tuple(self._table), index, usage

    @classmethod
    def from_plain(cls, plain: PlainGroup) -> Group:
        # Slots set one by one: __init__ would work out again what the plain form keeps.
        group = cls.__new__(cls)
        group.agents, group.crawl_delay, group._rules, table, index, usage = plain
        group.usage = tuple(map(UsageLine._make, usage)) if usage else ()
        group.usage_scoped = any(line.path is not None for line in group.usage)
        group._table = _NO_RULES if group._rules is not None else _Table._make(table)
        group._index = None if index is None else _Index.from_plain(index)
        return group

    def __reduce__(self) -> tuple[Any, ...]:
        return _group_from_plain, (self.to_plain(),)

    def compile(self) -> None:
        """Build the tables checks read, once: the first check does if nothing else did."""
        rules = self._rules
        if rules is None:
            return
        entries: list[_Entry] = []
        for allow, path, line in rules:
            pattern = canonical_rule_path(path)
            entries.append(_entry(pattern, allow, path, line))
            if allow:
                # Googlebot reads "Allow: /dir/index.html" (or index.htm…) as allowing "/dir/"
                # too, the URL that serves that page, and only it: it adds "Allow: /dir/$"
                # under the same line.
                slash = pattern.rfind("/")
                if slash >= 0 and pattern.startswith("/index.htm", slash):
                    entries.append(_entry(pattern[: slash + 1] + "$", allow, path, line))
        # Stable: among equals, file order.
        entries.sort(key=_precedence, reverse=True)
        self._table = _Table(*zip(*entries, strict=True)) if entries else _NO_RULES
        if len(entries) >= _INDEX_FROM:
            self._index = _Index(self._table)
        self._rules = None

    @property
    def compiled(self) -> bool:
        """Whether a check compiled the group's rules."""
        return self._rules is None

    def allows(self, path: str) -> bool:
        """Whether a canonical *path* is allowed: no rule matches, or the deciding one allows."""
        index = self._decide(path)
        return index is None or bool(self._table.precedences[index] & 1)

    def deciding_rule(self, path: str) -> Rule | None:
        """The rule that decides for a canonical *path*, or None when no rule matches."""
        index = self._decide(path)
        if index is None:
            return None
        table = self._table
        return Rule(bool(table.precedences[index] & 1), table.paths[index], table.lines[index])

    def _decide(self, path: str) -> int | None:
        """The position of the deciding rule in the group's table."""
        if self._rules is not None:
            self.compile()
        table = self._table
        if self._index is not None:
            return self._index.decide(table, path)
        if not path.startswith(table.prefixes):
            return None
        return table.first_match(path, range(len(table.prefixes)))


def is_compiled(group: Group | PlainGroup) -> bool:
    """Whether a check compiled *group*, built or still in its plain form."""
    # A plain group keeps no rules (its index 2) once they are compiled: see Group.to_plain.
    return group[2] is None if isinstance(group, tuple) else group.compiled


# A function, not the class method: Twisted registers a pickler of bound methods that cannot
# pickle one bound to a class.
def _group_from_plain(plain: PlainGroup) -> Group:
    return Group.from_plain(plain)
