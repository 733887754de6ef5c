"""A run killed by Ctrl-C, resumed on a full disk, and a new run on that disk: each is refused in
one sentence, exit 2, with nothing recorded, when even the run's lock file cannot be written
(``.oloproof/locks/RUN_ID.lock``, which holds the writer's pid), never a traceback; once there
is room the resume finishes the run.

The full disk is a small tmpfs mounted under the test's folder (needs the right to mount, as
root in a container has; skipped otherwise), filled to its last byte once the ledger is there.
"""

from __future__ import annotations

import errno
import json
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support import Result, interrupt_run, oloproof, tmpfs

from ledger import open_ledger
from oloproof import events as ev

APP = """
import sys, time
from pathlib import Path
from oloproof import system

@system(name="toy", version="1")
def run(case):
    if case["q"] == "q3" and (Path(__file__).parent / "STALL").exists():
        sys.stderr.write("stalled\\n")
        sys.stderr.flush()
        time.sleep(600)  # until the test kills the run
    return {"answer": case["q"]}
"""
CONFIG = """\
system: {name: toy, version: "1", callable: "app:run"}
concurrency: 1
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
policy: policy.yaml
"""
POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"


@pytest.fixture
def device(tmp_path: Path) -> Iterator[Path]:
    """A 4 MB tmpfs."""
    with tmpfs(tmp_path / "device", "4m") as mount:
        yield mount


def _project(root: Path) -> Path:
    root.mkdir()
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "policy.yaml").write_text(POLICY)
    lines = (
        json.dumps({"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}})
        for i in range(8)
    )
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n")
    return root


def _interrupted_run(root: Path) -> str:
    """The id of a run stopped by Ctrl-C while its fourth case runs; it let go of its lock
    file, so a resume has to make one."""
    (root / "STALL").touch()
    code, _, err = interrupt_run(root, "stalled\n", signal.SIGINT)
    assert code == 130, err
    (root / "STALL").unlink()
    with open_ledger(root / ".oloproof") as ledger:
        (run,) = [event.body["run_id"] for _, event in ledger.events(ev.RUN)]
    return str(run)


def _fill(device: Path) -> None:
    with (device / "filler").open("wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


def _stored(root: Path) -> tuple[int, int]:
    """Run events and run_ends in the ledger."""
    with open_ledger(root / ".oloproof", create=False) as ledger:
        return len(ledger.lookup("type", ev.RUN)), len(ledger.lookup("type", ev.RUN_END))


def _refused(done: Result, root: Path, run_id: str | None) -> None:
    assert done.code == 2, (done.code, done.out, done.err)
    assert "Traceback" not in done.err
    (line,) = done.err.splitlines()
    locks = root / ".oloproof" / "locks"
    written = run_id or line.split()[4].rstrip(":")
    assert line == (
        f"error: cannot write run {written}: its lock file {locks / written}.lock could not be "
        f"written (no space left on the device that holds {locks}); nothing was recorded"
    )
    assert not (locks / f"{written}.lock").exists()


def test_a_full_disk_refuses_a_resume_and_a_new_run_in_one_sentence(device: Path) -> None:
    root = _project(device / "project")
    run_id = _interrupted_run(root)
    _fill(device)
    before = _stored(root)
    assert before == (1, 1)
    _refused(oloproof("run", "--resume", run_id, cwd=root), root, run_id)
    _refused(oloproof("run", cwd=root), root, None)
    assert _stored(root) == before
    (device / "filler").unlink()
    resumed = oloproof("run", "--resume", run_id, cwd=root)
    assert resumed.code == 0, resumed.err
    assert _stored(root) == (1, 2)


def test_a_full_disk_refuses_a_compaction_in_one_sentence(device: Path) -> None:
    """A compaction writes its pid into the store's open lock first, for the refusals of the
    commands that meet it to name: on a full device that write fails before anything else."""
    root = _project(device / "project")
    _interrupted_run(root)
    _fill(device)
    done = oloproof("ledger", "compact", "--keep-last", "1", cwd=root)
    assert (done.code, done.out) == (2, ""), done.err
    where = root / ".oloproof"
    assert done.err.splitlines()[-1] == (
        f"error: cannot compact the ledger at {where}: No space left on device "
        f"({where / 'ledger' / 'open.lock'})"
    )
    assert "Traceback" not in done.err
    assert _stored(root) == (1, 1)
