"""The rules of one group, arranged so that finding the deciding rule touches few of them.

RFC 9309 §2.2.2: the most specific (longest) matching rule decides, and ``allow`` wins a tie.
Rules are sorted by that precedence (a stable sort: among equals, the rule written first is the
one that explains a verdict), so within a list the first match is the best one. A rule can only
match a path that starts with its literal prefix (the text before its first ``*``): a small
group first asks whether the path starts with any of its prefixes, one C-level
``str.startswith`` that rules most checks out at once. A large group is indexed (``_Index``) so
that a check looks at a handful of its rules, however many it has. A hostile file can still
make thousands of them look worth trying (tens of thousands of ``/*x…`` rules alike, checked
against 8 KB URLs): one check does at most ``WORK_BOUND`` of work, and past it answers
disallowed, no rule deciding.
Everything is built on first use: most groups of a file are never selected. A group's first
checks scan its rules as parsed (``_scan``), with the compiled group's answers: compiling pays
for itself only over more checks than most origins of a broad crawl get.

A cache may hold thousands of origins, each with a compiled group, so a group's compiled rules
are kept as a few tuples, one entry per rule in each (a ``_Table``), rather than as one object
per rule, and the index holds positions in them; the parsed ``Rule`` is only rebuilt to
explain a verdict.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import chain
from operator import itemgetter
from typing import Any, NamedTuple

from scrapy_robotsmeta.robotstxt._encoding import (
    canonical_rule_path,
    canonical_rule_paths,
    match_plain_rule_paths,
    rule_paths_canonical,
)
from scrapy_robotsmeta.robotstxt._parser import Rule, RuleRow, UsageLine

#: A group as :meth:`Group.to_plain` gives it.
PlainGroup = tuple[Any, ...]

# The group size from which an index beats one scan of all prefixes.
_INDEX_FROM = 32
# An indexed rule's prefix is looked up by its first characters, and the rules that share
# those are scanned; past a handful, they are looked up by their whole prefix instead.
_START = 4
_CROWDED = 16
# The length of the runs of characters of a rule's pieces an index files it under.
_GRAM = 3
# Up to this many runs of characters, a check asks whether the path holds each (a C-level
# search, for the handful most indexes have) rather than cut the path into all of its own.
_FEW_PIECES = 16
# Kinds of key an indexed rule is filed under (see _Index).
_BY_PREFIX, _BY_SUFFIX, _BY_PIECE = range(3)

#: The work one check may do, in characters a search may compare (see _Table.first_match):
#: about 3 ms of CPython's ``str.find`` at its slowest (0.45 ns a character), and nearly
#: twice what any check of a real file needed (robots.txt files of 1,613 sites with their
#: own URLs: 0.75 % of it at most; with those URLs made 8 KiB long, 56 %).
WORK_BOUND = 8_000_000
# What looking at a rule, and starting a search for one of its pieces, cost besides the
# characters searched, in the same characters (about 0.2 and 0.05 µs).
_RULE_COST = 512
_PIECE_COST = 128
# The most rules one check looks at (each costs about 0.2 µs even when its prefix rules it
# out); a small group has fewer.
_MAX_TRIED = WORK_BOUND // _RULE_COST
#: The answer of a check that would take more than WORK_BOUND: no rule decided, disallowed.
UNDECIDED = -1
#: How many checks a group answers from its rules as parsed (see _scan) before it compiles
#: them: compiling a real group costs about as much as this many scans of it, so that a group
#: checked a few times never pays for it, and one checked often pays it once.
SCANS = 4


# What follows a rule's literal prefix: the literal pieces after each "*" and whether the rule
# ends with "$". None for the common plain rule, which matches every path its prefix starts.
_Tail = tuple[tuple[str, ...], bool] | None
# One rule as a row of a _Table: prefix, tail, weight, precedence, path as written, line.
_Entry = tuple[str, _Tail, int, int, str, int]
_precedence = itemgetter(3)


def _entry(pattern: str, allow: bool, path: str, line: int) -> _Entry:
    """A rule's row of a :class:`_Table`, for its canonical *pattern*."""
    # Longer patterns first; on equal length, allow (odd) before disallow (even).
    precedence = 2 * len(pattern) + allow
    if "*" in pattern or pattern.endswith("$"):
        prefix, tail = _split_pattern(pattern)
        weight = max(map(len, tail[0]), default=0) if tail is not None else 0
        return prefix, tail, max(weight, 1), precedence, path, line
    return pattern, None, 0, precedence, path, line  # most rules: a plain prefix


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


