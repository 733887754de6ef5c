"""The read contract, run against the LMDB ledger and against the archive reader."""

from __future__ import annotations

from pathlib import Path

from tests.ledger.contract import SAMPLE, SAMPLE_REFS, ReadStoreContract

from ledger import Ledger, ReadStore, export_archive, open_archive, open_ledger


def filled_ledger(path: Path) -> Ledger:
    ledger = open_ledger(path)
    with ledger.batch():
        for event in SAMPLE:
            ledger.put(event)
        for name, address in SAMPLE_REFS.items():
            ledger.set_ref(name, address)
    return ledger


class TestLedger(ReadStoreContract):
    def make_store(self, tmp_path: Path) -> ReadStore:
        return filled_ledger(tmp_path / ".oloproof")


class TestLedgerReopened(ReadStoreContract):
    def make_store(self, tmp_path: Path) -> ReadStore:
        filled_ledger(tmp_path / ".oloproof").close()
        return open_ledger(tmp_path / ".oloproof", create=False, readonly=True)


class TestArchiveReader(ReadStoreContract):
    def make_store(self, tmp_path: Path) -> ReadStore:
        with filled_ledger(tmp_path / ".oloproof") as ledger:
            # Asking for the refs by name exports them; their closure is the whole sample.
            ids = [*SAMPLE_REFS, *(a[7:20] for a, _ in ledger.events())]
            export_archive(ledger, ids, tmp_path / "sample.oloarchive")
        return open_archive(tmp_path / "sample.oloarchive")
