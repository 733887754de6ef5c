"""Archives: a slice of a ledger, or all of it, in one file, to move or keep history.

``export_archive`` writes the closure of the events asked for (``ledger._closure``: each event,
every event its ``refs`` name, and whatever the program's ``Links`` say travels with it), or
with ``everything`` the whole ledger and all its refs; refs asked for by name travel too. The
events are written in the order the source appended them, followed by the chain segment of
the commits that added them, so the archive carries the evidence that they were part of the
source's history (file layout: ``ledger._archive_file``).

Reading checks everything before anything is used, streaming through the file: the magic,
the format, every event's hash against its recorded digest, the canonical form and shape of
every event (and that the program can read it), every commit's head, that the commits account
for the events in order, and the checksum. ``import_archive`` also checks that every link is
satisfied by the archive or the ledger and that no ref would be moved. Only then does it write,
in chunks of at most ``CHUNK_EVENTS`` events, each one commit, and the refs last: an import that
is interrupted leaves a prefix of the archive's events (each chunk whole, indexed and chained)
and none of its refs, and importing the same file again completes it. The refs are read again
when another process set one meanwhile (a second import of the same file): one it set to the
same event, or a default it set at all, is left; one it set elsewhere is refused.

When the ledger's history is the one the archive's commits continue (an empty ledger and a
whole-ledger archive, say), the import replays the commits one for one, so the ledger ends
with the same chain, and the same head, as the source. Otherwise the archive's new events
arrive as new commits of this ledger's own history.

Memory stays flat: the digests an archive holds, and where its reader finds them, are kept in a
``DigestMap`` (a scratch file beyond a limit), never its events.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import struct
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ledger._archive_file import ARCHIVE_FORMAT, Commit, Header, Reader, Writer
from ledger._closure import Selection, select_all, select_closure
from ledger._lmdb import DigestMap, Snapshot
from ledger._writes import CHUNK_BYTES, CHUNK_EVENTS
from ledger.address import (
    check_ref_name,
    digest_of,
    format_address,
    is_address,
    parse_address,
    resolve_with,
)
from ledger.application import Application, Links
from ledger.chain import ChainRecord, head_of
from ledger.errors import (
    AddressError,
    ArchiveRefConflictError,
    CorruptEventError,
    FormatError,
    IntegrityError,
    LedgerError,
    MissingEventError,
    RefConflictError,
    StoreError,
    UnknownAddressError,
)
from ledger.event import Event, event_from_trusted
from ledger.format import _SEQ
from ledger.store import Ledger

__all__ = [
    "ARCHIVE_FORMAT",
    "ArchiveInfo",
    "ArchiveReader",
    "ImportSummary",
    "check_archive",
    "export_archive",
    "import_archive",
    "open_archive",
]


_IN_MEMORY = 32_768  # digests an archive check keeps in memory before a scratch file
_PLACE = struct.Struct(">QI")  # where an event's bytes start in an archive file, and how many

# -- export -------------------------------------------------------------------------------


def export_archive(
    ledger: Ledger,
    ids: Iterable[str],
    to: str | os.PathLike[str],
    *,
    links: Links | None = None,
    everything: bool = False,
    check: Callable[[str, bytes], None] | None = None,
) -> int:
    """Write the closure of ``ids`` (addresses, prefixes or ref names) to the file ``to``;
    with ``everything``, the whole ledger and every ref. Return the number of events written.

    Refs given by name are exported as refs too. The file is written whole or not at all.
    ``check`` is given each event's address and bytes before they are written: what it
    raises ends the export, the file left as it was.
    """
    _check_target(Path(to), ledger)
    roots: list[str] = []
    asked: dict[str, str] = {}
    for text in [ids] if isinstance(ids, str) else ids:
        address = ledger.resolve(text)
        roots.append(address)
        name = _asked_ref(ledger, text.strip())
        if name is not None:
            asked[name] = address
    if not roots and not everything:
        raise AddressError("nothing to export: give at least one address, prefix or ref name")
    with ledger.snapshot() as snap:
        if everything:
            selection = select_all(snap, links, ledger.app.upcast)
        else:
            selection = select_closure(snap, roots, links, ledger.app.upcast)
        # A ref asked for by name travels as one that must not move, unless the program says
        # it is only a default (a "latest").
        selection.refs.update({k: v for k, v in asked.items() if k not in selection.defaults})
        commits = _touched_commits(snap, selection, ledger.path)
        defaults = {k: v for k, v in selection.defaults.items() if k not in selection.refs}
        header = Header(
            ARCHIVE_FORMAT,
            selection.count(),
            len(commits),
            dict(sorted(selection.refs.items())),
            dict(sorted(defaults.items())),
        )

        def write(out: IO[bytes]) -> None:
            writer = Writer(out, ledger.app.archive_magic, header)
            for seq in selection.seqs():
                stored = snap.record_at(_SEQ.pack(seq))
                if stored is not None:
                    # Copied without this, a damaged event would make an archive that only an
                    # import, later and elsewhere, finds it cannot use.
                    if hashlib.sha256(stored[1]).digest() != stored[0]:
                        raise CorruptEventError(format_address(stored[0]))
                    if check is not None:
                        check(format_address(stored[0]), stored[1])
                    writer.event(*stored)
            for commit, previous in commits:
                writer.commit(_segment(snap, commit, previous, ledger.path))
            writer.close()

        _write_file(Path(to), write)
    return header.events


def _asked_ref(ledger: Ledger, text: str) -> str | None:
    """The ref name ``text`` if it names an existing ref, else ``None``."""
    try:
        name = check_ref_name(text)
    except AddressError:
        return None
    return name if ledger.get_ref(name) is not None else None


def _touched_commits(
    snap: Snapshot, selection: Selection, where: Path
) -> list[tuple[ChainRecord, bytes]]:
    """The chain records of the commits that added a selected event, each with the head
    before it. A chain whose records leave a selected event to no commit (a record's range
    damaged on disk) is refused: import refuses an archive whose commits do not account for
    every event it holds."""
    found: list[tuple[ChainRecord, bytes]] = []
    previous = bytes(32)
    accounted = 0
    for record in snap.chain():
        added = selection.added_by(record)
        if added:
            found.append((record, previous))
            accounted += added
        previous = record.head
    if snap.has_chain() and accounted < selection.count():
        raise IntegrityError(
            f"the chain of the ledger at {where} records no commit that added "
            f"{selection.count() - accounted} of the events to export; verify the ledger before "
            "exporting it"
        )
    return found


def _segment(snap: Snapshot, record: ChainRecord, previous: bytes, where: Path) -> Commit:
    """The commit ``record`` as an archive carries it, once its events hash to its head: a
    commit that does not (a record or an event damaged on disk) would make an archive that
    only an import, later and elsewhere, finds it cannot use."""
    digests = bytearray()
    for seq in range(record.first, record.first + record.count):
        stored = snap.record_at(_SEQ.pack(seq))
        if stored is None:
            raise IntegrityError(
                f"commit {record.commit} of the ledger at {where} lacks its event {seq}; "
                "verify the ledger before exporting it"
            )
        digests += stored[0]
    commit = Commit(record.commit, previous, record.head, bytes(digests))
    if head_of(previous, commit.digest_list()) != record.head:
        raise IntegrityError(
            f"commit {record.commit} of the ledger at {where} does not hash to its recorded "
            "head; verify the ledger before exporting it"
        )
    return commit


def _check_target(target: Path, ledger: Ledger) -> None:
    """Refuse, before any work, an archive path that would replace a file of the user's or the
    ledger's: one that is there, not empty and no archive of this program (the cases file, a
    report), or any path inside the ledger's folder (its lock file is empty)."""
    where = target.resolve()
    if where.is_dir():
        raise StoreError(f"cannot write the archive {target}: it is a folder")
    if where.is_relative_to(Path(ledger.path).resolve()):
        raise StoreError(f"will not write the archive {target}: it is inside the ledger")
    try:
        if not where.is_file():  # missing, or a device or a pipe: written into (_write_file)
            return
        with where.open("rb") as handle:
            head = handle.read(len(ledger.app.archive_magic))
    except OSError as exc:
        raise StoreError(f"cannot write the archive {target}: {exc.strerror}") from exc
    if head and head != ledger.app.archive_magic:
        raise StoreError(
            f"will not write the archive over {target}: that file is not an archive; give "
            "another path, or remove the file first"
        )