def path_pattern_matches(pattern: str, path: str) -> bool:
    """Whether a path *pattern* of robots.txt's syntax (``*``, a final ``$``) matches a
    canonical *path* (what TDMRep's locations are)."""
    _, prefix, tail = _usage_pattern(pattern)
    return _matches(path, prefix, tail)


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
    #: The length of each rule's longest piece after a ``*`` (0 without one; none at all when
    #: no rule has a tail): what a match of its tail may cost per character of the path (see
    #: :func:`_matches_after_prefix`).
    weights: tuple[int, ...]
    precedences: tuple[int, ...]
    paths: tuple[str, ...]
    lines: tuple[int, ...]

    def first_match(self, path: str, indexes: Iterable[int]) -> int | None:
        """The first (so the best) of the rules at *indexes* that matches *path*, or
        :data:`UNDECIDED` when finding it would take more than :data:`WORK_BOUND`."""
        prefixes, tails, weights = self.prefixes, self.tails, self.weights
        work = WORK_BOUND
        size = len(path)
        for index in indexes:
            prefix = prefixes[index]
            if path.startswith(prefix):
                tail = tails[index]
                if tail is None:
                    return index
                start = len(prefix)
                work -= (size - start) * weights[index] + _RULE_COST + len(tail[0]) * _PIECE_COST
                if work < 0:
                    return UNDECIDED
                if _matches_after_prefix(path, start, *tail):
                    return index
        return None

    def first_in_order(self, path: str) -> int | None:
        """:meth:`first_match` of all the rules: up to the first whose prefix *path* starts
        with, only prefixes are compared."""
        for index, prefix in enumerate(self.prefixes):
            if path.startswith(prefix):
                if self.tails[index] is None:
                    return index
                return self.first_match(path, range(index, len(self.prefixes)))
        return None


def _matches_after_prefix(path: str, start: int, pieces: tuple[str, ...], anchored: bool) -> bool:
    """Match the pieces that follow each ``*`` from *start* on.

    With only ``*`` as an operator, placing every piece at its earliest possible position is
    always right, so this is a left-to-right scan with ``str.find``, never the backtracking a
    regular expression risks on patterns with many ``*``. Each search starts where the last
    one ended, so the path is read once; but ``str.find`` may compare a piece at each position
    it reads (CPython's search for a needle shorter than 100 characters does, in a path like
    ``aaa…`` and a piece like ``aaa…b``): a match costs up to the path's length times the
    longest piece's, the rule's weight.
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


_NO_RULES = _Table((), (), (), (), (), ())
# What _scan answers when the compiled group might answer otherwise: compile and ask it.
_UNSURE: RuleRow = (False, "", 0)
# The work a scan may do before it answers _UNSURE: a quarter of a check's, so that a check
# that scans, then compiles and checks again does at most 1.25 times WORK_BOUND.
_SCAN_BOUND = WORK_BOUND // 4


# A group's rules as checks scan them before it is compiled (see _scan): every rule's
# pattern, for one C-level test of whether a plain one matches (one with a "*" or a "$" never
# does: a canonical path holds neither); the rules with them; the rules whose pattern has a
# "*" or a "$", tried one by one; whether each pattern is its rule's path as written. A plain
# tuple: a named one costs a Python-level call to make, on the first check of each file.
_Scan = tuple[tuple[str, ...], list[RuleRow], list[RuleRow], bool]
# Below one "*" in this many rules, the rules with a "*" or a "$" are found by C-level
# searches of the patterns joined (each found costs as much as looking at this many rules).
_SPARSE = 16


def _scan_of(rules: list[RuleRow]) -> _Scan | None:
    """What checks scan of *rules* (see _scan): each rule with its canonical pattern for path;
    None when a scan could answer otherwise than the compiled group: where an index page's
    allow adds a pattern, and past _MAX_TRIED rules, where a compiled check may stop short."""
    if len(rules) > _MAX_TRIED:
        return None
    patterns = [rule[1] for rule in rules]
    joined = "\n".join(patterns)
    as_written = rule_paths_canonical(joined)
    if not as_written:
        joined = canonical_rule_paths(joined)
        patterns = joined.split("\n")
        rules = [
            (allow, pattern, line)
            for (allow, _, line), pattern in zip(rules, patterns, strict=True)
        ]
    if "/index.htm" in joined and _adds_patterns(rules):
        return None
    return tuple(patterns), rules, _with_operators(rules, joined), as_written


def _with_operators(rows: list[RuleRow], joined: str) -> list[RuleRow]:
    """Those of *rows* whose pattern has a "*" or a "$", in order (*joined*: the patterns of
    all, joined by newlines)."""
    stars = joined.count("*")
    anchors = "$" in joined
    if not stars and not anchors:
        return []
    if stars * _SPARSE >= len(rows):
        if not anchors:  # most groups: one test a rule
            return [rule for rule in rows if "*" in rule[1]]
        return [rule for rule in rows if "*" in rule[1] or "$" in rule[1]]
    # Few among many: a search from each to the next, counting the newlines between.
    found = []
    star, dollar = joined.find("*"), joined.find("$")
    row = at = 0
    while star >= 0 or dollar >= 0:
        mark = star if dollar < 0 or 0 <= star < dollar else dollar
        row += joined.count("\n", at, mark)
        found.append(rows[row])
        at = joined.find("\n", mark)
        if at < 0:  # the last rule
            break
        star = joined.find("*", at) if 0 <= star < at else star
        dollar = joined.find("$", at) if 0 <= dollar < at else dollar
    return found


def _adds_patterns(rows: list[RuleRow]) -> bool:
    """Whether an index page's allow among *rows* adds a pattern (see _entries)."""
    return any(allow and "/index.htm" in path for allow, path, _ in rows)


