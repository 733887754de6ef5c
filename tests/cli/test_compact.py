"""``oloproof ledger compact``: keep what matters, verify the new store, swap it in, report.

A support_rag project with three runs, a diagnosis and a comparison is compacted with each
selector; what is kept must read back exactly as before, what is dropped must be gone, and the
space is reported. A compaction killed in the middle (SIGKILL, at each of its steps before the
swap) leaves the old ledger exactly as it was, and the next one succeeds. A `run`, `runs` or
`inspect` started while a compaction is under way (it is stopped at each of its steps) is
refused before it reads or writes anything, so no run that reported its result is lost.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support import Result, copy_example, oloproof

from oloproof.compaction import compact_project

ADDRESS = re.compile(r"sha256:[0-9a-f]{64}")
RUN_ID = re.compile(r"run_[0-9A-Z]{26}")


def ok(root: Path, *args: str, codes: tuple[int, ...] = (0,)) -> Result:
    done = oloproof(*args, cwd=root)
    assert done.code in codes, f"{args}: exit {done.code}\n{done.out}\n{done.err}"
    return done


def first(pattern: re.Pattern[str], lines: list[str], starting: str) -> str:
    for line in lines:
        found = pattern.search(line)
        if line.startswith(starting) and found:
            return found.group(0)
    raise AssertionError(f"no {starting!r} line in {lines}")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = copy_example("support_rag", tmp_path_factory.mktemp("compact"))
    baseline = first(RUN_ID, ok(root, "run", codes=(1, 3)).lines, "Run")
    diagnosed = ok(
        root,
        "diagnose",
        baseline,
        "--intervention",
        "gold-context",
        "--criterion",
        "answer_correct",
    )
    diagnosis = first(ADDRESS, diagnosed.lines, "Diagnosis")
    config = root / "oloproof.yaml"
    config.write_text(config.read_text().replace("token_budget: 40", "token_budget: 120"))
    candidate = first(RUN_ID, ok(root, "run", codes=(0, 1, 3)).lines, "Run")
    compared = ok(root, "compare", candidate, baseline, "--policy", "compare.yaml", codes=(0, 1, 3))
    comparison = first(ADDRESS, compared.lines, "Comparison")
    newest = first(RUN_ID, ok(root, "run", "--no-cache", codes=(0, 1, 3)).lines, "Run")
    return {
        "root": root,
        "baseline": baseline,
        "candidate": candidate,
        "newest": newest,
        "diagnosis": diagnosis,
        "comparison": comparison,
    }


def copy_of(history: dict[str, object], tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(Path(str(history["root"])), root, ignore=shutil.ignore_patterns("lock.mdb"))
    return root


def runs_in(root: Path) -> set[str]:
    return {row["run_id"] for row in json.loads(ok(root, "runs", "--all", "--json").out)}


def reads(root: Path, *ids: str) -> dict[str, str]:
    return {i: ok(root, "inspect", i).out for i in ids}


def chain_line(done: Result) -> str:
    return next(line for line in done.lines if line.startswith("chain: "))


def data_size(root: Path) -> int:
    return (root / ".oloproof" / "ledger" / "data.mdb").stat().st_size


def test_keep_last_keeps_the_newest_run_only(history: dict[str, object], tmp_path: Path) -> None:
    root = copy_of(history, tmp_path)
    newest = str(history["newest"])
    before, size = reads(root, newest), data_size(root)
    done = ok(root, "ledger", "compact", "--keep-last", "1")
    assert done.lines[0].startswith("kept 1 of 5 runs, 0 of 1 diagnosis, 0 of 1 comparison, ")
    assert done.lines[1].startswith("dropped refs to events not kept: run_")
    sizes = re.fullmatch(
        r"data\.mdb: ([0-9,]+) bytes before, ([0-9,]+) after \((\d+)%\)", done.lines[2]
    )
    assert sizes is not None, done.lines[2]
    assert int(sizes.group(1).replace(",", "")) == size
    assert int(sizes.group(2).replace(",", "")) == data_size(root) < size
    assert done.err.splitlines() == [
        "compact: selecting",
        "compact: writing",
        "compact: verifying",
        "compact: swapping",
    ]
    assert runs_in(root) == {newest}
    assert reads(root, newest) == before
    verified = ok(root, "verify")
    assert verified.lines[-1].endswith(": ok")
    old_head = done.lines[3].rsplit(" ", 1)[1]
    assert (
        f"chain: it began when a history whose head was {old_head} was compacted; heads of that history are not heads of this one"
        in verified.lines
    )


def test_a_kept_comparison_keeps_both_runs_and_what_they_need(
    history: dict[str, object], tmp_path: Path
) -> None:
    root = copy_of(history, tmp_path)
    comparison, diagnosis = str(history["comparison"]), str(history["diagnosis"])
    baseline, candidate = str(history["baseline"]), str(history["candidate"])
    before = reads(root, comparison, diagnosis, baseline, candidate)
    children = runs_in(root) - {baseline, candidate, str(history["newest"])}
    done = ok(root, "ledger", "compact", "--keep", comparison)
    # Both runs, the baseline's diagnosis with its child runs, the comparison itself.
    assert done.lines[0].startswith("kept 4 of 5 runs, 1 of 1 diagnosis, 1 of 1 comparison, ")
    assert runs_in(root) == {baseline, candidate, *children}
    assert reads(root, comparison, diagnosis, baseline, candidate) == before
    assert ok(root, "verify").lines[-1].endswith(": ok")


def test_a_comparison_is_kept_only_with_both_its_runs(
    history: dict[str, object], tmp_path: Path
) -> None:
    root = copy_of(history, tmp_path)
    done = ok(root, "ledger", "compact", "--keep", str(history["candidate"]))
    assert ", 0 of 1 comparison, " in done.lines[0]
    assert runs_in(root) == {str(history["candidate"])}


def test_selectors_are_checked_before_anything_is_done(
    history: dict[str, object], tmp_path: Path
) -> None:
    root = copy_of(history, tmp_path)
    size, data = data_size(root), (root / ".oloproof" / "ledger" / "data.mdb").read_bytes()
    for args, says in (
        ((), "say what to keep: --keep ID (any number of times) or --keep-last N"),
        (("--keep", "run_nope"), "--keep run_nope: no ref named 'run_nope' exists"),
    ):
        done = oloproof("ledger", "compact", *args, cwd=root)
        assert done.code == 2 and done.err.strip() == f"error: {says}", done.err
    assert (
        data_size(root) == size
        and (root / ".oloproof" / "ledger" / "data.mdb").read_bytes() == data
    )


HOLDER = """
import sys
from ledger import open_ledger
ledger = open_ledger(sys.argv[1], create=False)
len(ledger)
print("open", flush=True)
sys.stdin.read()
"""


def test_a_ledger_open_elsewhere_is_not_compacted(
    history: dict[str, object], tmp_path: Path
) -> None:
    root = copy_of(history, tmp_path)
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root / ".oloproof")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        done = oloproof("ledger", "compact", "--keep-last", "1", cwd=root)
        assert holder.stdin is not None
        holder.stdin.close()
    assert done.code == 2, done.out
    assert done.err.strip().endswith(
        f"is open in another process (pid {holder.pid}): compact it when nothing else is using it"
    )
    assert len(runs_in(root)) == 5


@pytest.mark.parametrize("step", ["writing", "verifying", "swapping"])
def test_a_compaction_killed_in_the_middle_leaves_the_old_ledger(
    history: dict[str, object], tmp_path: Path, step: str
) -> None:
    root = copy_of(history, tmp_path)
    data = root / ".oloproof" / "ledger" / "data.mdb"
    before = data.read_bytes()
    head = chain_line(ok(root, "verify"))
    with subprocess.Popen(
        [sys.executable, "-m", "oloproof", "ledger", "compact", "--keep-last", "1"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ},
    ) as compacting:
        assert compacting.stderr is not None
        while (line := compacting.stderr.readline()) != f"compact: {step}\n":
            assert line, "the compaction ended before the step"
        os.kill(compacting.pid, signal.SIGKILL)
        compacting.stderr.read()  # EOF: the command and its child process are both gone
    if step != "swapping":
        assert data.read_bytes() == before  # untouched until the new store verified
    # "swapping" is announced just before the one rename: either ledger may be in place,
    # never a mixture, and whichever it is verifies.
    verified = ok(root, "verify")
    assert verified.lines[-1].endswith(": ok")
    if data.read_bytes() == before:
        assert chain_line(verified) == head and len(runs_in(root)) == 5
    again = ok(root, "ledger", "compact", "--keep-last", "1")  # clears what was left behind
    assert runs_in(root) == {str(history["newest"])}
    assert not (root / ".oloproof" / "compact").exists()
    assert any(line.startswith("data.mdb: ") for line in again.lines), again.out


@pytest.mark.parametrize("step", ["writing", "verifying", "swapping"])
def test_nothing_opens_the_ledger_while_it_is_compacted(
    history: dict[str, object], tmp_path: Path, step: str
) -> None:
    # The compaction runs here, and its progress callback, which it calls as each step starts
    # (holding the ledger alone), runs the other commands as processes of their own: each
    # meets the compaction mid-way, at that step, whatever the machine's speed.
    root = copy_of(history, tmp_path)
    newest = str(history["newest"])
    during: list[Result] = []

    def meanwhile(at: str) -> None:
        if at == step:
            for args in (("run", "--limit", "2"), ("runs", "--all"), ("inspect", newest)):
                during.append(oloproof(*args, cwd=root))

    compacted = compact_project(root, [], 1, progress=meanwhile)
    assert compacted.kinds["run"] == (5, 1)
    # No command claims more than the ledger holds: a run that reported its result is there.
    run = during[0]
    reported = set() if run.code == 2 else set(RUN_ID.findall(run.out)[:1])
    assert reported <= runs_in(root), f"run exit {run.code}: its run {reported} was lost"
    assert ok(root, "verify").lines[-1].endswith(": ok")
    # Each was turned away before it read or wrote anything, naming the compaction's process.
    where = root / ".oloproof"
    for done in during:
        assert done.code == 2 and done.out == "", (done.code, done.out)
        assert done.err == (
            f"error: the ledger at {where} is being compacted by another process "
            f"(pid {os.getpid()}): try again when the compaction is done\n"
        ), done.err
    assert runs_in(root) == {newest}
