"""Errors raised by the ledger.

Every error is a ``LedgerError``; its message is one sentence that says what went wrong and
names the address, ref or path concerned, so a shell can print ``str(exc)`` as it is.

    LedgerError
    ├── FormatError                 bytes or a record are not in the shape the ledger expects
    │   └── UnsupportedFormatError  the ledger or archive was written by a newer format
    ├── IntegrityError              stored content does not match what it claims to be
    │   ├── CorruptEventError       an event's bytes no longer hash to its address
    │   ├── MissingEventError       an event that something points at is not stored
    │   └── DamagedStoreError       the store's file is damaged below the events (truncated,
    │                               a page overwritten): nothing of it can be trusted as read
    ├── AddressError                text that is not a well-formed address, prefix or ref name
    │   ├── UnknownAddressError     a well-formed address, prefix or ref name that names nothing
    │   └── AmbiguousAddressError   a prefix shared by several stored events
    ├── RefConflictError            a compare-and-swap on a ref lost to another writer
    │   └── ArchiveRefConflictError an archive's ref that the importing ledger holds elsewhere
    ├── StoreError                  the storage below failed (LMDB, the file system)
    │   ├── ReadOnlyFileSystemError opened for writing on a file system mounted read-only
    │   └── StaleIndexesError       read-only, with indexes filed by the program's older rules
    │       └── DamagedIndexesError the derived entries cannot be read as they are
    └── CodecError                  a value outside deterministic CBOR's allowed set
"""

from __future__ import annotations

from collections.abc import Sequence


class LedgerError(Exception):
    """Base class of every error the ledger raises."""


class FormatError(LedgerError):
    """Bytes or a record are not in the shape the ledger expects."""


class UnsupportedFormatError(FormatError):
    """The ledger or archive was written in a format this version cannot read."""


class IntegrityError(LedgerError):
    """Stored content does not match what it claims to be."""


class CorruptEventError(IntegrityError):
    """An event's stored bytes no longer hash to its address."""

    def __init__(self, address: str, detail: str = "its stored bytes no longer match it") -> None:
        super().__init__(f"event {address} is corrupt: {detail}")
        self.address = address


class MissingEventError(IntegrityError):
    """An event that is pointed at is not stored."""

    def __init__(self, address: str, context: str = "") -> None:
        where = f" ({context})" if context else ""
        super().__init__(f"event {address} is not in the ledger{where}")
        self.address = address


class DamagedStoreError(IntegrityError):
    """The store's file is damaged below the level of events: it is shorter than its own
    header says, or LMDB found a page that is not what the tree expects."""


class AddressError(LedgerError):
    """Text that is not a well-formed address, address prefix or ref name."""


class UnknownAddressError(AddressError):
    """A well-formed address, prefix or ref name that names nothing stored."""

    def __init__(self, text: str, message: str | None = None) -> None:
        super().__init__(message or f"no event or ref matches {text!r}")
        self.text = text


class AmbiguousAddressError(AddressError):
    """An address prefix matched by several stored events."""

    def __init__(self, text: str, candidates: Sequence[str], more: int = 0) -> None:
        shown = ", ".join(candidates)
        extra = f" and {more} more" if more else ""
        super().__init__(
            f"prefix {text!r} is ambiguous: it matches {shown}{extra}; give more digits"
        )
        self.text = text
        self.candidates = list(candidates)


class RefConflictError(LedgerError):
    """A ref did not hold the value a compare-and-swap expected."""

    def __init__(self, name: str, expected: str | None, actual: str | None) -> None:
        want = expected if expected is not None else "no value"
        have = actual if actual is not None else "no value"
        super().__init__(f"ref {name!r} was expected to hold {want} but holds {have}")
        self.name = name
        self.expected = expected
        self.actual = actual


class ArchiveRefConflictError(RefConflictError):
    """An archive's ref that the importing ledger holds pointing at another event: an import
    never moves a ref. Its sentence names the archive and both events, which a compare-and-swap's
    own sentence (what the swap expected, what it found) does not."""

    def __init__(self, archive: str, name: str, carried: str, held: str, written: bool) -> None:
        super().__init__(name, carried, held)
        done = (
            "its events were imported, none of its refs were set"
            if written
            else "nothing was imported"
        )
        self.args = (
            f"will not import the archive {archive}: it sets ref {name!r} to {carried}, but "
            f"this ledger's ref {name!r} names {held}, and an import never moves a ref; {done}",
        )


class StoreError(LedgerError):
    """The storage below the ledger (LMDB, the file system) failed."""


class ReadOnlyFileSystemError(StoreError):
    """A ledger on a file system mounted read-only, opened for writing (or to be created
    there): it can only be opened with ``readonly``. Raised before anything is touched."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"the ledger at {path} is on a read-only file system, where it can only be read"
        )
        self.path = path


class StaleIndexesError(StoreError):
    """A ledger opened read-only whose indexes were filed by other rules than the program's
    (``Application.indexes``): its lookups would miss entries, so it is not read."""


class DamagedIndexesError(StaleIndexesError):
    """The ledger's address and index entries cannot be read as they are (their runs'
    directory is damaged): ``rebuild_indexes`` files them again from the events."""


class CodecError(LedgerError):
    """A value cannot be encoded, or bytes cannot be decoded, as deterministic CBOR."""
