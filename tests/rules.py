"""Short ways to parse a robots.txt body and ask it about a path, for the robots.txt unit tests.

Not a test module: the unit-test modules of ``scrapy_robotsmeta.robotstxt`` import it.
"""

from __future__ import annotations

from scrapy_robotsmeta import RobotsTxt, Rule

BASE = "https://example.com"
UA = "mybot"

# Rules alike (one long run of "a" and a mark): every run of three characters they hold is
# in the URL below, no rule is, and CPython's search compares the run at each position.
NEAR_MISSES = "User-agent: *\n" + "".join(
    f"Disallow: /*{'a' * (41 + i // 20)}{'bcdefghijklmnopqrstu'[i % 20]}aa\n" for i in range(1000)
)
NEAR_MISS_PATH = "/" + "".join(f"aa{mark}aa" for mark in "bcdefghijklmnopqrstu") + "a" * 8000


def parse(text: str) -> RobotsTxt:
    return RobotsTxt.parse(text.encode("utf-8"))


def allows(rules: RobotsTxt, path: str, agent: str = UA) -> bool:
    return rules.allowed(BASE + path, agent)


def deciding(rules: RobotsTxt, path: str, agent: str = UA) -> Rule:
    """The rule that decided ``path``; fails the test when no rule decided."""
    verdict = rules.explain(BASE + path, agent)
    assert verdict.rule is not None, f"no rule decided {path!r}"
    return verdict.rule


def disallowing(pattern: str) -> RobotsTxt:
    return parse(f"User-agent: *\nDisallow: {pattern}\n")


def padded(head: str, size: int) -> bytes:
    """A robots.txt of about *size* bytes: *head*, then comment lines."""
    data = head.encode()
    return data + b"# padding\n" * ((size - len(data)) // 10)
