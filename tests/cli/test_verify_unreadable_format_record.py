"""A project's ledger whose format record was damaged on disk made `oloproof verify` exit 2, the
code of bad input ("no ledger to check"), with the sentence every command gives: a script
reading the exit code took a ledger that fails verification for a mistyped command. Now verify
lists it as a damaged store and exits 1, as for any damaged file (`--json` too); a ledger of a
newer format, which this version cannot check, still stops with exit 2 and says to upgrade.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cbor2
import pytest
from tests.ledger.raw import tables
from tests.support import oloproof, toy_project


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = toy_project(tmp_path_factory.mktemp("sound") / "p", cases=30)
    assert oloproof("run", cwd=root).code == 0
    return root


def with_format_record(sound: Path, tmp_path: Path, record: bytes) -> Path:
    """A copy of the project whose format record is ``record``."""
    root = tmp_path / "p"
    shutil.copytree(sound, root, ignore=shutil.ignore_patterns("lock.mdb"))
    with tables(root / ".oloproof") as (txn, dbs):
        txn.put(b"format", record, db=dbs[b"meta"])
    return root


@pytest.mark.parametrize(
    ("record", "said"),
    [
        (b"\xff\x00junk", "has an unreadable format record"),
        (cbor2.dumps({"format": "two"}), "has an unreadable format record"),
        (cbor2.dumps({"format": 0, "extensions": []}), "declares ledger format 0"),
    ],
)
def test_a_damaged_format_record_fails_verification(
    sound: Path, tmp_path: Path, record: bytes, said: str
) -> None:
    root = with_format_record(sound, tmp_path, record)

    done = oloproof("verify", cwd=root)

    assert done.code == 1 and done.err == "", done.err
    assert done.out.splitlines()[0] == f"damaged store: {root / '.oloproof'} {said}" + (
        ", which never existed" if "format 0" in said else ""
    )
    assert done.out.endswith(": 1 problem(s)\n"), done.out
    as_json = oloproof("verify", "--json", cwd=root)
    assert as_json.code == 1, as_json.err
    report = json.loads(as_json.out)
    assert report["ok"] is False
    assert [p["kind"] for p in report["problems"]] == ["DamagedStore"]
    runs = oloproof("runs", cwd=root)  # other commands refuse it as before
    assert runs.code == 2 and said in runs.err, runs.err


def test_a_newer_format_is_still_refused_as_unreadable_here(sound: Path, tmp_path: Path) -> None:
    root = with_format_record(sound, tmp_path, cbor2.dumps({"format": 3, "extensions": []}))

    done = oloproof("verify", cwd=root)

    assert (done.code, done.out) == (2, ""), done.out
    where = root / ".oloproof"
    assert done.err == f"error: ledger format 3 at {where}; this oloproof reads ≤2 — upgrade\n"
