"""One origin's state as bytes: how the cache keeps an origin it is not using.

A live :class:`OriginState` holds its parsed rules with the crawler's group selected (and
compiled once checked a few times): kilobytes for most files. Its record holds the same (the
values of the state's snapshot, the rules as plain tuples with the selected groups' compiled
tables, so that reading it back costs no parse and no compile), pickled and compressed: a few
hundred bytes for most files. The groups no check selected and the sitemaps are pickled apart
inside it (``RobotsTxt.to_plain``), and unpickled only when something asks for them: most
origins of a broad crawl are read back for one check of one group. The cache keeps records in
memory for the origins it is not using, and writes the same records to its second tier on disk.

A record starts with the version of its shape, then a CRC-32 of every byte after it. One of
another version (an older JOBDIR) is not read, and its origin is fetched again. One whose bytes
fail their checksum, or that cannot be read back in any other way, is damaged
(:class:`DamagedRecord`): none of it is used, and its origin is fetched again too. The checksum
covers the part pickled apart as well, so what a later check unpickles on demand was checked
with the rest before any of it was used. Pickle is only ever read from records this package
wrote (in this process's memory, or in a file of the crawl's own), as Scrapy's ``JOBDIR``
request queues are, and only once their checksum holds.
"""

from __future__ import annotations

import pickle
import struct
import zlib

from scrapy_robotsmeta.robotstxt import RobotsTxt
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.state import (
    SNAPSHOT_VERSION,
    OriginState,
    has_own_rules,
)

# The shape of a record's bytes, the snapshot's aside: raised with any change of what a record
# holds or how (the compiled tables' layout included). A record starts with both versions: a
# change of either leaves older records unread, and a change of this one alone leaves a fleet's
# states in Redis as they are.
_SHAPE = 7
_VERSION = bytes([SNAPSHOT_VERSION << 4 | _SHAPE])
# A CRC-32 of the compressed bytes, checked before they are decompressed: it catches any damage
# of up to 32 bits in a row, where the version byte and pickle's structure alone let some
# damaged records read back as other rules; it costs a fraction of the decompression.
_CHECKSUM = struct.Struct(">I")
_PAYLOAD = 1 + _CHECKSUM.size
# Raw deflate (the checksum above is the record's own) with fixed Huffman codes at level 1:
# reading a record back builds no code tables, which is most of its cost, for records a little
# larger (benchmarks/README.md, the tiers).
_WBITS = -15


class DamagedRecord(ValueError):
    """A record that fails its checksum or cannot be read back: none of it can be used."""


def _compress(data: bytes) -> bytes:
    # zlib.compress() takes no strategy, nor wbits before Python 3.11.
    compressor = zlib.compressobj(1, zlib.DEFLATED, _WBITS, 8, zlib.Z_FIXED)
    return compressor.compress(data) + compressor.flush()


def pack(state: OriginState) -> bytes:
    """The record of *state*."""
    rules = state.rules.to_plain() if state.rules and has_own_rules(state.kind) else None
    # Plain values only, no key and no class: half the bytes, and faster to read back.
    plain = (tuple(state.values()), rules)
    payload = _compress(pickle.dumps(plain, protocol=pickle.HIGHEST_PROTOCOL))
    return _VERSION + _CHECKSUM.pack(zlib.crc32(payload)) + payload


def unpack(origin: Origin, record: bytes) -> OriginState | None:
    """The state *record* holds for *origin*; None for a record of another version.

    Raises :class:`DamagedRecord` for one that fails its checksum or cannot be read back.
    """
    if record[:1] != _VERSION:
        return None
    payload = memoryview(record)[_PAYLOAD:]
    if len(record) < _PAYLOAD or _CHECKSUM.unpack_from(record, 1)[0] != zlib.crc32(payload):
        raise DamagedRecord(f"the record of {origin} fails its checksum")
    try:
        values, plain = pickle.loads(zlib.decompress(payload, _WBITS))
        rules = None if plain is None else RobotsTxt.from_plain(plain)
        state = OriginState(origin)
        state.restore(values, rules)
    except Exception as exc:  # any exception an unpickling or a malformed value can raise
        raise DamagedRecord(f"the record of {origin} cannot be read back ({exc!r})") from exc
    return state
