"""What robots.txt is for an origin: one type, whose values are the words users read."""

from __future__ import annotations

import pytest

from scrapy_robotsmeta.robotstxt.status import Status


@pytest.mark.parametrize(
    ("status", "value"),
    [
        (Status.RULES, "rules"),
        (Status.ALLOW_ALL, "allow_all"),
        (Status.UNAVAILABLE, "unavailable"),
        (Status.UNKNOWN, "unknown"),
        (Status.NOT_CHECKED, "not_checked"),
    ],
)
def test_each_status_keeps_the_value_users_read(status: Status, value: str) -> None:
    """The values name stats (``robotstxt/outcome/<value>``), the ``policy`` of ``scrapy
    robots --json`` and of the evidence file, and the ``kind`` of stored states: changing one
    would rename a stat and leave stored states unread."""
    assert status.value == value


def test_a_redirect_is_no_status() -> None:
    """RFC 9309 §2.3.1.2: a redirect is one hop of a fetch, which goes on to its target; only
    the answer the fetch ends on says what robots.txt is."""
    assert "redirect" not in {status.value for status in Status}
    assert not hasattr(Status, "REDIRECT")
