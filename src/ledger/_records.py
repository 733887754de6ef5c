"""How an event's bytes are kept in its ``events`` record: as they are, or compressed.

A record is the event's 32-byte digest followed by its canonical bytes, or by a zstd frame of
them made with the ledger's dictionary (``ZSTD_RECORDS``). Events are small (a few hundred
bytes to a few KB) and say the same keys and values again and again, which a general
compressor cannot learn from one event; a dictionary trained on the ledger's own events can,
and takes a staged RAG case's events to about 40% of their bytes.

The dictionary is trained once, from the first commit that brings enough events
(``_TRAIN_EVENTS`` and ``_TRAIN_BYTES``), and stored in the ``meta`` table with the records it
serves, so that the ledger needs nothing outside itself to be read. Records written before it
stay as they are: both kinds are told apart by their first bytes (canonical bytes are a CBOR
map, 0xa0 to 0xbf; a frame starts with the zstd magic). Each frame names the dictionary it was
made with (its id), so a ledger could later hold more than one.

Everything above the record reads the canonical bytes: addresses, ``verify``, archives and
every checked read hash what comes out of ``unpack``. A frame that does not decompress comes
out as the stored frame itself, which hashes to nothing it could be the address of, so it is
reported exactly as any damaged record is (``verify`` says why: ``undecodable``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any, Final

ZSTD_MAGIC: Final = b"\x28\xb5\x2f\xfd"
DICTIONARY_KEY: Final = b"dictionary"
_TRAIN_EVENTS: Final = 256
_TRAIN_BYTES: Final = 128 << 10
_TRAIN_SAMPLES: Final = 4096  # a commit has up to CHUNK_EVENTS; more samples add little
_DICTIONARY_SIZE: Final = 256 << 10
_LEVEL: Final = 3
# Fixed cover parameters: left at 0, zstd searches them, which took 110-140 ms a dictionary on
# staged and trivial runs' events, against 30-36 ms for these, for frames within 0.3% as small.
_COVER_K: Final = 1024
_COVER_D: Final = 8


def undecodable(data: bytes) -> bool:
    """Whether bytes ``unpack`` gave back are a frame it could not decompress."""
    return data[:4] == ZSTD_MAGIC


def train(samples: Iterable[bytes]) -> bytes | None:
    """A dictionary trained on ``samples`` (one commit's events), or ``None`` when there are
    too few of them or zstd cannot make one from them."""
    chosen: list[bytes | bytearray | memoryview[int]] = []
    size = 0
    for data in samples:
        chosen.append(data)
        size += len(data)
        if len(chosen) >= _TRAIN_SAMPLES:
            break
    if len(chosen) < _TRAIN_EVENTS or size < _TRAIN_BYTES:
        return None
    import zstandard

    try:
        made = zstandard.train_dictionary(
            _DICTIONARY_SIZE, chosen, k=_COVER_K, d=_COVER_D, level=_LEVEL
        )
    except zstandard.ZstdError:
        return None  # samples too alike or too few to learn from: the next commit tries again
    dictionary: bytes = made.as_bytes()
    return dictionary


class Records:
    """Packs event bytes into records and unpacks them, with the ledger's dictionary once it
    has one. ``pack`` is called under the ledger's write lock; ``unpack`` from any thread (each
    thread gets its own decompressor: zstd's are not safe to share)."""

    def __init__(self, dictionary: bytes | None) -> None:
        self._dictionary = dictionary
        self._compressor: tuple[bytes, Any] | None = None
        self._local = threading.local()

    @property
    def dictionary(self) -> bytes | None:
        return self._dictionary

    def adopt(self, dictionary: bytes) -> None:
        """Use ``dictionary`` from now on (the one the ledger stores; it never changes)."""
        if self._dictionary != dictionary:
            self._dictionary = dictionary
            self._local = threading.local()

    def packer(self, dictionary: bytes | None) -> Callable[[bytes], bytes]:
        """What makes the part of a record after its digest from event bytes, with
        ``dictionary`` (the one this commit writes under; ``adopt`` it once committed): a
        frame where that is shorter, else the bytes themselves."""
        if dictionary is None:
            return _unchanged
        if self._compressor is None or self._compressor[0] != dictionary:
            import zstandard

            self._compressor = (
                dictionary,
                zstandard.ZstdCompressor(
                    level=_LEVEL,
                    dict_data=zstandard.ZstdCompressionDict(dictionary),
                    write_checksum=False,  # the record's sha256 digest checks it
                ),
            )
        compress = self._compressor[1].compress

        def pack(data: bytes) -> bytes:
            frame: bytes = compress(data)
            return frame if len(frame) < len(data) else data

        return pack

    def unpack(self, stored: bytes, load: Callable[[], bytes | None]) -> bytes:
        """The event bytes of what follows a record's digest. ``load()`` gives the ledger's
        dictionary when this process has not seen it yet (another process may have trained
        it since this one opened the ledger)."""
        if stored[:4] != ZSTD_MAGIC:
            return stored
        import zstandard

        decompressor = getattr(self._local, "decompressor", None)
        if decompressor is None:
            dictionary = self._dictionary
            if dictionary is None:
                dictionary = load()
                if dictionary is None:
                    return stored  # a frame in a ledger with no dictionary: damage
                self.adopt(dictionary)
            decompressor = zstandard.ZstdDecompressor(
                dict_data=zstandard.ZstdCompressionDict(dictionary)
            )
            self._local.decompressor = decompressor
        try:
            data: bytes = decompressor.decompress(bytes(stored))
        except zstandard.ZstdError:
            return stored
        return data


def _unchanged(data: bytes) -> bytes:
    return data
