"""The bytes of an archive file, written and read as a stream (see ``ledger.archive``).

Format 2:

    magic       the program's archive magic (``Application.archive_magic``)
    header      u32 length + canonical CBOR {"format": 2, "extensions": ["binary-refs"],
                "events": n, "commits": k, "refs": {name: address}, "default_refs": {name: address}}
                (``default_refs`` are set by an import only where no ref has the name yet)
    n events    32-byte sha256 digest + u32 length + the event's canonical bytes, in the order
                the source ledger appended them
    k commits   the chain segment: u64 commit number + 32-byte previous head + 32-byte head +
                u32 count + count 32-byte digests (every event that commit added, held here or
                not), in commit order
    checksum    32-byte sha256 of everything before it

Format 1 is the same without ``commits`` and ``default_refs`` in the header and without the
chain segment. All
integers are big-endian. Nothing here keeps more than one event or one commit in memory.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any, Final

from ledger.codec import decode, encode
from ledger.errors import FormatError, IntegrityError, LedgerError, UnsupportedFormatError
from ledger.format import BINARY_REFS, KNOWN_EXTENSIONS

ARCHIVE_FORMAT: Final = 2
_U32 = struct.Struct(">I")
_COMMIT = struct.Struct(">Q32s32sI")
_READ_STEP = 1 << 20


@dataclass(frozen=True)
class Header:
    format: int
    events: int
    commits: int
    refs: dict[str, str]
    default_refs: dict[str, str]


@dataclass(frozen=True)
class Commit:
    """One commit of the chain segment; ``digests`` is the 32-byte digests, concatenated."""

    number: int
    previous: bytes
    head: bytes
    digests: bytes

    @property
    def count(self) -> int:
        return len(self.digests) // 32

    def digest_list(self) -> Iterator[bytes]:
        for i in range(0, len(self.digests), 32):
            yield self.digests[i : i + 32]


class Writer:
    """Writes an archive to ``out``, hashing every byte for the closing checksum."""

    def __init__(self, out: IO[bytes], magic: bytes, header: Header) -> None:
        self._out = out
        self._hash = hashlib.sha256()
        record: dict[str, Any] = {
            "format": ARCHIVE_FORMAT,
            "extensions": [BINARY_REFS],
            "events": header.events,
            "commits": header.commits,
            "refs": header.refs,
            "default_refs": header.default_refs,
        }
        data = encode(record)
        self._write(magic + _U32.pack(len(data)) + data)

    def _write(self, chunk: bytes) -> None:
        self._hash.update(chunk)
        self._out.write(chunk)

    def event(self, digest: bytes, data: bytes) -> None:
        self._write(digest + _U32.pack(len(data)) + data)

    def commit(self, commit: Commit) -> None:
        self._write(_COMMIT.pack(commit.number, commit.previous, commit.head, commit.count))
        self._write(commit.digests)

    def close(self) -> None:
        self._out.write(self._hash.digest())


class Reader:
    """Reads an archive from ``stream`` front to back, checking its shape as it goes.

    ``header()`` first, then ``events()``, then ``commits()``, then ``finish()``, which checks
    the checksum and that nothing follows it. Every failure is one ``LedgerError`` sentence
    naming ``where``.
    """

    def __init__(self, stream: IO[bytes], where: str, magic: bytes, name: str) -> None:
        self._in = stream
        self._hash = hashlib.sha256()
        self.where = where
        self._magic = magic
        self._name = name
        self.position = 0

    def _take(self, n: int) -> bytes:
        # A step at a time: a read of n bytes allocates n first, and a damaged length field
        # may claim gigabytes that the file does not hold.
        parts: list[bytes] = []
        left = n
        while left:
            part = self._in.read(min(left, _READ_STEP))
            if not part:
                raise FormatError(f"the archive {self.where} is truncated")
            parts.append(part)
            left -= len(part)
        chunk = b"".join(parts)
        self._hash.update(chunk)
        self.position += n
        return chunk

    def _u32(self) -> int:
        value: int = _U32.unpack(self._take(4))[0]
        return value

    def header(self) -> Header:
        magic = self._in.read(len(self._magic))
        if magic != self._magic:
            article = "an" if self._name[:1].lower() in "aeiou" else "a"
            raise FormatError(f"{self.where} is not {article} {self._name} archive")
        self._hash.update(magic)
        self.position = len(magic)
        try:
            record = decode(self._take(self._u32()))
        except LedgerError as exc:
            if isinstance(exc, FormatError):
                raise
            raise FormatError(f"the archive {self.where} has an unreadable header") from exc
        return self._checked_header(record)

    def _checked_header(self, record: Any) -> Header:
        where = self.where
        if not isinstance(record, dict) or not isinstance(record.get("format"), int):
            raise FormatError(f"the archive {where} has an unreadable header")
        version = record["format"]
        if version > ARCHIVE_FORMAT:
            raise UnsupportedFormatError(
                f"archive format {version} in {where}; this {self._name} reads "
                f"≤{ARCHIVE_FORMAT} — upgrade"
            )
        extensions = record.get("extensions", [])
        unknown = [e for e in extensions if e not in KNOWN_EXTENSIONS]
        if not isinstance(extensions, list) or unknown:
            raise UnsupportedFormatError(
                f"the archive {where} uses extensions {unknown or extensions} that this "
                f"{self._name} does not know — upgrade"
            )
        events, refs = record.get("events"), record.get("refs")
        commits = record.get("commits", 0) if version >= 2 else 0
        defaults = record.get("default_refs", {}) if version >= 2 else {}
        if (
            version < 1
            or not isinstance(events, int)
            or not isinstance(commits, int)
            or not isinstance(refs, dict)
            or not isinstance(defaults, dict)
            or events < 0
            or commits < 0
        ):
            raise FormatError(f"the archive {where} has an unreadable header")
        return Header(version, events, commits, refs, defaults)

    def events(self, count: int) -> Iterator[tuple[bytes, bytes]]:
        """``(digest, canonical bytes)`` of each of ``count`` events, as written."""
        for _ in range(count):
            digest = self._take(32)
            yield digest, self._take(self._u32())

    def commits(self, count: int) -> Iterator[Commit]:
        for _ in range(count):
            number, previous, head, n = _COMMIT.unpack(self._take(_COMMIT.size))
            yield Commit(number, previous, head, self._take(32 * n))

    def finish(self) -> None:
        expected = self._hash.digest()
        checksum = self._in.read(32)
        if len(checksum) != 32:
            raise FormatError(f"the archive {self.where} is truncated")
        if self._in.read(1):
            raise FormatError(f"the archive {self.where} has bytes after its end")
        if checksum != expected:
            raise IntegrityError(
                f"the archive {self.where} is damaged: its checksum does not match"
            )
