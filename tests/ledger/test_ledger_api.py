"""The public door of the ledger package: its names, its error tree, its messages."""

from __future__ import annotations

import ledger
from ledger import (
    AddressError,
    AmbiguousAddressError,
    CodecError,
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

PROMISED = {
    "Event", "address_of", "encode", "decode", "open_ledger", "Ledger", "VerifyReport",
    "Problem", "export_archive", "import_archive", "open_archive", "ArchiveReader",
    "LedgerError", "FormatError", "UnsupportedFormatError", "IntegrityError",
    "CorruptEventError", "MissingEventError", "AddressError", "UnknownAddressError",
    "AmbiguousAddressError", "RefConflictError", "StoreError", "CodecError", "new_ulid",
}  # fmt: skip


def test_all_is_sorted_and_complete() -> None:
    assert ledger.__all__ == sorted(ledger.__all__)
    assert set(ledger.__all__) >= PROMISED
    for name in ledger.__all__:
        assert getattr(ledger, name) is not None


def test_error_tree() -> None:
    assert issubclass(UnsupportedFormatError, FormatError)
    assert issubclass(CorruptEventError, IntegrityError)
    assert issubclass(MissingEventError, IntegrityError)
    assert issubclass(UnknownAddressError, AddressError)
    assert issubclass(AmbiguousAddressError, AddressError)
    for error in (
        FormatError,
        IntegrityError,
        AddressError,
        RefConflictError,
        StoreError,
        CodecError,
    ):
        assert issubclass(error, LedgerError)
    assert LedgerError.__doc__ is not None
    assert "UnsupportedFormatError" in (ledger.errors.__doc__ or "")


def test_messages_are_one_sentence() -> None:
    address = "sha256:" + "a" * 64
    errors = [
        CorruptEventError(address),
        MissingEventError(address, "ref 'x' cannot point at it"),
        UnknownAddressError("run_x"),
        AmbiguousAddressError("abcdef12", [address, address.replace("a", "b")], more=3),
        RefConflictError("latest", None, address),
    ]
    for error in errors:
        text = str(error)
        assert "\n" not in text and text[0].islower()
    assert str(RefConflictError("latest", None, address)) == (
        f"ref 'latest' was expected to hold no value but holds {address}"
    )
    assert "and 3 more" in str(errors[3])
