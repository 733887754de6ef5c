"""An import sets the archive's refs in its last commit, after its events. Another process that
set one of them in between (a second import of the same archive, a run ending and moving
`latest`) made that commit fail as a lost compare-and-swap: the import ended in a
`RefConflictError` ("ref 'latest' was expected to hold no value") with every event written but
none of its refs, not even those nobody else had touched.

The other process is real: a child process sets the ref through its own `Ledger` at the moment
the import is about to write its refs (the one hook here is that timing)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ledger import Event, Links, RefConflictError, export_archive, import_archive, open_ledger
from ledger.store import Ledger

SET_REF = """
import sys
from ledger import open_ledger
with open_ledger(sys.argv[1], create=False) as ledger:
    ledger.set_ref(sys.argv[2], sys.argv[3])
"""


def _archive(tmp_path: Path) -> tuple[Path, str, str]:
    """An archive of an event and the one it links to, with a ref ``kept`` to it (which must
    not move) and a default ``latest``; and the addresses of the two."""
    with open_ledger(tmp_path / "source") as source:
        shared = source.put(Event("note", 1, {"n": 0}))
        address = source.put(Event("note", 1, {"n": 1}, [shared]))
        source.set_ref("kept", address)
        source.set_ref("latest", address)
        to = tmp_path / "a.archive"
        export_archive(source, ["kept"], to, links=Links(defaults=lambda a, e: ["latest"]))
    return to, address, shared


def _set_meanwhile(monkeypatch: pytest.MonkeyPatch, path: Path, name: str, address: str) -> None:
    """Have another process set ``name`` just before the import writes its refs."""
    commit = Ledger._commit_imported

    def commit_then(
        self: Ledger,
        events: list[tuple[bytes, bytes, tuple[bytes, ...]]],
        refs: list[tuple[str, str]],
    ) -> int:
        if refs and not events:
            subprocess.run([sys.executable, "-c", SET_REF, str(path), name, address], check=True)
        return commit(self, events, refs)

    monkeypatch.setattr(Ledger, "_commit_imported", commit_then)


def test_a_ref_another_process_set_to_the_same_event_is_not_a_conflict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive, address, _ = _archive(tmp_path)
    target = tmp_path / "target"
    with open_ledger(target) as ledger:
        ledger.put(Event("note", 1, {"n": 1}, [ledger.put(Event("note", 1, {"n": 0}))]))
    _set_meanwhile(monkeypatch, target, "kept", address)
    with open_ledger(target) as ledger:
        done = import_archive(ledger, archive)
        assert ledger.refs() == [("kept", address), ("latest", address)]
    assert (done.refs, done.new_refs) == (2, 1)


def test_a_default_ref_another_process_set_meanwhile_is_left_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive, address, shared = _archive(tmp_path)
    target = tmp_path / "target"
    with open_ledger(target) as ledger:
        ledger.put(Event("note", 1, {"n": 0}))
    _set_meanwhile(monkeypatch, target, "latest", shared)
    with open_ledger(target) as ledger:
        done = import_archive(ledger, archive)
        assert ledger.refs() == [("kept", address), ("latest", shared)]
    assert (done.new, done.refs, done.new_refs) == (1, 2, 1)


def test_a_ref_another_process_moved_elsewhere_is_still_a_conflict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive, _, shared = _archive(tmp_path)
    target = tmp_path / "target"
    with open_ledger(target) as ledger:
        ledger.put(Event("note", 1, {"n": 0}))
    _set_meanwhile(monkeypatch, target, "kept", shared)
    with open_ledger(target) as ledger, pytest.raises(RefConflictError):
        import_archive(ledger, archive)
    with open_ledger(target) as ledger:
        assert ledger.refs() == [("kept", shared)]