def _write_file(target: Path, write: Callable[[IO[bytes]], None]) -> None:
    """Write ``target`` through a temporary file renamed into place, so it is whole or absent;
    a device or a pipe (``/dev/null``) is written into, as renaming over it would replace it."""
    if target.exists() and not target.is_file():
        try:
            with target.open("wb") as out:
                write(out)
        except OSError as exc:
            raise StoreError(f"cannot write the archive {target}: {exc.strerror}") from exc
        return
    _remove_leftovers(target)
    try:
        fd, tmp = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".partial", dir=target.parent or "."
        )
        fcntl.flock(fd, fcntl.LOCK_EX)  # held until the process ends: _remove_leftovers
    except OSError as exc:
        raise StoreError(f"cannot write the archive {target}: {exc.strerror}") from exc
    try:
        os.fchmod(fd, 0o644)  # mkstemp makes the file private; an archive is for sharing
        with os.fdopen(fd, "wb") as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise StoreError(f"cannot write the archive {target}: {exc.strerror}") from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _remove_leftovers(target: Path) -> None:
    """Remove the temporary files of earlier exports to ``target`` that were killed before they
    could (SIGKILL, a power cut): ``.NAME.XXXXXXXX.partial`` (``.NAME.XXXXXXXX`` from earlier
    releases). The file of an export still writing is left: it holds a lock on it."""
    folder = target.parent
    made = re.compile(rf"\.{re.escape(target.name)}\.[a-z0-9_]{{8}}(\.partial)?")
    try:
        names = [p for p in folder.iterdir() if made.fullmatch(p.name) and p.is_file()]
    except OSError:
        return  # a folder that cannot be listed: writing the archive says why
    for leftover in names:
        try:
            with leftover.open("rb") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                leftover.unlink()
        except OSError:
            continue  # another export is writing it, or it is gone already


