"""Archives: a slice of a ledger in one file, to move or keep eval history.

An archive holds the closure of the events asked for (each event and, transitively, every event
its ``refs`` name) plus the refs that were asked for by name. The file is

    magic       b"\\x89oloproof-archive\\r\\n\\x1a\\n"  (22 bytes; mangled by a text-mode copy)
    header      u32 length + canonical CBOR {"format": 1, "extensions": [], "events": n,
                                             "refs": {name: address}}
    n events    32-byte sha256 digest + u32 length + the event's canonical bytes
                (dependencies before the events that point at them)
    checksum    32-byte sha256 of everything before it

Reading checks everything before anything is used: the magic, the format, every event's hash
against its recorded digest, the canonical form and shape of every event, and the checksum.
``import_archive`` also checks that every link is satisfied by the archive or the ledger and
that no ref would be moved, then writes it all in one transaction, or nothing.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import struct
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ledger.address import (
    check_ref_name,
    digest_of,
    format_address,
    is_address,
    parse_address,
    resolve_with,
)
from ledger.codec import decode, encode
from ledger.errors import (
    AddressError,
    CorruptEventError,
    FormatError,
    IntegrityError,
    LedgerError,
    MissingEventError,
    RefConflictError,
    StoreError,
    UnknownAddressError,
    UnsupportedFormatError,
)
from ledger.event import Event, event_from_trusted
from ledger.store import Ledger

__all__ = [
    "ARCHIVE_FORMAT",
    "MAGIC",
    "ArchiveReader",
    "export_archive",
    "import_archive",
    "open_archive",
]

MAGIC: Final = b"\x89oloproof-archive\r\n\x1a\n"
ARCHIVE_FORMAT: Final = 1
_U32 = struct.Struct(">I")


def _closure(ledger: Ledger, roots: list[str]) -> list[tuple[bytes, bytes]]:
    """``(digest, bytes)`` of ``roots`` and everything they link to, dependencies first."""
    done: set[str] = set()
    ordered: list[tuple[bytes, bytes]] = []
    for root in roots:
        # Iterative post-order walk: an event is emitted after every event it links to.
        # (Links are hashes of earlier content, so they cannot form a cycle.)
        stack: list[tuple[str, bytes | None, str | None]] = [(root, None, None)]
        while stack:
            address, data, parent = stack.pop()
            if address in done:
                continue
            if data is None:
                try:
                    data = ledger.get_bytes(address)
                except UnknownAddressError:
                    raise MissingEventError(
                        address, f"{parent} links to it, so the archive would be incomplete"
                    ) from None
                stack.append((address, data, parent))
                refs = event_from_trusted(data).refs
                stack.extend((ref, None, address) for ref in reversed(refs) if ref not in done)
                continue
            done.add(address)
            ordered.append((parse_address(address), data))
    return ordered


def _asked_ref(ledger: Ledger, text: str) -> str | None:
    """The ref name ``text`` if it names an existing ref, else ``None``."""
    try:
        name = check_ref_name(text)
    except AddressError:
        return None
    return name if ledger.get_ref(name) is not None else None


def export_archive(ledger: Ledger, ids: Iterable[str], to: str | os.PathLike[str]) -> int:
    """Write the closure of ``ids`` (addresses, prefixes or ref names) to the file ``to``.

    Refs given by name are exported as refs too. The file is written whole or not at all.
    Returns the number of events written.
    """
    roots: list[str] = []
    refs: dict[str, str] = {}
    for text in [ids] if isinstance(ids, str) else ids:
        address = ledger.resolve(text)
        roots.append(address)
        name = _asked_ref(ledger, text.strip())
        if name is not None:
            refs[name] = address
    if not roots:
        raise AddressError("nothing to export: give at least one address, prefix or ref name")
    records = _closure(ledger, roots)
    header = encode(
        {"format": ARCHIVE_FORMAT, "extensions": [], "events": len(records), "refs": refs}
    )
    target = Path(to)
    digest = hashlib.sha256()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    except OSError as exc:
        raise StoreError(f"cannot write the archive {target}: {exc.strerror}") from exc
    try:
        os.fchmod(fd, 0o644)  # mkstemp makes the file private; an archive is for sharing
        with os.fdopen(fd, "wb") as out:

            def write(chunk: bytes) -> None:
                digest.update(chunk)
                out.write(chunk)

            write(MAGIC)
            write(_U32.pack(len(header)) + header)
            for event_digest, data in records:
                write(event_digest + _U32.pack(len(data)) + data)
            out.write(digest.digest())
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise StoreError(f"cannot write the archive {target}: {exc.strerror}") from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(records)


class _Reader:
    """Walks the bytes of an archive, refusing anything short or malformed."""

    def __init__(self, data: bytes, where: str) -> None:
        self.data = data
        self.pos = 0
        self.where = where

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if end > len(self.data):
            raise FormatError(f"the archive {self.where} is truncated")
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def u32(self) -> int:
        value: int = _U32.unpack(self.take(4))[0]
        return value


@dataclass(frozen=True)
class _Parsed:
    """A whole archive, checked: where it came from, its refs, its events in file order."""

    where: str
    refs: dict[str, str]
    records: dict[bytes, bytes]  # digest -> canonical bytes
    events: dict[bytes, Event]  # digest -> the decoded event


def _parse(path: Path) -> _Parsed:
    """Read and check a whole archive (see the module docstring for what is checked)."""
    where = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise StoreError(f"cannot read the archive {where}: {exc.strerror}") from exc
    if not data.startswith(MAGIC):
        raise FormatError(f"{where} is not an oloproof archive")
    reader = _Reader(data, where)
    reader.take(len(MAGIC))
    try:
        header = decode(reader.take(reader.u32()))
    except LedgerError as exc:
        if isinstance(exc, FormatError):
            raise
        raise FormatError(f"the archive {where} has an unreadable header") from exc
    if not isinstance(header, dict) or not isinstance(header.get("format"), int):
        raise FormatError(f"the archive {where} has an unreadable header")
    if header["format"] > ARCHIVE_FORMAT:
        raise UnsupportedFormatError(
            f"archive format {header['format']} in {where}; "
            f"this oloproof reads ≤{ARCHIVE_FORMAT} — upgrade"
        )
    if header.get("extensions"):
        raise UnsupportedFormatError(
            f"the archive {where} uses extensions {header['extensions']} that this oloproof "
            "does not know — upgrade"
        )
    count, refs = header.get("events"), header.get("refs")
    if not isinstance(count, int) or not isinstance(refs, dict):
        raise FormatError(f"the archive {where} has an unreadable header")
    records: dict[bytes, bytes] = {}
    events: dict[bytes, Event] = {}
    for _ in range(count):
        digest = reader.take(32)
        body = reader.take(reader.u32())
        address = format_address(digest)
        if digest_of(body) != digest:
            raise CorruptEventError(address, f"its bytes in the archive {where} do not hash to it")
        try:
            events[digest] = Event.from_bytes(body)
        except LedgerError as exc:
            raise CorruptEventError(address, f"in the archive {where}: {exc}") from exc
        records[digest] = body
    checksum = reader.take(32)
    if reader.pos != len(data):
        raise FormatError(f"the archive {where} has bytes after its end")
    if hashlib.sha256(data[: reader.pos - 32]).digest() != checksum:
        raise IntegrityError(f"the archive {where} is damaged: its checksum does not match")
    for name, address in refs.items():
        check_ref_name(name)
        if not is_address(address) or parse_address(address) not in records:
            raise FormatError(f"the archive {where} has ref {name!r} to an event it lacks")
    return _Parsed(where, refs, records, events)


def import_archive(ledger: Ledger, path: str | os.PathLike[str] | ArchiveReader) -> int:
    """Import an archive into ``ledger``, all or nothing; return how many events were new.

    Every event is re-hashed and checked first; links must be satisfied by the archive or the
    ledger, and a ref that already exists must point at the same event. Importing twice is a
    no-op the second time. ``path`` may also be an ``ArchiveReader`` already opened (and so
    already checked).
    """
    parsed = path._parsed if isinstance(path, ArchiveReader) else _parse(Path(path))
    where = parsed.where
    for event in parsed.events.values():
        for ref in event.refs:
            if parse_address(ref) not in parsed.records and not ledger.has(ref):
                raise MissingEventError(
                    ref, f"the archive {where} links to it but holds neither it nor its ledger"
                )
    ref_ops: list[tuple[str, str, str | None]] = []
    for name, address in sorted(parsed.refs.items()):
        current = ledger.get_ref(name)
        if current is None:
            ref_ops.append((name, address, None))
        elif current != address:
            raise RefConflictError(name, address, current)
    items = [(digest, data, parsed.events[digest]) for digest, data in parsed.records.items()]
    return ledger._import_verified(items, ref_ops)


def open_archive(path: str | os.PathLike[str]) -> ArchiveReader:
    """Open an archive read-only, after checking all of it."""
    return ArchiveReader(Path(path))


class ArchiveReader:
    """A read-only store over one archive, held in memory (checked when opened)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._parsed = _parse(path)
        self._refs = self._parsed.refs
        self._records = self._parsed.records
        self._sorted_hex = sorted(d.hex() for d in self._records)

    def close(self) -> None:
        """Nothing to release (the archive is read whole); kept for symmetry with ``Ledger``."""

    def __enter__(self) -> ArchiveReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, address: object) -> bool:
        return isinstance(address, str) and self.has(address)

    def has(self, address: str) -> bool:
        return parse_address(address) in self._records

    def get_bytes(self, address: str) -> bytes:
        data = self._records.get(parse_address(address))
        if data is None:
            raise UnknownAddressError(address, f"no event with address {address} is in {self.path}")
        return data

    def get(self, address: str) -> Event:
        event = self._parsed.events.get(parse_address(address))
        if event is None:
            raise UnknownAddressError(address, f"no event with address {address} is in {self.path}")
        return event

    def events(self, type: str | None = None) -> Iterator[tuple[str, Event]]:
        for digest, event in self._parsed.events.items():
            if type is None or event.type == type:
                yield format_address(digest), event

    def get_ref(self, name: str) -> str | None:
        return self._refs.get(check_ref_name(name))

    def refs(self, prefix: str = "") -> list[tuple[str, str]]:
        return sorted((n, a) for n, a in self._refs.items() if n.startswith(prefix))

    def resolve(self, text: str) -> str:
        return resolve_with(
            text,
            exact=lambda d: d in self._records,
            ref=self.get_ref,
            by_prefix=self._by_prefix,
        )

    def _by_prefix(self, hexpart: str, limit: int) -> list[str]:
        found: list[str] = []
        start = bisect.bisect_left(self._sorted_hex, hexpart)
        for hexed in self._sorted_hex[start : start + limit]:
            if not hexed.startswith(hexpart):
                break
            found.append("sha256:" + hexed)
        return found
