"""Decoding a robots.txt body (``robotstxt/body.py``): RFC 9309 §2.5's limit on what is read."""

from __future__ import annotations

import gzip

from scrapy_robotsmeta.robotstxt import MAX_BYTES
from scrapy_robotsmeta.robotstxt.body import TRANSFER_MARGIN, decode
from tests.rules import padded


def test_decoding_keeps_the_first_500_kib_of_content() -> None:
    """RFC 9309 §2.5's limit applies to the content, after Content-Encoding."""
    body = padded("User-agent: *\nDisallow: /private\n", 2_000_000)
    assert decode(gzip.compress(body), b"gzip") == body[:MAX_BYTES]
    assert decode(body, b"identity") == body[:MAX_BYTES]
    assert MAX_BYTES + TRANSFER_MARGIN < 600 * 1024