# -- checking -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ArchiveInfo:
    """What a checked archive holds.

    ``commits`` is its chain segment, each as ``(number, previous head, head, count)``;
    ``complete`` says that the segment's commits added nothing but the archive's events, so
    a ledger whose history they continue can replay them; ``present`` counts the events the
    ledger checked against already had.
    """

    where: str
    format: int
    events: int
    refs: dict[str, str]
    default_refs: dict[str, str] = field(default_factory=dict)
    commits: list[tuple[int, bytes, bytes, int]] = field(default_factory=list)
    complete: bool = False
    present: int = 0

    @property
    def head(self) -> str | None:
        """The last head of the archive's chain segment (the source's head for a whole
        ledger), or None when it carries none."""
        return format_address(self.commits[-1][2]) if self.commits else None


def check_archive(
    path: str | os.PathLike[str],
    app: Application | None = None,
    *,
    known: Callable[[bytes], bool] | None = None,
    places: DigestMap | None = None,
    check: Callable[[str, bytes], None] | None = None,
) -> ArchiveInfo:
    """Check the whole archive at ``path`` without writing anything (see the module).

    ``known(digest)`` says whether the ledger it is meant for holds an event; a link to one
    that neither the archive nor ``known`` has is a ``MissingEventError``. ``places`` is
    given each event's digest and place in the file (``_PLACE``). Every failure is one
    ``LedgerError``, but for what ``check`` raises: it is given the address and bytes of each
    event the ledger does not hold yet.
    """
    app = app or Application()
    where = str(path)
    try:
        stream = open(path, "rb")  # noqa: SIM115 - closed below, after the whole read
    except OSError as exc:
        raise StoreError(f"cannot read the archive {where}: {exc.strerror}") from exc
    # The places, when asked for, are the digests met: one scratch file, not two.
    kept = nullcontext(places) if places is not None else DigestMap(_IN_MEMORY)
    with stream, kept as seen, DigestMap(_IN_MEMORY) as unresolved:
        reader = Reader(stream, where, app.archive_magic, app.name)
        header = reader.header()
        order = hashlib.sha256()
        present = 0
        for digest, data in reader.events(header.events):
            event = _checked_event(digest, data, where, app)
            if digest in seen:
                raise FormatError(f"the archive {where} holds {format_address(digest)} twice")
            seen.add(digest, _PLACE.pack(reader.position - len(data), len(data)))
            order.update(digest)
            if known is not None and known(digest):
                present += 1
            elif check is not None:
                check(format_address(digest), data)
            for ref in event.refs:
                target = parse_address(ref)
                if target not in seen:
                    unresolved.add(target)
        commits, complete = _checked_segment(reader, header, seen, order, where)
        reader.finish()
        _check_links(unresolved, seen, known, where)
        _check_refs({**header.default_refs, **header.refs}, seen, where)
    return ArchiveInfo(
        where,
        header.format,
        header.events,
        header.refs,
        header.default_refs,
        commits,
        complete,
        present,
    )


