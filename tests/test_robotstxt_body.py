"""Decoding a robots.txt body (``robotstxt/body.py``): RFC 9309 §2.5's limit on what is read,
whatever the Content-Encoding, in content and in memory."""

from __future__ import annotations

import sys
import tracemalloc
import types
import zlib

import pytest

from scrapy_robotsmeta.robotstxt import MAX_BYTES
from scrapy_robotsmeta.robotstxt.body import TRANSFER_MARGIN, UndecodableBody, decode
from tests.compression import ENCODINGS, bomb, compress, encode, module
from tests.rules import padded

HEAD = b"User-agent: *\nDisallow: /private\n"
CONTENT = padded(HEAD.decode(), 2_000_000)
#: What decoding may hold besides the content it keeps: a few pieces per encoding.
BUFFER = 256 * 1024
CHAINS = ("gzip, br", "deflate, zstd", "br, gzip")


def peak_while(content_encoding: str, body: bytes) -> tuple[bytes, int]:
    """The decoded body and the most memory that Python allocations held while decoding."""
    tracemalloc.start()
    try:
        decoded = decode(body, content_encoding.encode())
        return decoded, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("content_encoding", [*ENCODINGS, *CHAINS, "identity"])
def test_decoding_keeps_the_first_500_kib_of_content(content_encoding: str) -> None:
    """RFC 9309 §2.5's limit applies to the content, after Content-Encoding (the list applied
    in order, and so decoded last first)."""
    body = CONTENT if content_encoding == "identity" else encode(content_encoding, CONTENT)
    assert decode(body, content_encoding.encode()) == CONTENT[:MAX_BYTES]
    assert MAX_BYTES + TRANSFER_MARGIN < 600 * 1024


@pytest.mark.parametrize("content_encoding", [*ENCODINGS, *CHAINS])
def test_a_decompression_bomb_costs_500_kib_plus_a_buffer(content_encoding: str) -> None:
    """RFC 9309 §2.5: the limit bounds memory too. A body of a few hundred bytes expanding to
    128 MiB is decoded to the limit, holding no more than the limit and a few pieces."""
    body = bomb(content_encoding, HEAD)
    decoded, peak = peak_while(content_encoding, body)
    assert decoded == (HEAD + b"\n" * MAX_BYTES)[:MAX_BYTES]
    assert peak < MAX_BYTES + BUFFER


def test_raw_deflate_is_read_as_deflate() -> None:
    """RFC 9110 §8.4.1.2 says deflate is zlib-wrapped; some servers send it raw."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    raw = deflater.compress(CONTENT) + deflater.flush()
    assert decode(raw, b"deflate") == CONTENT[:MAX_BYTES]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_stream_cut_short_decodes_as_far_as_it_goes(encoding: str) -> None:
    """A download stopped at the limit leaves the compressed stream unfinished: its content
    so far is read, not refused."""
    # Rules that differ, so that half of the compressed stream holds some of them.
    content = HEAD + b"".join(b"Disallow: /%d\n" % i for i in range(100_000))
    body = compress(encoding, [content])
    decoded = decode(body[: len(body) // 2], encoding.encode())
    assert decoded.startswith(HEAD)
    assert content.startswith(decoded)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_damaged_stream_is_undecodable(encoding: str) -> None:
    module(encoding)
    with pytest.raises(UndecodableBody, match=rf"^{encoding}: "):
        decode(b"\xff" * 64, encoding.encode())


def test_an_unknown_encoding_is_undecodable() -> None:
    with pytest.raises(UndecodableBody, match=r"^compress$"):
        decode(b"\x1f\x9d", b"compress")


def test_br_without_a_brotli_module_is_undecodable(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("brotli", "brotlicffi"):
        monkeypatch.setitem(sys.modules, name, None)  # what an absent module imports as
    with pytest.raises(UndecodableBody, match="brotli is not installed"):
        decode(b"\x0b", b"br")


class DecompressorBefore12:
    """The part of brotli's Decompressor that a module before 1.2 has: no output limit."""

    def process(self, data: bytes) -> bytes:
        raise AssertionError("never called: the module is refused first")


def test_brotli_that_cannot_limit_its_output_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Brotli modules before 1.2 decode all their input in one call, to gigabytes for a few
    hundred bytes: such a module (stood in for: the venvs have 1.2 or none) is not used."""
    old = types.ModuleType("brotli")
    old.Decompressor = DecompressorBefore12  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "brotli", old)
    with pytest.raises(UndecodableBody, match="cannot limit its output"):
        decode(b"\x0b", b"br")


def test_a_zstd_window_over_8_mb_is_refused() -> None:
    """RFC 9659 §3: zstd content coding needs no window over 8 MB; a larger one would cost
    its size in memory whatever the content kept."""
    zstd = module("zstd")
    wide = zstd.ZstdCompressor(options={zstd.CompressionParameter.window_log: 24})
    body = wide.compress(CONTENT * 8) + wide.flush()
    with pytest.raises(UndecodableBody, match=r"^zstd: "):
        decode(body, b"zstd")
