"""Open the project's ledger (``.oloproof/`` beside oloproof.yaml) with Oloproof's indexes."""

from __future__ import annotations

from pathlib import Path

from ledger import Ledger, LedgerError, open_ledger
from oloproof.errors import LedgerAccessError, UnknownIdError
from oloproof.events import index_entries

LEDGER_DIR = ".oloproof"


def open_project_ledger(root: Path, *, create: bool = True) -> Ledger:
    """The ledger of the project in ``root``; ``create=False`` refuses to make a new one."""
    path = root / LEDGER_DIR
    if not create and not path.exists():
        raise UnknownIdError(
            f"no ledger in {root} (expected {path}); run `oloproof run` there first"
        )
    try:
        return open_ledger(path, indexer=index_entries, create=create)
    except LedgerError as exc:
        raise LedgerAccessError(str(exc)) from None