def _checked_event(digest: bytes, data: bytes, where: str, app: Application) -> Event:
    address = format_address(digest)
    if digest_of(data) != digest:
        raise CorruptEventError(address, f"its bytes in the archive {where} do not hash to it")
    try:
        event = Event.from_bytes(data)
    except LedgerError as exc:
        raise CorruptEventError(address, f"in the archive {where}: {exc}") from exc
    if app.upcast is not None:
        app.upcast(address, event)  # refuses an event the program cannot read
    return event


def _checked_segment(
    reader: Reader, header: Header, seen: DigestMap, order: hashlib._Hash, where: str
) -> tuple[list[tuple[int, bytes, bytes, int]], bool]:
    """Check the chain segment: every head, the links between consecutive commits, and that
    the archive's events are the ones its commits added, in order."""
    commits: list[tuple[int, bytes, bytes, int]] = []
    held = hashlib.sha256()
    complete = True
    for commit in reader.commits(header.commits):
        if commits and commit.number <= commits[-1][0]:
            raise FormatError(f"the archive {where} lists its commits out of order")
        if commits and commit.number == commits[-1][0] + 1 and commit.previous != commits[-1][2]:
            raise IntegrityError(
                f"the archive {where} is damaged: commit {commit.number} does not follow the "
                "commit before it"
            )
        if head_of(commit.previous, commit.digest_list()) != commit.head:
            raise IntegrityError(
                f"the archive {where} is damaged: commit {commit.number} of its chain does "
                "not hash to its head"
            )
        for digest in commit.digest_list():
            if digest in seen:
                held.update(digest)
            else:
                complete = False
        commits.append((commit.number, commit.previous, commit.head, commit.count))
    if commits and held.digest() != order.digest():
        raise IntegrityError(
            f"the archive {where} is damaged: its chain segment does not account for its "
            "events in the order it holds them"
        )
    return commits, complete and bool(commits)


def _check_links(
    unresolved: DigestMap, seen: DigestMap, known: Callable[[bytes], bool] | None, where: str
) -> None:
    for digest in unresolved:
        if digest not in seen and not (known is not None and known(digest)):
            raise MissingEventError(
                format_address(digest),
                f"the archive {where} links to it but holds neither it nor its ledger",
            )


def _check_refs(refs: dict[str, str], seen: DigestMap, where: str) -> None:
    for name, address in refs.items():
        try:
            check_ref_name(name)
        except AddressError as exc:  # its sentence alone named no archive
            raise FormatError(f"the archive {where} holds a ref no ledger can: {exc}") from None
        if not is_address(address) or parse_address(address) not in seen:
            raise FormatError(f"the archive {where} has ref {name!r} to an event it lacks")


# -- import -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportSummary:
    """What ``import_archive`` did: ``new`` events written, of the archive's ``events``;
    ``refs`` it carried (``new_refs`` of them set now); ``replayed`` commits of the archive's
    own chain written one for one (0 when its events arrived as this ledger's own commits)."""

    new: int
    events: int
    refs: int
    new_refs: int
    replayed: int

    @property
    def present(self) -> int:
        return self.events - self.new