def _scan(scan: _Scan, path: str) -> RuleRow | None:
    """The row of *scan* that decides a canonical *path*, None if none matches, or _UNSURE.

    The longest match decides, allow winning a tie, then the rule written first (its line is
    the smaller): the compiled group's answer, where a pattern written again keeps only that
    rule. The compiled group answers UNDECIDED instead when its check would pass WORK_BOUND:
    this scan counts what a match of each rule with a tail that could still decide costs at
    most, which is more than the compiled check spends on the same rules, and answers _UNSURE
    past _SCAN_BOUND, having done no more work than that. Measured hot loops, written out.
    """
    patterns, rows, operators, _ = scan
    best = None
    rank = -1
    if path.startswith(patterns):
        for rule in rows:
            if path.startswith(rule[1]) and 2 * len(rule[1]) + rule[0] > rank:
                best, rank = rule, 2 * len(rule[1]) + rule[0]
    work = _SCAN_BOUND
    size = len(path)
    root = path[:1]  # "/": a prefix of "/" (most rules with a "*") needs no search
    for rule in operators:
        pattern = rule[1]
        precedence = 2 * len(pattern) + rule[0]
        if precedence < rank or (precedence == rank and best is not None and best[2] < rule[2]):
            continue
        prefix, star, rest = pattern.partition("*")
        start = len(prefix)
        if not star:  # "/a$": only the path "/a"
            start -= 1
            if not path.startswith(prefix[:-1]):
                continue
            pieces = 0
        elif prefix and prefix != root and not path.startswith(prefix):
            continue
        else:
            pieces = 1 if "*" not in rest else pattern.count("*")
        # What follows the prefix is at least as long as the longest piece: at least the
        # cost the compiled check counts for the rule.
        work -= (size - start) * (len(pattern) - start) + _RULE_COST + pieces * _PIECE_COST
        if work < 0:
            return _UNSURE
        if pieces != 1:
            tail = _split_pattern(pattern)[1]
            matched = tail is not None and _matches_after_prefix(path, start, *tail)
        elif "$" in rest:  # as _matches_after_prefix would, for one piece
            matched = path.endswith(rest[:-1]) and size - len(rest) + 1 >= start
        elif start > 1 or (start and rest[:1] == root):
            matched = path.find(rest, start) >= 0
        else:  # the prefix is "" or the path's first character, which rest does not start
            matched = rest in path  # with: a match anywhere is one after the prefix
        if matched:
            best, rank = rule, precedence
    return best


