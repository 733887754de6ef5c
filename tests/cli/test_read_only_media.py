"""A ledger on a read-only file system (a WORM archive, a read-only mount of a CI artifact, a
disc): every command that only reads works there as it does on a writable copy, and every
command that writes is refused with one sentence, exit 2, before anything is done.

The file system is a real one, read-only even to root: the project is bind-mounted read-only
in a mount namespace of its own (``unshare``), where the command then runs. The test is
skipped where this machine does not allow that.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

import pytest
from tests.support import (
    Result,
    copy_example,
    oloproof,
    on_read_only_mount,
    read_only_mounts_refused,
)

from ledger import open_ledger
from oloproof import events as ev


def read_only(project: Path, mount: Path, *args: str) -> Result:
    """``oloproof ARGS`` in ``mount``, where ``project`` is mounted read-only."""
    return on_read_only_mount(project, mount, sys.executable, "-m", "oloproof", *args)


@pytest.fixture(scope="module")
def can_mount(tmp_path_factory: pytest.TempPathFactory) -> None:
    refused = read_only_mounts_refused(tmp_path_factory.mktemp("probe"))
    if refused is not None:
        pytest.skip(refused)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, can_mount: None) -> tuple[Path, str]:
    """The blackbox_rag example with one finished run, and the run's id."""
    root = copy_example("blackbox_rag", tmp_path_factory.mktemp("ro"))
    done = oloproof("run", cwd=root)
    assert done.code == 1, done.out + done.err  # the example's gate blocks on a FAIL
    return root, done.lines[0].split()[1]


