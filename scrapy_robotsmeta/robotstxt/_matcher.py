"""The rules of one group, arranged so that finding the deciding rule touches few of them.

RFC 9309 §2.2.2: the most specific (longest) matching rule decides, and ``allow`` wins a tie.
Rules are sorted by that precedence, so within a list the first match is the best one. Large
groups are also split into buckets by the first characters of their literal prefix: a rule can
only match a path that starts with its prefix, so a check looks at a handful of buckets instead
of every rule. Everything is built on first use: most groups of a file are never selected.
"""

from __future__ import annotations

from scrapy_robotsmeta.robotstxt._encoding import canonical_rule_path
from scrapy_robotsmeta.robotstxt._parser import Rule

# Bucket key length, and the group size from which bucketing beats a plain scan.
_KEY = 4
_BUCKET_FROM = 12

# One compiled rule: precedence (pattern length, allow), the literal text before its first "*",
# the literal pieces after each "*", whether it ends with "$", and the rule itself.
_Compiled = tuple[tuple[int, bool], str, tuple[str, ...], bool, Rule]


def _compile(rule: Rule) -> _Compiled:
    pattern = canonical_rule_path(rule.path)
    anchored = pattern.endswith("$")
    first, *rest = (pattern[:-1] if anchored else pattern).split("*")
    return (len(pattern), rule.allow), first, tuple(rest), anchored, rule


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


def _first_match(path: str, ordered: list[_Compiled]) -> _Compiled | None:
    for compiled in ordered:
        _, first, pieces, anchored, _ = compiled
        if path.startswith(first) and (
            (not pieces and not anchored)
            or _matches_after_prefix(path, len(first), pieces, anchored)
        ):
            return compiled
    return None


class Group:
    """The rules that apply to one product token, and its crawl delay."""

    __slots__ = ("_buckets", "_ordered", "agents", "crawl_delay", "rules")

    def __init__(self, agents: tuple[str, ...], rules: list[Rule], crawl_delay: float | None):
        self.agents = agents
        self.rules = rules
        self.crawl_delay = crawl_delay
        self._ordered: list[_Compiled] | None = None
        self._buckets: dict[str, list[_Compiled]] | None = None

    def _build(self) -> list[_Compiled]:
        ordered = sorted(map(_compile, self.rules), key=lambda c: c[0], reverse=True)
        if len(ordered) >= _BUCKET_FROM:
            # Keyed by the first _KEY characters of the prefix, or by the whole prefix when it
            # is shorter; sorting first keeps every bucket in precedence order.
            buckets: dict[str, list[_Compiled]] = {}
            for compiled in ordered:
                buckets.setdefault(compiled[1][:_KEY], []).append(compiled)
            self._buckets = buckets
        self._ordered = ordered
        return ordered

    def deciding_rule(self, path: str) -> Rule | None:
        """The rule that decides for a canonical *path*, or None when no rule matches."""
        ordered = self._ordered if self._ordered is not None else self._build()
        buckets = self._buckets
        if buckets is None:
            found = _first_match(path, ordered)
            return found[4] if found is not None else None
        best: _Compiled | None = None
        for length in range(min(len(path), _KEY) + 1):
            bucket = buckets.get(path[:length])
            if bucket is not None:
                found = _first_match(path, bucket)
                if found is not None and (best is None or found[0] > best[0]):
                    best = found
        return best[4] if best is not None else None
