"""``ledger export`` of a ledger holding an event whose bytes no longer hash to its address is
refused, naming the event, and writes no archive. It used to copy the bytes as they were and
exit 0 ("exported 10 events"): the archive was only found to be unusable when an import, later
and elsewhere, refused it."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.ledger.tamper import flip_byte_of
from tests.support import oloproof, toy_project

from oloproof.metrics import case_results
from oloproof.store import open_project_ledger


@pytest.mark.parametrize("asked", [("--all",), ("latest",)])
def test_a_corrupt_event_is_refused_and_no_archive_written(
    tmp_path: Path, asked: tuple[str, ...]
) -> None:
    root = toy_project(tmp_path / "p", cases=30)
    assert oloproof("run", cwd=root).code == 0
    with open_project_ledger(root, create=False) as ledger:
        run_id = ledger.get(ledger.resolve("latest")).body["run_id"]
        address = next(a for a, _ in case_results(ledger, run_id))
        stored = ledger.get_bytes(address)
    flip_byte_of(root / ".oloproof", stored)
    archive = tmp_path / "run.oloarchive"
    done = oloproof("ledger", "export", *asked, "--to", str(archive), cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == f"error: event {address} is corrupt: its stored bytes no longer match it\n"
    assert not archive.exists()
