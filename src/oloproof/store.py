"""Open the project's ledger (``.oloproof/`` beside oloproof.yaml) as Oloproof's.

``APPLICATION`` tells the ledger who reads it: the name its messages use, the magic Oloproof's
archives start with (the bytes archives have always had, so older archives stay readable), the
indexes (``events.index_entries``, under the name ``events.INDEXES``), the upcasting of old
schemas (``events.upcast``) and the texts put back into the events that refer to them
(``stored_form.expand``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from ledger import (
    Application,
    DamagedStoreError,
    Event,
    Ledger,
    LedgerError,
    ReadOnlyFileSystemError,
    StaleIndexesError,
    on_read_only_file_system,
    open_ledger,
)
from oloproof.callargs import flag
from oloproof.callargs import path as path_argument
from oloproof.display import an_event
from oloproof.errors import ConfigError, LedgerAccessError, UnknownIdError
from oloproof.events import INDEXES, RUN, RUN_ID_PREFIX, SCHEMAS, index_entries, upcast
from oloproof.filekinds import lookup_fault
from oloproof.idhints import malformed_id_message, unknown_id_message
from oloproof.stored_form import expand
from oloproof.usercode import recordable

LEDGER_DIR = ".oloproof"

ARCHIVE_MAGIC: Final = b"\x89oloproof-archive\r\n\x1a\n"
APPLICATION: Final = Application(
    name="oloproof",
    archive_magic=ARCHIVE_MAGIC,
    indexer=index_entries,
    upcast=upcast,
    indexes=INDEXES,
    expand=expand,
)

DAMAGE_HINT: Final = "`oloproof verify` lists what is damaged"
# A read-only command meeting indexes an older version filed: any command that writes refiles them.
STALE_HINT: Final = "`oloproof ledger rebuild-indexes` rebuilds them now"
# On a read-only file system no opening can refile them, that one included.
READ_ONLY_STALE_HINT: Final = (
    "copy the project somewhere writable and run `oloproof ledger rebuild-indexes` in the copy"
)


def open_project_ledger(
    root: str | Path, *, create: bool = True, only_reads: bool = False
) -> Ledger:
    """The ledger of the project in ``root``; ``create=False`` refuses to make a new one.

    A command that only reads says so (``only_reads``): a ledger on a read-only file system
    is then opened read-only (``open_read_only``). Otherwise such a ledger is refused, as
    nothing can be recorded in it; on writable media both open it for writing, which may
    bring its format and indexes up to date.
    """
    for name, value in (("create", create), ("only_reads", only_reads)):
        flag(name, value, where="open_project_ledger()")  # "no" would read as true
    root = path_argument(
        "root", root, "the path of a project folder", where="open_project_ledger()"
    )
    if root.name == LEDGER_DIR:  # else a ledger of its own was made inside the project's
        raise ConfigError(
            f"root is a project's folder, not its ledger's: {root} is the ledger of "
            f"{root.parent}; give that",
            where="open_project_ledger()",
        )
    path = root / LEDGER_DIR
    shown = recordable(str(path))
    if shown != str(path):
        # Bytes that are not UTF-8 (Python reads them as lone surrogates): LMDB takes its
        # folder as UTF-8 text, and the ledger records paths as text.
        raise LedgerAccessError(
            f"the ledger at {shown} cannot be opened: its path holds bytes that are not UTF-8 "
            "text (written here as \\udcXX); rename the folder"
        )
    fault = lookup_fault(path)  # else Path.exists below raised a bare OSError
    if fault is not None:
        raise LedgerAccessError(f"the ledger at {path} cannot be opened: {fault}")
    if not create and not path.exists():
        raise UnknownIdError(
            f"no ledger in {root} (expected {path}); run `oloproof run` there first"
        )
    try:
        return open_kept(path, create=create, only_reads=only_reads)
    except ReadOnlyFileSystemError:
        raise LedgerAccessError(
            f"the ledger at {path} is on a read-only file system: nothing was recorded "
            "(commands that only read it, such as `verify`, `runs` and `inspect`, work there)"
        ) from None
    except DamagedStoreError as exc:
        raise LedgerAccessError(str(exc), hint=DAMAGE_HINT) from None
    except LedgerError as exc:
        raise LedgerAccessError(str(exc)) from None


def open_kept(path: Path, *, create: bool, only_reads: bool) -> Ledger:
    """The ledger kept in ``path`` (a project's ``.oloproof``), as ``open_project_ledger``
    opens it, but with the ledger's errors raised as they are, for a caller to whom a damaged
    store is a finding rather than a failure (``oloproof verify``)."""
    if only_reads and on_read_only_file_system(path):
        return open_read_only(path)
    return open_ledger(path, app=APPLICATION, create=create)


def open_read_only(path: Path) -> Ledger:
    """The ledger kept in ``path`` (a project's ``.oloproof``), opened read-only. Indexes an
    older version filed are refused (``LedgerAccessError``) with what to do about them, which
    depends on whether the file system can take rebuilt ones; any other ``LedgerError`` is
    raised as it is."""
    try:
        return open_ledger(path, app=APPLICATION, readonly=True)
    except StaleIndexesError as exc:
        hint = READ_ONLY_STALE_HINT if on_read_only_file_system(path) else STALE_HINT
        raise LedgerAccessError(str(exc), hint=hint) from None


def resolve_name(ledger: Ledger, text: str) -> str:
    """The address ``text`` names (an address, a prefix or a ref), or ``UnknownIdError``.

    A run id whose ref never arrived (an import cut short writes refs last), while its run
    event, which ``oloproof runs`` lists, did, is found by that event. A run id's ref that
    names anything but that run's event (a damaged or rewritten ref) is refused
    (``LedgerAccessError``): read through it, a report would show another run under this id.
    Text that can name nothing (empty, white space around it, a malformed address) is refused
    first (``malformed_id_message``).
    """
    malformed = malformed_id_message(text)
    if malformed is not None:
        raise UnknownIdError(malformed)
    try:
        address = ledger.resolve(text)
    except LedgerError as exc:
        if text.startswith(RUN_ID_PREFIX):
            for address, event in ledger.events(RUN):
                if event.body.get("run_id") == text:
                    return address
        raise UnknownIdError(unknown_id_message(text, str(exc))) from None
    if text.startswith(RUN_ID_PREFIX):
        wrong = misnamed_run(text, ledger.get(address))
        if wrong is not None:
            raise LedgerAccessError(f"the ledger's ref {text} {wrong}", hint=DAMAGE_HINT)
    return address


def misnamed_run(run_id: str, event: Event) -> str | None:
    """What the event a run id's ref names is instead of that run's event (``names the run
    event of run_B``), or None when it is that run's. Another program's event in a shared
    ledger is not Oloproof's to judge (None): read as a run, it is refused as not one."""
    if event.type not in SCHEMAS:
        return None
    if event.type != RUN:
        return f"names a {event.type} event, not the run event of {run_id}"
    named = event.body.get("run_id")
    return None if named == run_id else f"names the run event of {named}, not of {run_id}"


def load_event(ledger: Ledger, text: str, kind: str, noun: str) -> tuple[str, Event]:
    """The event of type ``kind`` named by ``text`` (address, prefix or ref) and its address.

    Anything else is an ``UnknownIdError`` naming what was found, e.g. "… is a run event, not a
    comparison".
    """
    address = resolve_name(ledger, text)
    event = ledger.get(address)
    if event.type != kind:
        raise UnknownIdError(f"{text} is {an_event(event.type)}, not {noun}")
    return address, event
