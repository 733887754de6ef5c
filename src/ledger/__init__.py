"""ledger: an append-only, content-addressed event store on LMDB.

Events are immutable CBOR maps addressed by the SHA-256 of their deterministic encoding; refs
are movable names; indexes are derived and rebuildable; every commit extends a hash chain;
``verify`` re-checks all of it; archives carry a slice of history between ledgers. The package
knows nothing of what the events mean: a program says who it is with an ``Application``.

    from ledger import Event, open_ledger

    with open_ledger("history") as ledger:
        with ledger.batch():
            address = ledger.put(Event("note", 1, {"text": "hello"}))
        ledger.set_ref("latest", address)
        assert ledger.get(ledger.resolve("latest")).body["text"] == "hello"
"""

from ledger.address import internal_key, new_ulid
from ledger.application import Application, Links
from ledger.archive import (
    ArchiveInfo,
    ArchiveReader,
    ImportSummary,
    check_archive,
    export_archive,
    import_archive,
    open_archive,
)
from ledger.codec import decode, encode, in_stored_order
from ledger.compact import CompactSummary, compact_ledger
from ledger.errors import (
    AddressError,
    AmbiguousAddressError,
    CodecError,
    CorruptEventError,
    DamagedIndexesError,
    DamagedStoreError,
    FormatError,
    IntegrityError,
    LedgerError,
    MissingEventError,
    ReadOnlyFileSystemError,
    RefConflictError,
    StaleIndexesError,
    StoreError,
    UnknownAddressError,
    UnsupportedFormatError,
)
from ledger.event import Event, address_of
from ledger.protocol import ReadStore
from ledger.replay import fold
from ledger.store import ANY, Indexer, Ledger, Prepared, on_read_only_file_system, open_ledger
from ledger.verify import ChainSummary, Problem, VerifyReport

__all__ = [
    "ANY",
    "AddressError",
    "AmbiguousAddressError",
    "Application",
    "ArchiveInfo",
    "ArchiveReader",
    "ChainSummary",
    "CodecError",
    "CompactSummary",
    "CorruptEventError",
    "DamagedIndexesError",
    "DamagedStoreError",
    "Event",
    "FormatError",
    "ImportSummary",
    "Indexer",
    "IntegrityError",
    "Ledger",
    "LedgerError",
    "Links",
    "MissingEventError",
    "Prepared",
    "Problem",
    "ReadOnlyFileSystemError",
    "ReadStore",
    "RefConflictError",
    "StaleIndexesError",
    "StoreError",
    "UnknownAddressError",
    "UnsupportedFormatError",
    "VerifyReport",
    "address_of",
    "check_archive",
    "compact_ledger",
    "decode",
    "encode",
    "export_archive",
    "fold",
    "import_archive",
    "in_stored_order",
    "internal_key",
    "new_ulid",
    "on_read_only_file_system",
    "open_archive",
    "open_ledger",
]
