"""Compressed robots.txt bodies and decompression bombs, in each Content-Encoding the package
decodes, for the size-limit tests (RFC 9309 §2.5).

Not a test module: the body unit tests and the fetcher's crawl tests import it. A test that
needs an encoding whose module is not installed is skipped.
"""

from __future__ import annotations

import functools
import sys
import zlib
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

#: Every Content-Encoding that robots.txt bodies are decoded from.
ENCODINGS = ("gzip", "deflate", "br", "zstd")
#: What a bomb expands to: far more than any bound the tests check, built in well under a
#: second (the compressors see 16 MiB blocks of one byte).
BOMB_SIZE = 128 * 1024 * 1024
_BLOCK = 16 * 1024 * 1024


def module(encoding: str) -> Any:
    """The module that writes *encoding*; the test is skipped when it is not installed."""
    if encoding == "br":
        # The package decodes brotli only where its output can be limited (1.2 and later).
        return pytest.importorskip("brotli", minversion="1.2")
    if encoding == "zstd":
        return pytest.importorskip(
            "compression.zstd" if sys.version_info >= (3, 14) else "backports.zstd"
        )
    assert encoding in ("gzip", "deflate"), encoding
    return zlib


def _compressor(encoding: str) -> tuple[Callable[[bytes], bytes], Callable[[], bytes]]:
    """The step and end of a streaming compressor for *encoding*."""
    writer = module(encoding)
    if encoding == "br":
        brotli = writer.Compressor(quality=5)
        return brotli.process, brotli.finish
    if encoding == "zstd":
        zstd = writer.ZstdCompressor()
        return zstd.compress, zstd.flush
    wbits = 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
    deflater = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return deflater.compress, deflater.flush


def compress(encoding: str, blocks: Iterable[bytes]) -> bytes:
    """*blocks*, one after the other, compressed as one stream in *encoding*."""
    step, end = _compressor(encoding)
    return b"".join(map(step, blocks)) + end()


def encode(content_encoding: str, data: bytes) -> bytes:
    """*data* with each encoding of the header value *content_encoding* applied in order."""
    for encoding in content_encoding.split(","):
        data = compress(encoding.strip(), [data])
    return data


@functools.cache
def bomb(content_encoding: str, head: bytes, size: int = BOMB_SIZE) -> bytes:
    """*head*, then *size* newlines, compressed: a few hundred bytes for brotli, a hundred KB
    or so for gzip. With several encodings, the first is the bomb and the others wrap it."""
    first, *others = (encoding.strip() for encoding in content_encoding.split(","))
    data = compress(first, [head, *[b"\n" * _BLOCK] * (size // _BLOCK)])
    return encode(",".join(others), data) if others else data
