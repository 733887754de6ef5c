"""The filter of a sorted run (``ledger._runs``): which keys the run certainly does not hold.

A key is hashed to 16 bytes: an address entry's digest is its own hash (already uniform), an
index entry's prefix is hashed with BLAKE2b. Of those 16 bytes, the first 8 pick a word of the
filter and the next 8 give the six bits set in it (``_split``). One key at a time for lookups
and small commits; many at once (``Filter.add_rows``, with NumPy) where a commit or a merge
files tens of thousands: the bits set are the same either way, so a filter does not say how
it was made.
"""

from __future__ import annotations

import struct
import sys
from array import array
from hashlib import blake2b
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Bits = npt.NDArray[np.uint64]

_BITS_PER_KEY: Final = 10
# Below this many keys, adding or asking them one at a time costs less than setting NumPy up
# for them (and a small commit, such as a command's one event, never imports it).
BULK: Final = 512


class Filter:
    """A blocked Bloom filter over a run's keys: each key sets six bits of one 64-bit
    word (``digest_hash``, ``prefix_hash``), so asking costs one word read whatever the probes.

    Sized at ``_BITS_PER_KEY`` bits for each key of its run (a merged run's, at the words of
    the filters of the runs it merged, which may count a key twice): a key it does not hold
    passes about twice in a hundred. Stored as its words, little-endian, under ``FILTER_KEY``
    in the run's table.
    """

    __slots__ = ("blocks", "words")

    def __init__(self, words: array[int]) -> None:
        self.words = words
        self.blocks = len(words)

    @classmethod
    def sized(cls, keys: int) -> Filter:
        """An empty filter for ``keys`` keys."""
        return cls.of_words(max(1, (keys * _BITS_PER_KEY + 63) // 64))

    @classmethod
    def of_words(cls, words: int) -> Filter:
        """An empty filter of ``words`` words."""
        return cls(array("Q", bytes(8 * words)))

    @classmethod
    def from_bytes(cls, data: bytes | None) -> Filter | None:
        """The filter stored as ``data``; ``None`` for bytes that cannot be one (a run without
        a usable filter is asked as if it held every key)."""
        if not data or len(data) % 8:
            return None
        words = array("Q")
        words.frombytes(data)
        if sys.byteorder == "big":
            words.byteswap()
        return cls(words)

    def to_bytes(self) -> bytes:
        if sys.byteorder == "big":
            words = array("Q", self.words)
            words.byteswap()
            return words.tobytes()
        return self.words.tobytes()

    def add(self, hashed: tuple[int, int]) -> None:
        block, mask = hashed
        self.words[block % self.blocks] |= mask

    def holds(self, hashed: tuple[int, int]) -> bool:
        block, mask = hashed
        return self.words[block % self.blocks] & mask == mask

    def add_rows(self, rows: bytes, width: int, at: int = 0) -> None:
        """Add the keys whose 16-byte hashes (``_split``) start at byte ``at`` of each
        ``width``-byte row of ``rows``: a commit's sorted digests, a merge's address keys, the
        BLAKE2b digests of index prefixes."""
        count = len(rows) // width
        if len(rows) % width or at + 16 > width:
            raise ValueError(f"{len(rows)} bytes are not rows of {width} with a hash at {at}")
        if count < BULK:
            kept, blocks = self.words, self.blocks
            for start in range(at, len(rows), width):
                block, mask = _split(rows[start : start + 16])
                kept[block % blocks] |= mask
            return
        import numpy as np

        hashes, masks = row_hashes(rows, width, at)
        words: npt.NDArray[np.uint64] = np.frombuffer(self.words, dtype=np.uint64)
        np.bitwise_or.at(words, hashes % np.uint64(self.blocks), masks)

    def holding(self, hashes: Bits, masks: Bits) -> npt.NDArray[np.bool_]:
        """Of the keys ``row_hashes`` gave as ``hashes`` and ``masks``, which the filter lets
        through."""
        import numpy as np

        words: npt.NDArray[np.uint64] = np.frombuffer(self.words, dtype=np.uint64)
        found: npt.NDArray[np.bool_] = words[hashes % np.uint64(self.blocks)] & masks == masks
        return found


def row_hashes(rows: bytes, width: int, at: int = 0) -> tuple[Bits, Bits]:
    """``(block hashes, bit masks)`` (``_split``) of the 16-byte hashes that start at byte
    ``at`` of each ``width``-byte row of ``rows``, with NumPy."""
    import numpy as np

    table = np.frombuffer(rows, dtype=np.uint8).reshape(len(rows) // width, width)
    halves = np.ascontiguousarray(table[:, at : at + 16]).view("<u8").astype(np.uint64)
    bits = halves[:, 1]
    pairs = _pairs_array()
    return halves[:, 0], pairs[bits & 4095] | pairs[bits >> 12 & 4095] | pairs[bits >> 24 & 4095]


class FilterCell:
    """A run's filter: made by the commit that wrote the run, or read from its table the
    first time a lookup needs it, so that runs only scanned cost no memory for one. A listed
    run never changes, so what is read once serves every later transaction."""

    __slots__ = ("_db", "filter", "read")

    def __init__(self, db: Any, made: Filter | None = None) -> None:
        self._db = db
        self.filter = made
        self.read = made is not None

    def of(self, txn: Any) -> Filter | None:
        """The filter (``None``: its bytes cannot be one, so every key is looked for)."""
        if not self.read:
            self.filter = Filter.from_bytes(txn.get(FILTER_KEY, db=self._db))
            self.read = True
        return self.filter


FILTER_KEY: Final = b"\xff"  # a run table's filter, its last key


def digest_hash(digest: bytes) -> tuple[int, int]:
    """``(block hash, bit mask)`` of an address entry's digest in a filter: a digest is
    already uniform, so its first 16 bytes are the hash (``_split``)."""
    return _split(digest)


def prefix_hash(prefix: bytes) -> tuple[int, int]:
    """``(block hash, bit mask)`` of an index entry's prefix in a filter: the 16-byte BLAKE2b
    digest of the prefix (``_split``). Remembered for the last few thousand prefixes: a key
    looked up is often filed soon after (a cache miss), or looked up again (one execution's
    judgments), and a type or a run is filed by every commit."""
    found = _recent.get(prefix)
    if found is None:
        found = _split(prefix_digest(prefix))
        if len(_recent) >= _RECENT:
            _recent.clear()
        _recent[prefix] = found
    return found


def prefix_digest(prefix: bytes) -> bytes:
    """The 16 bytes an index prefix is filed in a filter by (``_split``)."""
    return blake2b(prefix, digest_size=16).digest()


_RECENT: Final = 4096
_recent: dict[bytes, tuple[int, int]] = {}


_HALVES: Final = struct.Struct("<QQ")
# The bits of two 6-bit fields (12 bits), looked up rather than shifted: a third of the time.
_PAIRS: Final = tuple(1 << (x & 63) | 1 << (x >> 6) for x in range(4096))


def _split(hashed: bytes) -> tuple[int, int]:
    """Of the first 16 bytes of a hash, the first 8, little-endian, pick a filter's word
    (modulo their number); the six 6-bit fields of the next 8, from the lowest, the bits."""
    block, b = _HALVES.unpack_from(hashed)
    masks = _PAIRS
    return block, masks[b & 4095] | masks[b >> 12 & 4095] | masks[b >> 24 & 4095]


_pairs: list[Bits] = []


def _pairs_array() -> Bits:
    """``_PAIRS`` as a NumPy array, made the first time a filter is filled in bulk."""
    if not _pairs:
        import numpy as np

        _pairs.append(np.array(_PAIRS, dtype=np.uint64))
    return _pairs[0]
