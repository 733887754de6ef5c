"""`oloproof ledger export --to FILE` writes over nothing but an earlier archive: not the cases
file, not the ledger's own files, and a device is written into rather than replaced."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest
from tests.support import answered_project, oloproof

APP = "def answer(case):\n    return {'answer': case['q']}\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = answered_project(tmp_path / "p", APP, cases=10)
    assert oloproof("run", cwd=root).code == 0
    return root


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("target", ["cases.jsonl", "oloproof.yaml"])
def test_an_archive_is_not_written_over_a_file_of_the_users(project: Path, target: str) -> None:
    before = _digest(project / target)
    done = oloproof("ledger", "export", "latest", "--to", target, cwd=project)
    assert done.code == 2, done.err
    assert done.err == (
        f"error: will not write the archive over {target}: that file is not an archive; give "
        "another path, or remove the file first\n"
    )
    assert _digest(project / target) == before
    assert oloproof("run", cwd=project).code == 0  # the project still reads its files


@pytest.mark.parametrize("name", ["open.lock", "data.mdb", "new.oloarchive"])
def test_an_archive_is_not_written_into_the_ledger(project: Path, name: str) -> None:
    folder = project / ".oloproof" / "ledger"
    target = folder / name if (folder / name).exists() else project / ".oloproof" / name
    before = {p.name: _digest(p) for p in folder.iterdir() if p.name != "lock.mdb"}
    done = oloproof("ledger", "export", "latest", "--to", str(target), cwd=project)
    assert done.code == 2 and "it is inside the ledger" in done.err, done.err
    assert not (project / ".oloproof" / "new.oloarchive").exists()
    assert {p.name: _digest(p) for p in folder.iterdir() if p.name != "lock.mdb"} == before
    assert oloproof("verify", cwd=project).code == 0


def test_an_earlier_archive_is_replaced_and_a_device_written_into(project: Path) -> None:
    for _ in range(2):
        done = oloproof("ledger", "export", "latest", "--to", "run.oloarchive", cwd=project)
        assert done.code == 0, done.err
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    device = project / "null"
    os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # what /dev/null is
    done = oloproof("ledger", "export", "latest", "--to", "null", cwd=project)
    assert done.code == 0, done.err
    assert stat.S_ISCHR(device.stat().st_mode)  # still the device, not a file in its place
