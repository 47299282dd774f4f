"""The bytes of a robots.txt response that are read: at most the first 500 KiB of content.

RFC 9309 §2.5 asks crawlers to parse at least 500 KiB; this package parses exactly the first
:data:`MAX_BYTES` and stops the download soon after them. A compressed body is decoded here,
incrementally, up to that limit, so that neither a large file nor a decompression bomb costs
more than the limit in memory, and neither can turn into "no robots.txt".
"""

from __future__ import annotations

import zlib

from scrapy_robotsmeta.robotstxt._parser import MAX_BYTES

#: What robots.txt requests accept: what the standard library decodes.
ACCEPT_ENCODING = b"gzip, deflate"
#: Bytes downloaded past the limit before the download is stopped: a compressed stream needs
#: a little more than the content it decodes to, and the response's headers count too.
TRANSFER_MARGIN = 64 * 1024


class UndecodableBody(ValueError):
    """A Content-Encoding this package cannot read, or a stream that is not what it claims."""


def _inflate(data: bytes, wbits: int, limit: int) -> bytes:
    decompressor = zlib.decompressobj(wbits)
    # max_length: a bomb never expands past the limit; a stream cut short by a stopped
    # download decodes as far as it goes.
    return decompressor.decompress(data, limit)


def _unbrotli(data: bytes, limit: int) -> bytes:
    try:
        import brotli  # noqa: PLC0415 (optional, as in Scrapy)
    except ImportError as exc:
        raise UndecodableBody("br (brotli is not installed)") from exc
    decompressor = brotli.Decompressor()
    out = b""
    # Fed in small pieces, so that the output of one piece is bounded too.
    for start in range(0, len(data), 4096):
        out += decompressor.process(data[start : start + 4096])
        if len(out) >= limit:
            break
    return bytes(out[:limit])


def decode(body: bytes, content_encoding: bytes, limit: int = MAX_BYTES) -> bytes:
    """*body* decoded as *content_encoding* says (a comma-separated list, applied last
    first), keeping at most *limit* bytes of content."""
    encodings = [e.strip().lower() for e in content_encoding.split(b",") if e.strip()]
    for encoding in reversed(encodings):
        try:
            if encoding in (b"gzip", b"x-gzip"):
                body = _inflate(body, 16 + zlib.MAX_WBITS, limit)
            elif encoding == b"deflate":
                # RFC 9110 says zlib-wrapped; some servers send raw deflate.
                try:
                    body = _inflate(body, zlib.MAX_WBITS, limit)
                except zlib.error:
                    body = _inflate(body, -zlib.MAX_WBITS, limit)
            elif encoding == b"br":
                body = _unbrotli(body, limit)
            elif encoding != b"identity":
                raise UndecodableBody(encoding.decode("latin-1"))
        except zlib.error as exc:
            raise UndecodableBody(f"{encoding.decode('latin-1')}: {exc}") from exc
    return body[:limit] if len(body) > limit else body