def files(root: Path) -> dict[str, str]:
    """Every file under ``root`` and the SHA-256 of its bytes."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


READS = [
    ("verify",),
    ("runs",),
    ("runs", "--json"),
    ("inspect", "RUN"),
    ("inspect", "RUN", "--case", "money_back"),
    ("inspect", "RUN", "--failures"),
    ("inspect", "RUN", "--json"),
    ("run", "--dry-run"),
]


@pytest.mark.parametrize("args", READS, ids=" ".join)
def test_a_command_that_reads_prints_what_it_prints_on_writable_media(
    project: tuple[Path, str], tmp_path: Path, args: tuple[str, ...]
) -> None:
    root, run_id = project
    args = tuple(run_id if a == "RUN" else a for a in args)
    ledger_files = (root / ".oloproof" / "ledger").iterdir()
    # The lock files a run leaves are there: they are opened for reading and locked so.
    assert {p.name for p in ledger_files} == {"data.mdb", "lock.mdb", "open.lock"}
    writable = oloproof(*args, cwd=root)
    before = files(root)
    done = read_only(root, tmp_path / "mnt", *args)
    assert (done.code, done.err) == (writable.code, writable.err), done.err
    assert done.out == writable.out
    assert files(root) == before


def test_a_ledger_copied_without_its_lock_files_is_read_and_given_none(
    project: tuple[Path, str], tmp_path: Path
) -> None:
    """What a CI artifact or an archive copy may hold: ``data.mdb`` alone."""
    root, run_id = project
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("lock.mdb", "open.lock", "locks"))
    assert [p.name for p in (copy / ".oloproof" / "ledger").iterdir()] == ["data.mdb"]
    before = files(copy)
    verified = read_only(copy, tmp_path / "mnt", "verify")
    assert verified.code == 0, verified.err
    assert verified.lines[-1] == "checked 121 event(s) and 2 ref(s): ok"
    runs = read_only(copy, tmp_path / "mnt", "runs")
    assert runs.code == 0 and runs.out.startswith(f"{run_id}  ") and "COMPLETE" in runs.out
    assert files(copy) == before


def test_export_writes_its_tables_elsewhere(project: tuple[Path, str], tmp_path: Path) -> None:
    root, run_id = project
    out = tmp_path / "tables"
    done = read_only(
        root, tmp_path / "mnt", "export", run_id, "--format", "csv", "--output", str(out)
    )
    assert done.code == 0, done.err
    assert done.out == f"Exported {run_id} as csv: {out / 'verdicts.csv'}, {out / 'cases.csv'}\n"
    writable = tmp_path / "writable"
    assert (
        oloproof("export", run_id, "--format", "csv", "--output", str(writable), cwd=root).code == 0
    )
    for name in ("verdicts.csv", "cases.csv"):
        assert (out / name).read_bytes() == (writable / name).read_bytes()


def test_the_bundle_export_names_the_folder_it_cannot_write(
    project: tuple[Path, str], tmp_path: Path
) -> None:
    """The bundle goes inside the project, which is read-only: one sentence, no traceback."""
    root, run_id = project
    mount = tmp_path / "mnt"
    done = read_only(root, mount, "export", run_id)
    bundle = mount / ".oloproof" / "bundles" / run_id
    assert done.code == 2 and done.out == ""
    assert done.err == (
        f"error: cannot write the bundle of {run_id} into {bundle}: Read-only file system "
        "(`--format jsonl --output DIR` writes the run's tables to a folder of your choice)\n"
    )


def test_the_viewer_exports_its_pages_elsewhere(project: tuple[Path, str], tmp_path: Path) -> None:
    root, run_id = project
    site = tmp_path / "site"
    done = read_only(root, tmp_path / "mnt", "view", "--export", str(site), run_id)
    assert done.code == 0, done.err
    assert (
        done.out.startswith("Exported 1 run(s), ")
        and (site / "runs" / run_id / "index.html").exists()
    )


WRITES = [
    ("compare", "RUN", "RUN", "--cases"),
    ("run",),
    ("run", "--resume", "RUN"),
    ("diagnose", "RUN", "--intervention", "gold-context", "--criterion", "answer_correct"),
    ("calibrate", "--evaluator", "answer_correct", "--labels", "labels.jsonl"),
    ("ledger", "rebuild-indexes"),
    ("ledger", "compact", "--keep-last", "1"),
    ("ledger", "import", "ARCHIVE"),
]


@pytest.mark.parametrize("args", WRITES, ids=" ".join)
def test_a_command_that_writes_is_refused_in_one_sentence(
    project: tuple[Path, str], tmp_path: Path, args: tuple[str, ...]
) -> None:
    root, run_id = project
    archive = tmp_path / "run.oloarchive"
    exported = oloproof("ledger", "export", run_id, "--to", str(archive), cwd=root)
    assert exported.code == 0, exported.err
    args = tuple({"RUN": run_id, "ARCHIVE": str(archive)}.get(a, a) for a in args)
    before = files(root)
    mount = tmp_path / "mnt"
    done = read_only(root, mount, *args)
    assert done.code == 2 and done.out == ""
    assert done.err == (
        f"error: the ledger at {mount / '.oloproof'} is on a read-only file system: nothing was "
        "recorded (commands that only read it, such as `verify`, `runs` and `inspect`, work there)\n"
    )
    assert files(root) == before


def test_indexes_an_older_version_filed_are_refused_with_what_to_do(
    project: tuple[Path, str], tmp_path: Path
) -> None:
    """No opening can refile them on a read-only file system; a writable copy can."""
    root, run_id = project
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    new_names = {ev.FAILURES, ev.FAILURES_KIND, ev.FAILURES_CRITERION, ev.RUN_CASE, ev.LINKED_FROM}

    def old_indexer(address: str, event: ev.Event) -> object:
        return [e for e in ev.index_entries(address, event) if e[0] not in new_names]

    with open_ledger(copy / ".oloproof", indexer=old_indexer) as ledger:  # type: ignore[arg-type]
        ledger.rebuild_indexes()  # the indexes an older version wrote, under no rules' name
    mount = tmp_path / "mnt"
    for args in [
        ("verify",),
        ("runs",),
        ("inspect", run_id),
        ("view", "--export", "site", run_id),
        ("run", "--dry-run"),
    ]:
        refused = read_only(copy, mount, *args)
        assert refused.code == 2 and refused.out == "", args
        assert refused.err == (
            f"error: the indexes of the ledger at {mount / '.oloproof'} were filed by an older "
            "version of oloproof, and the read-only file system it is on cannot take rebuilt ones "
            "(copy the project somewhere writable and run `oloproof ledger rebuild-indexes` in "
            "the copy)\n"
        ), args
    # Done as it says, the copy reads on read-only media again.
    assert oloproof("ledger", "rebuild-indexes", cwd=copy).code == 0
    verified = read_only(copy, mount, "verify")
    assert verified.code == 0 and verified.lines[-1] == "checked 121 event(s) and 2 ref(s): ok"
