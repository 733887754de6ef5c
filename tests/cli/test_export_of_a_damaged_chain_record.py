"""A chain record whose ``first`` field was damaged on disk (one flipped bit) made `ledger
export` of some runs exit 0 with an archive that `ledger import` then refused (`commit 5 of its
chain does not hash to its head`, or `its chain segment does not account for its events`):
export copied the commits without checking them. Now export refuses, exit 2, nothing written,
any archive whose commits do not hash to their heads or leave one of its events to no commit;
what it does write imports.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.ledger.raw import RECORD, SEQ, chain_records, tables
from tests.support import oloproof, toy_project


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = toy_project(tmp_path_factory.mktemp("sound") / "p", cases=30)
    for _ in range(2):
        assert oloproof("run", cwd=root).code == 0
    newest_first = [row["run_id"] for row in json.loads(oloproof("runs", "--json", cwd=root).out)]
    return root, newest_first


def flipped_first(sound: tuple[Path, list[str]], tmp_path: Path, bit: int) -> Path:
    """A copy of the project whose commit of the newer run's case results (the largest commit
    after the first) has bit ``bit`` of its first event number flipped."""
    root = tmp_path / "damaged"
    shutil.copytree(sound[0], root, ignore=shutil.ignore_patterns("lock.mdb"))
    records = chain_records(root / ".oloproof")
    commit, head, first, count = max(records[len(records) // 2 :], key=lambda r: r[3])
    with tables(root / ".oloproof") as (txn, dbs):
        txn.put(SEQ.pack(commit), RECORD.pack(head, first ^ 1 << bit, count), db=dbs[b"chain"])
    assert oloproof("verify", cwd=root).code == 1
    return root


@pytest.mark.parametrize(
    ("bit", "refusal"),
    [
        (0, "of the ledger at {} does not hash to its recorded head"),
        (20, "the chain of the ledger at {} records no commit that added 30 of the events"),
    ],
)
def test_an_export_the_chain_cannot_vouch_for_is_refused(
    sound: tuple[Path, list[str]], tmp_path: Path, bit: int, refusal: str
) -> None:
    root = flipped_first(sound, tmp_path, bit)
    archive = tmp_path / "newer.oloarchive"

    done = oloproof("ledger", "export", sound[1][0], "--to", str(archive), cwd=root)

    assert done.code == 2 and done.out == "", done.out
    assert done.err.startswith("error: ") and len(done.err.splitlines()) == 1, done.err
    assert refusal.format(root / ".oloproof") in done.err
    assert done.err.endswith("; verify the ledger before exporting it\n"), done.err
    assert not archive.exists() and list(tmp_path.glob(".*partial")) == []
    everything = oloproof("ledger", "export", "--all", "--to", str(archive), cwd=root)
    assert everything.code == 2 and not archive.exists(), everything.err


@pytest.mark.parametrize("bit", [0, 20])
def test_what_export_still_writes_imports(
    sound: tuple[Path, list[str]], tmp_path: Path, bit: int
) -> None:
    root = flipped_first(sound, tmp_path, bit)
    archive = tmp_path / "older.oloarchive"

    done = oloproof("ledger", "export", sound[1][1], "--to", str(archive), cwd=root)

    assert done.code == 0, done.err
    elsewhere = toy_project(tmp_path / "elsewhere", cases=30)
    imported = oloproof("ledger", "import", str(archive), cwd=elsewhere)
    assert imported.code == 0, imported.err
    assert oloproof("verify", cwd=elsewhere).code == 0