def _grams(pieces: tuple[str, ...]) -> set[str]:
    """What a path a rule matches must hold: every run of :data:`_GRAM` characters of its
    pieces (a shorter piece whole)."""
    grams: set[str] = set()
    for piece in pieces:
        if len(piece) <= _GRAM:
            grams.add(piece)
        else:
            grams.update([piece[at : at + _GRAM] for at in range(len(piece) - _GRAM + 1)])
    grams.discard("")
    return grams


def _path_grams(path: str, sizes: Iterable[int]) -> set[str]:
    held: set[str] = set()
    for size in sizes:
        if size == 1:
            held.update(path)
        else:
            held.update(path[start : start + size] for start in range(len(path) - size + 1))
    return held


def _looked_up(keys: dict[str, tuple[int, ...]], texts: Iterable[str]) -> list[tuple[int, ...]]:
    return [rules for rules in map(keys.get, texts) if rules is not None]


class _Index:
    """Which rules of a large group can match a path, found without looking at the others.

    Each rule is filed under one key that any path it matches holds, and looked up by the
    keys a path holds: its prefix (the text before its first ``*``), which such a path starts
    with; for a rule that ends with ``$``, its last piece, which such a path ends with; or
    one run of three characters of its pieces (a shorter piece whole), which such a path
    contains. Of the keys a rule has, it is filed under the one fewest rules of the group
    share, so that rules alike (``/*aaa…b``, ``/*aaa…c``…) are spread over the runs that tell
    them apart. Prefixes are looked up by their first characters, as most groups have few
    rules for each; those that many share are searched for whole, among them sorted, so that
    40,000 rules ``/aaaa1``, ``/aaaa2``… cost a check a few binary searches, not a scan.
    Positions are added in precedence order, so each key's list stays in it.
    """

    __slots__ = (
        "by_piece",
        "by_start",
        "by_suffix",
        "by_whole_prefix",
        "piece_sizes",
        "prefix_sizes",
        "start_sizes",
        "suffix_sizes",
    )

    def to_plain(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    @classmethod
    def from_plain(cls, plain: tuple[Any, ...]) -> _Index:
        index = cls.__new__(cls)
        for name, value in zip(cls.__slots__, plain, strict=True):
            setattr(index, name, value)
        return index

    def __init__(self, table: _Table) -> None:
        filed, by_suffix, by_piece = _keys(table)
        prefixes = table.prefixes
        # In one pass, positions in order: each key's list stays in precedence order.
        by_start: dict[str, list[int]] = {}
        for index in filed:
            by_start.setdefault(prefixes[index][:_START], []).append(index)
        crowded = [i for v in by_start.values() if len(v) > _CROWDED for i in v]
        self.by_start = {k: tuple(v) for k, v in by_start.items() if len(v) <= _CROWDED}
        # The crowded rules sorted by prefix (those of one prefix side by side, in precedence
        # order), rather than a dict of prefixes: a record of tens of thousands of them holds
        # one number for each, read back with no key to hash again.
        self.by_whole_prefix = tuple(sorted(crowded, key=lambda i: (prefixes[i], i)))
        self.by_suffix = {k: tuple(v) for k, v in by_suffix.items()}
        self.by_piece = {k: tuple(v) for k, v in by_piece.items()}
        # The lengths of each kind's keys: a check cuts only those from the path.
        self.start_sizes, self.suffix_sizes, self.piece_sizes = (
            tuple(sorted({len(key) for key in keys}))
            for keys in (self.by_start, self.by_suffix, self.by_piece)
        )
        self.prefix_sizes = tuple(sorted({len(prefixes[i]) for i in crowded}))

    def decide(self, table: _Table, path: str) -> int | None:
        """The position of the deciding rule, None, or UNDECIDED (see _Table.first_match)."""
        size = len(path)
        by_start = self.by_start
        found = [
            rules
            for n in self.start_sizes
            if n <= size and (rules := by_start.get(path[:n])) is not None
        ]
        if self.by_whole_prefix:
            found += self._by_whole_prefix(table.prefixes, path)
        if self.by_suffix:
            texts = [path[size - n :] for n in self.suffix_sizes if n <= size]
            found += _looked_up(self.by_suffix, texts)
        by_piece = self.by_piece
        if len(by_piece) > _FEW_PIECES:
            held = _path_grams(path, self.piece_sizes) & by_piece.keys()
            found += map(by_piece.__getitem__, held)
        elif by_piece:
            found += [rules for piece, rules in by_piece.items() if piece in path]
        if len(found) <= 1:
            return table.first_match(path, found[0]) if found else None
        # A key's rules are in precedence order: merged (sorted runs: few comparisons), the
        # first match is the best.
        candidates = sorted(chain.from_iterable(found))
        if len(candidates) <= _MAX_TRIED:
            return table.first_match(path, candidates)
        index = table.first_match(path, candidates[:_MAX_TRIED])
        return UNDECIDED if index is None else index

    def _by_whole_prefix(self, prefixes: tuple[str, ...], path: str) -> list[tuple[int, ...]]:
        """The crowded rules whose prefix *path* starts with, a tuple for each prefix.

        Of the prefixes in order, the greatest one not after the path's first *n* characters
        is the only one that may start them among those not longer. When it does not, no
        prefix lies between it and them, so one that starts the path is shorter than both:
        each search leaves fewer lengths to try, and most checks need one or two.
        """
        order, sizes = self.by_whole_prefix, self.prefix_sizes
        found: list[tuple[int, ...]] = []
        longest = len(path)
        while fits := bisect_right(sizes, longest):
            probe = path[: sizes[fits - 1]]
            at = bisect_right(order, probe, key=prefixes.__getitem__) - 1
            if at < 0:
                break
            prefix = prefixes[order[at]]
            if probe.startswith(prefix):
                first = at
                while first and prefixes[order[first - 1]] == prefix:
                    first -= 1
                found.append(order[first : at + 1])
                longest = len(prefix) - 1
            else:
                longest = min(len(probe), len(prefix)) - 1
        return found


def _keys(table: _Table) -> tuple[Sequence[int], dict[str, list[int]], dict[str, list[int]]]:
    """The positions of *table*'s rules filed under their prefix (in order), and those by
    last piece and by run of characters, each rule under the one of its keys fewest rules
    share (see _Index)."""
    prefixes, tails = table.prefixes, table.tails
    # Only a rule with a piece has other keys than its prefix: the prefix alone decides the
    # others (``/a*``, ``/a*$``).
    pieced = {i: tail[0] for i, tail in enumerate(tails) if tail is not None and any(tail[0])}
    if len(pieced) < _INDEX_FROM:
        # Most groups: every rule under its prefix, nothing to count. A check may then try
        # each of these few rules with pieces, as it would in a group too small to index.
        return range(len(prefixes)), {}, {}
    grams = {i: _grams(pieces) for i, pieces in pieced.items()}
    filed: list[int] = []
    keys: dict[int, dict[str, list[int]]] = {_BY_SUFFIX: {}, _BY_PIECE: {}}
    suffixes = {i: _suffix_of(tails[i]) for i in grams}
    counts = (
        Counter(prefixes),
        Counter(suffix for suffix in suffixes.values() if suffix),
        Counter(chain.from_iterable(grams.values())),
    )
    for index, prefix in enumerate(prefixes):
        kind, key = _BY_PREFIX, prefix
        held = grams.get(index)
        if held is not None:
            shared = counts[_BY_PREFIX][prefix]
            if held:
                gram = min(held, key=counts[_BY_PIECE].__getitem__)
                if counts[_BY_PIECE][gram] < shared:
                    kind, key, shared = _BY_PIECE, gram, counts[_BY_PIECE][gram]
            suffix = suffixes[index]
            if suffix and counts[_BY_SUFFIX][suffix] < shared:
                kind, key = _BY_SUFFIX, suffix
        if kind == _BY_PREFIX:
            filed.append(index)
        else:
            keys[kind].setdefault(key, []).append(index)
    return filed, keys[_BY_SUFFIX], keys[_BY_PIECE]


def _suffix_of(tail: _Tail) -> str:
    """The last piece of a rule that ends with ``$``, which a path it matches ends with; ""
    for other rules."""
    return tail[0][-1] if tail is not None and tail[1] and tail[0] else ""


def _entries(rules: list[RuleRow]) -> list[_Entry]:
    """The rows of *rules*, canonical, one for each pattern, in file order."""
    # Of rules with one pattern, only the first in precedence order can decide (an
    # allow, else the first written): the others would only cost checks a look each.
    # An allow that replaces a disallow moves to its own place in file order, which
    # the stable sort keeps among rules of equal precedence.
    unique: dict[str, _Entry] = {}
    for allow, path, line in rules:
        if match_plain_rule_paths(path):  # most rules even here: their own pattern
            pattern = path
            entry: _Entry = (path, None, 0, 2 * len(path) + allow, path, line)
        else:
            pattern = canonical_rule_path(path)
            entry = _entry(pattern, allow, path, line)
        # _keep_first, its common case written out: the first rule of its pattern.
        if unique.setdefault(pattern, entry)[3] < entry[3]:
            _keep_first(unique, pattern, entry)
        if allow:
            # Googlebot reads "Allow: /dir/index.html" (or index.htm…) as allowing "/dir/"
            # too, the URL that serves that page, and only it: it adds "Allow: /dir/$"
            # under the same line.
            slash = pattern.rfind("/")
            if slash >= 0 and pattern.startswith("/index.htm", slash):
                anchored = pattern[: slash + 1] + "$"
                _keep_first(unique, anchored, _entry(anchored, allow, path, line))
    return list(unique.values())


def _keep_first(unique: dict[str, _Entry], pattern: str, entry: _Entry) -> None:
    """Keep in *unique* the rule of *pattern* that decides: the first allow, else the first
    rule written (see Group.compile)."""
    kept = unique.setdefault(pattern, entry)
    if kept[3] < entry[3]:  # an allow after a disallow of the same pattern
        del unique[pattern]
        unique[pattern] = entry


class Group:
    """The rules that apply to one product token, its crawl delay and its usage lines."""

    __slots__ = (
        "_index",
        "_rules",
        "_scan",
        "_scans_left",
        "_table",
        "agents",
        "crawl_delay",
        "usage",
        "usage_scoped",
    )

    def __init__(
        self,
        agents: tuple[str, ...],
        rules: list[RuleRow],
        crawl_delay: float | None,
        usage: tuple[UsageLine, ...] = (),
    ):
        self.agents = agents
        self.crawl_delay = crawl_delay
        self.usage = usage
        #: Whether a Content-Usage rule has a path: only then do the lines that apply to a
        #: URL depend on it.
        self.usage_scoped = bool(usage) and any(line.path is not None for line in usage)
        #: The rules as parsed (or as plain tuples, read back from a pickle), until a check
        #: compiles them.
        self._rules: list[RuleRow] | None = rules
        self._table = _NO_RULES
        self._index: _Index | None = None
        #: How many more checks scan the rules as parsed; None until a check selects the group.
        self._scans_left: int | None = None
        self._scan: _Scan | None = None

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
        group.usage_scoped = bool(usage) and any(line.path is not None for line in group.usage)
        group._table = _NO_RULES if group._rules is not None else _Table._make(table)
        group._index = None if index is None else _Index.from_plain(index)
        group._scans_left = group._scan = None
        return group

    def __reduce__(self) -> tuple[Any, ...]:
        return _group_from_plain, (self.to_plain(),)

    def compile(self) -> None:
        """Build the tables checks read, once: the first check does if nothing else did."""
        rules = self._rules
        if rules is None:
            return
        paths = [rule[1] for rule in rules]
        joined = "\n".join(paths)
        if (
            match_plain_rule_paths(joined)
            and "/index.htm" not in joined
            and len(set(paths)) == len(paths)
        ):
            # Most groups: plain prefixes, canonical as written, each written once, none an
            # index page; one search over them all tells.
            entries: list[_Entry] = [
                (path, None, 0, 2 * len(path) + allow, path, line) for allow, path, line in rules
            ]
        else:
            entries = _entries(rules)
        # Stable: among equals, file order.
        entries.sort(key=_precedence, reverse=True)
        if entries:
            columns: list[tuple[Any, ...]] = list(zip(*entries, strict=True))
            if not any(columns[1]):  # no rule with a tail, whose weight a check would read
                columns[2] = ()
            if columns[4] == columns[0]:
                # Every rule canonical as written (most groups): one tuple for both, which a
                # record then pickles and reads back once.
                columns[4] = columns[0]
            # tuple.__new__: the named tuple's own __new__ is a Python function.
            self._table = tuple.__new__(_Table, columns)
        else:
            self._table = _NO_RULES
        if len(entries) >= _INDEX_FROM:
            self._index = _Index(self._table)
        self._rules = self._scan = None

    @property
    def compiled(self) -> bool:
        """Whether a check compiled the group's rules."""
        return self._rules is None

    @property
    def selected(self) -> bool:
        """Whether a check selected the group (compiled, or to be compiled by a later one)."""
        return self._scans_left is not None or self._rules is None

    def select(self) -> bool:
        """Ready the group for checks; whether no check had selected it before."""
        rules = self._rules
        if self._scans_left is not None or rules is None:  # selected (see above)
            return False
        scan = self._scan = _scan_of(rules)
        self._scans_left = 0 if scan is None else SCANS
        return True

    def _scanned(self, path: str) -> RuleRow | None:
        """The row that decides *path*, read from the rules as parsed (see _scan); _UNSURE
        when the group is to be compiled instead (the last scan done, or none allowed)."""
        scans, scan = self._scans_left, self._scan
        if not scans or scan is None:
            return _UNSURE
        self._scans_left = scans - 1
        return _scan(scan, path)

    def allows(self, path: str) -> bool:
        """Whether a canonical *path* is allowed: no rule matches, or the deciding one allows
        (a check that would take more than :data:`WORK_BOUND` is not)."""
        # _decide's work written out: a call less on every check of a crawl; _scanned's on
        # the first checks.
        if self._rules is not None:
            scans, scan = self._scans_left, self._scan
            if scans and scan is not None:
                self._scans_left = scans - 1
                rule = _scan(scan, path)
                if rule is not _UNSURE:
                    return rule is None or rule[0]
            self.compile()
        table = self._table
        if self._index is not None:
            index = self._index.decide(table, path)
        elif path.startswith(table.prefixes):
            index = table.first_in_order(path)
        else:
            return True
        return index is None or (index != UNDECIDED and bool(table.precedences[index] & 1))

    def deciding_rule(self, path: str) -> tuple[bool, Rule | None]:
        """Whether a canonical *path* is allowed, and the rule that decides: None when no rule
        matches (allowed), or when deciding would take more than :data:`WORK_BOUND`
        (disallowed)."""
        rules, scan = self._rules, self._scan
        if rules is not None and scan is not None:
            row = self._scanned(path)
            if row is None:
                return True, None
            if row is not _UNSURE:
                if not scan[3]:  # the rule as written: the one on the row's line
                    row = next(rule for rule in rules if rule[2] == row[2])
                return row[0], Rule._make(row)
        index = self._decide(path)
        if index is None or index == UNDECIDED:
            return index is None, None
        table = self._table
        allow = bool(table.precedences[index] & 1)
        return allow, Rule(allow, table.paths[index], table.lines[index])

    def _decide(self, path: str) -> int | None:
        """The position of the deciding rule in the group's table."""
        if self._rules is not None:
            self.compile()
        table = self._table
        if self._index is not None:
            return self._index.decide(table, path)
        if not path.startswith(table.prefixes):
            return None
        return table.first_in_order(path)


def is_compiled(group: PlainGroup) -> bool:
    """Whether a check compiled the group whose plain form is *group*."""
    # A plain group keeps no rules (its index 2) once they are compiled: see Group.to_plain.
    return group[2] is None


# A function, not the class method: Twisted registers a pickler of bound methods that cannot
# pickle one bound to a class.
def _group_from_plain(plain: PlainGroup) -> Group:
    return Group.from_plain(plain)