def import_archive(
    ledger: Ledger,
    path: str | os.PathLike[str] | ArchiveReader,
    check: Callable[[str, bytes], None] | None = None,
) -> ImportSummary:
    """Import an archive into ``ledger`` (see the module) and say what was written.

    Importing twice is a no-op the second time. ``path`` may also be an ``ArchiveReader``
    already opened; its file is read, and checked, again. ``check`` is given the address and
    bytes of each event to write, before any is written: what it raises ends the import,
    the ledger left as it was.
    """
    if ledger._depth:
        raise StoreError("cannot import an archive inside a batch: import it outside")
    source = path.path if isinstance(path, ArchiveReader) else Path(path)
    info = check_archive(source, ledger.app, known=ledger._committed, check=check)
    _ref_ops(ledger, info, written=False)  # a ref that would move: refused before any write
    new = 0
    sizes = _replay_sizes(ledger, info)
    for items in _chunks(ledger, source, info, sizes):
        new += ledger._commit_imported(items, [])
    while True:
        ref_ops = _ref_ops(ledger, info, written=True)
        try:
            ledger._commit_imported([], ref_ops)
            break
        except RefConflictError:
            # Another process set one of them since they were read (the same import, a run
            # moving `latest`): read them again; one now pointing elsewhere is refused then.
            continue
    replayed = sum(1 for s in sizes if s > 0) if sizes is not None else 0
    carried = len(info.refs) + len(info.default_refs)
    return ImportSummary(new, info.events, carried, len(ref_ops), replayed)


def _ref_ops(ledger: Ledger, info: ArchiveInfo, written: bool) -> list[tuple[str, str]]:
    """The archive's refs the ledger lacks; ``ArchiveRefConflictError`` for one it holds
    pointing elsewhere (``written``: once the archive's events are in). A default ref the
    ledger has already is left as it is."""
    ref_ops: list[tuple[str, str]] = []
    for name, address in sorted(info.refs.items()):
        current = ledger.get_ref(name)
        if current is None:
            ref_ops.append((name, address))
        elif current != address:
            raise ArchiveRefConflictError(info.where, name, address, current, written)
    for name, address in sorted(info.default_refs.items()):
        if ledger.get_ref(name) is None:  # a default: never moves a ref that exists
            ref_ops.append((name, address))
    return ref_ops


def _chunks(
    ledger: Ledger, source: Path, info: ArchiveInfo, sizes: list[int] | None
) -> Iterator[list[tuple[bytes, bytes, tuple[bytes, ...]]]]:
    """The archive's events, each with its index entries, in the commits they are to be
    written in: the archive's own commits when the ledger's history is the one they continue
    (``sizes``), else chunks. Only bytes are held, never decoded events."""
    sizes = None if sizes is None else list(sizes)
    app = ledger.app
    with open(source, "rb") as stream:
        reader = Reader(stream, info.where, app.archive_magic, app.name)
        header = reader.header()
        chunk: list[tuple[bytes, bytes, tuple[bytes, ...]]] = []
        size = 0
        for digest, data in reader.events(header.events):
            address = format_address(digest)
            if digest_of(data) != digest:  # the file changed since it was checked
                raise CorruptEventError(address, f"in the archive {info.where}")
            if sizes is not None and sizes[0] < 0:  # a commit the ledger already has
                sizes[0] += 1
                if sizes[0] == 0:
                    sizes.pop(0)
                continue
            chunk.append((digest, data, ledger.derive_prefixes(address, event_from_trusted(data))))
            size += len(data)
            if sizes is not None:
                if len(chunk) == sizes[0]:
                    sizes.pop(0)
                    yield chunk
                    chunk = []
            elif len(chunk) >= CHUNK_EVENTS or size >= CHUNK_BYTES:
                yield chunk
                chunk, size = [], 0
        if chunk:
            yield chunk


def _replay_sizes(ledger: Ledger, info: ArchiveInfo) -> list[int] | None:
    """When the archive's commits continue this ledger's history, the event count of each,
    negated for those the ledger has already (an import done before, or cut short); else None.

    The ledger's newest head names its whole history, so a head equal to one the archive's
    commits start from (or reach) means the two histories agree up to there.
    """
    commits = info.commits
    if not info.complete:
        return None
    first = commits[0][0]
    if [c[0] for c in commits] != list(range(first, first + len(commits))):
        return None
    tip_number, tip_head = ledger._tip()
    if commits[0][1] == tip_head and first == tip_number:
        return [c[3] for c in commits]
    for j, (number, _, head, _) in enumerate(commits):
        if head == tip_head and number == tip_number - 1:
            return [-c[3] for c in commits[: j + 1]] + [c[3] for c in commits[j + 1 :]]
    return None


# -- reading without importing ------------------------------------------------------------


def open_archive(
    path: str | os.PathLike[str],
    app: Application | None = None,
    known: Callable[[bytes], bool] | None = None,
    check: Callable[[str, bytes], None] | None = None,
) -> ArchiveReader:
    """Open an archive read-only, after checking all of it. ``known`` and ``check`` are as for
    ``check_archive``: an archive meant for a ledger may link to events that ledger holds."""
    return ArchiveReader(Path(path), app, known, check)


