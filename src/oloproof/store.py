"""Open the project's ledger (``.oloproof/`` beside oloproof.yaml) with Oloproof's indexes."""

from __future__ import annotations

from pathlib import Path

from ledger import Event, Ledger, LedgerError, open_ledger
from oloproof.errors import LedgerAccessError, UnknownIdError
from oloproof.events import index_entries
from oloproof.idhints import unknown_id_message

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


def load_event(ledger: Ledger, text: str, kind: str, noun: str) -> tuple[str, Event]:
    """The event of type ``kind`` named by ``text`` (address, prefix or ref) and its address.

    Anything else is an ``UnknownIdError`` naming what was found, e.g. "… is a run event, not a
    comparison".
    """
    try:
        address = ledger.resolve(text)
    except LedgerError as exc:
        raise UnknownIdError(unknown_id_message(text, str(exc))) from None
    event = ledger.get(address)
    if event.type != kind:
        raise UnknownIdError(f"{text} is a {event.type} event, not {noun}")
    return address, event
