"""The bytes of a robots.txt response that are read: at most the first 500 KiB of content.

RFC 9309 §2.5 asks crawlers to parse at least 500 KiB; this package parses exactly the first
:data:`MAX_BYTES` and stops the download soon after them. A compressed body is decoded here,
as a stream of bounded pieces pulled only until the limit is reached, so that neither a large
file nor a decompression bomb (however small, whatever its encoding) costs more than the limit
and a few pieces in memory, and neither can turn into "no robots.txt".
"""

from __future__ import annotations

import importlib
import io
import itertools
import zlib
from functools import partial
from typing import TYPE_CHECKING, Any

from scrapy_robotsmeta.robotstxt._parser import MAX_BYTES

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    Decoder = Callable[[Iterator[bytes]], Iterator[bytes]]

#: What robots.txt requests accept: what the standard library decodes.
ACCEPT_ENCODING = b"gzip, deflate"
#: Bytes downloaded past the limit before the download is stopped: a compressed stream needs
#: a little more than the content it decodes to, and the response's headers count too.
TRANSFER_MARGIN = 64 * 1024
#: The most bytes one decoding step takes, and asks to give (brotli rounds its output up to
#: 32 KiB): what decoding holds besides the content kept, per encoding, whatever the input
#: expands to.
_PIECE = 16 * 1024
#: RFC 9659 §3: encoders of the zstd content coding must not need a window over 8 MB, so a
#: larger one is refused rather than allocated.
_ZSTD_WINDOW_LOG_MAX = 23


class UndecodableBody(ValueError):
    """A Content-Encoding this package cannot read, or a stream that is not what it claims."""


def decode(body: bytes, content_encoding: bytes, limit: int = MAX_BYTES) -> bytes:
    """*body* decoded as *content_encoding* says (a comma-separated list, applied last
    first), keeping at most *limit* bytes of content."""
    encodings = [e.strip().lower() for e in content_encoding.split(b",") if e.strip()]
    pieces = _pieces(body)
    for encoding in reversed(encodings):
        pieces = _decoded(encoding, pieces)
    return _first(pieces, limit)


def _pieces(data: bytes) -> Iterator[bytes]:
    for start in range(0, len(data), _PIECE):
        yield data[start : start + _PIECE]


def _first(pieces: Iterator[bytes], limit: int) -> bytes:
    """The first *limit* bytes of *pieces*: nothing is decoded past them."""
    out = io.BytesIO()
    for piece in pieces:
        out.write(piece[: limit - out.tell()])
        if out.tell() >= limit:
            break
    return out.getvalue()


def _decoded(encoding: bytes, pieces: Iterator[bytes]) -> Iterator[bytes]:
    name = encoding.decode("latin-1")
    decoder, errors = _decoder(encoding)
    try:
        yield from decoder(pieces)
    except errors as exc:
        # An inner layer's error was already named by its own _decoded.
        raise UndecodableBody(f"{name}: {exc}") from exc


def _decoder(encoding: bytes) -> tuple[Decoder, tuple[type[Exception], ...]]:
    """How to decode *encoding*, and the errors that mean a damaged stream."""
    if encoding in (b"gzip", b"x-gzip"):
        return partial(_inflate, wbits=16 + zlib.MAX_WBITS), (zlib.error,)
    if encoding == b"deflate":
        return _inflate_either, (zlib.error,)
    if encoding == b"br":
        brotli = _brotli()
        return partial(_unbrotli, brotli), (brotli.error,)
    if encoding == b"zstd":
        zstd = _module("compression.zstd", "backports.zstd")
        if zstd is None:
            raise UndecodableBody("zstd (no zstd module: Python 3.14 or backports.zstd)")
        return partial(_unzstd, zstd), (zstd.ZstdError,)
    if encoding == b"identity":
        return iter, ()
    raise UndecodableBody(encoding.decode("latin-1"))


def _module(*names: str) -> Any:
    """The first of the modules *names* that is installed (each is optional), or None."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def _inflate(pieces: Iterator[bytes], wbits: int) -> Iterator[bytes]:
    decompressor = zlib.decompressobj(wbits)
    for piece in pieces:
        data = piece
        while True:
            out = decompressor.decompress(data, _PIECE)
            if out:
                yield out
            if decompressor.eof:
                return
            data = decompressor.unconsumed_tail
            # A full piece may leave output pending inside zlib even with no input left.
            if not data and len(out) < _PIECE:
                break


def _inflate_either(pieces: Iterator[bytes]) -> Iterator[bytes]:
    """RFC 9110 §8.4.1.2 says zlib-wrapped; some servers send raw deflate."""
    head = b""
    for piece in pieces:
        head += piece
        if len(head) >= 2:
            break
    wbits = zlib.MAX_WBITS if _zlib_header(head) else -zlib.MAX_WBITS
    return _inflate(itertools.chain([head], pieces), wbits)


def _zlib_header(head: bytes) -> bool:
    """RFC 1950 §2.2: method 8 with a window of at most 32 KiB, and a header check of 31."""
    return (
        len(head) >= 2
        and head[0] & 0x0F == 8
        and head[0] >> 4 <= 7
        and (int.from_bytes(head[:2], "big") % 31 == 0)
    )


def _brotli() -> Any:
    brotli = _module("brotli", "brotlicffi")
    if brotli is None:
        raise UndecodableBody("br (brotli is not installed)")
    if not hasattr(brotli.Decompressor, "can_accept_more_data"):
        # Before 1.2, one call decodes all its input, and a few hundred bytes of brotli can
        # expand to gigabytes: no piece size bounds that.
        raise UndecodableBody(
            "br (the installed brotli module cannot limit its output: brotli>=1.2 or "
            "brotlicffi>=1.2 is needed)"
        )
    return brotli


def _unbrotli(brotli: Any, pieces: Iterator[bytes]) -> Iterator[bytes]:
    decompressor = brotli.Decompressor()
    for piece in pieces:
        data = piece
        while True:
            out: bytes = decompressor.process(data, output_buffer_limit=_PIECE)
            if out:
                yield out
            if decompressor.is_finished():
                return
            # Input taken is not output given: it may still hold output after taking all.
            if not out and decompressor.can_accept_more_data():
                break
            data = b""


def _unzstd(zstd: Any, pieces: Iterator[bytes]) -> Iterator[bytes]:
    window = {zstd.DecompressionParameter.window_log_max: _ZSTD_WINDOW_LOG_MAX}
    decompressor = zstd.ZstdDecompressor(options=window)
    for piece in pieces:
        data = piece
        while True:
            out: bytes = decompressor.decompress(data, _PIECE)
            if out:
                yield out
            if decompressor.eof:
                return
            if decompressor.needs_input:
                break
            data = b""