class ArchiveReader:
    """A read-only store over one archive: checked when opened; events read from the file.

    It keeps each event's digest and place in the file (a ``DigestMap``: memory stays flat,
    a scratch file holds the rest), not the events; ``close`` removes the scratch file.
    """

    def __init__(
        self,
        path: Path,
        app: Application | None = None,
        known: Callable[[bytes], bool] | None = None,
        check: Callable[[str, bytes], None] | None = None,
    ) -> None:
        self.path = path
        self._app = app or Application()
        self._places = DigestMap(_IN_MEMORY)
        try:
            self.info = check_archive(
                path, self._app, known=known, places=self._places, check=check
            )
        except BaseException:
            self._places.close()
            raise
        self._refs = self.info.refs

    def close(self) -> None:
        self._places.close()

    def __enter__(self) -> ArchiveReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return self.info.events

    def __contains__(self, address: object) -> bool:
        return isinstance(address, str) and self.has(address)

    def has(self, address: str) -> bool:
        return parse_address(address) in self._places

    def get_bytes(self, address: str) -> bytes:
        digest = parse_address(address)
        place = self._places.get(digest)
        if place is None:
            raise UnknownAddressError(address, f"no event with address {address} is in {self.path}")
        start, length = _PLACE.unpack(place)
        with self._open() as stream:
            try:
                stream.seek(start)
                data = stream.read(length)
            except OSError as exc:
                raise StoreError(f"cannot read the archive {self.path}: {exc.strerror}") from exc
        if digest_of(data) != digest:
            # Checked whole when it was opened: the file has changed since.
            raise CorruptEventError(address, f"in the archive {self.path}")
        return data

    def _open(self) -> IO[bytes]:
        try:
            return open(self.path, "rb")
        except OSError as exc:
            raise StoreError(f"cannot read the archive {self.path}: {exc.strerror}") from exc

    def get(self, address: str) -> Event:
        return self._event(address, self.get_bytes(address))

    def _event(self, address: str, data: bytes) -> Event:
        event = event_from_trusted(data)
        if self._app.expand is not None:
            event = self._app.expand(address, event, self._stored_events)
        upcast = self._app.upcast
        return event if upcast is None else upcast(address, event)

    def _stored_events(self, addresses: Sequence[str]) -> list[Event]:
        upcast = self._app.upcast
        found: list[Event] = []
        for address in addresses:
            event = event_from_trusted(self.get_bytes(address))
            found.append(event if upcast is None else upcast(address, event))
        return found

    def events(self, type: str | None = None) -> Iterator[tuple[str, Event]]:
        """Every event, in the archive's order: the file read front to back again, each event
        confirmed to be the one checked at that place when the archive was opened."""
        with self._open() as stream:
            reader = Reader(stream, str(self.path), self._app.archive_magic, self._app.name)
            count = reader.header().events
            if count != self.info.events:
                raise self._changed(f"it now holds {count} events, not {self.info.events}")
            for digest, data in reader.events(count):
                start = reader.position - len(data)
                if self._places.get(digest) != _PLACE.pack(start, len(data)) or (
                    digest_of(data) != digest
                ):
                    raise self._changed(f"the event at byte {start} is not the one checked there")
                address = format_address(digest)
                event = self._event(address, data)
                if type is None or event.type == type:
                    yield address, event

    def _changed(self, detail: str) -> StoreError:
        return StoreError(
            f"the archive {self.path} changed since it was opened and checked: {detail}"
        )

    def get_ref(self, name: str) -> str | None:
        return self._refs.get(check_ref_name(name))

    def refs(self, prefix: str = "") -> list[tuple[str, str]]:
        return sorted((n, a) for n, a in self._refs.items() if n.startswith(prefix))

    def resolve(self, text: str) -> str:
        return resolve_with(
            text,
            exact=self._places.__contains__,
            ref=self.get_ref,
            by_prefix=self._by_prefix,
        )

    def _by_prefix(self, hexpart: str, limit: int) -> list[str]:
        return [format_address(d) for d in self._places.starting_with(hexpart)[:limit]]
