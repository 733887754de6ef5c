"""Archives carry whole results: every bundled example, exported and imported into an empty
project, reads back there exactly as it did where it was made.

Each example is run for real (the CLI in a subprocess, the judge_gate judge server on a free
port in this process). Then each result is exported on its own (a run, a diagnosis, a
comparison) and the whole ledger with ``--all``, each archive is imported into an empty
project, and ``runs``, ``inspect`` (the report, one case, the failures, the diagnosis, the
comparison) and ``verify`` print there what they printed in the source. A whole-ledger archive
replays the source's commits, so even the chain's head is the source's.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.support import Result, calibrate_judge_gate, copy_example, oloproof, serving_judge_gate

ADDRESS = re.compile(r"sha256:[0-9a-f]{64}")
JUDGE_ENV = {"JUDGE_GATE_KEY": "sk-judge-gate-SECRET-5f3a9c"}


def ok(
    root: Path, *args: str, codes: tuple[int, ...] = (0,), env: dict[str, str] | None = None
) -> Result:
    done = oloproof(*args, cwd=root, env=env)
    assert done.code in codes, f"{args}: exit {done.code}\n{done.out}\n{done.err}"
    return done


def reads(
    root: Path, commands: list[tuple[str, ...]], env: dict[str, str] | None = None
) -> dict[tuple[str, ...], tuple[int, str, str]]:
    """What each read command prints (exit code, stdout, stderr) in the project at ``root``."""
    found = {}
    for command in commands:
        done = oloproof(*command, cwd=root, env=env)
        found[command] = (done.code, done.out, done.err)
    return found


def imported(tmp: Path, name: str, archive: Path) -> Path:
    """An empty project that imported ``archive``."""
    root = tmp / name
    root.mkdir()
    done = ok(root, "ledger", "import", str(archive))
    assert done.err == ""
    return root


def run_id(done: Result) -> str:
    found = re.search(r"run_[0-9A-Z]{26}", done.lines[0])
    assert found is not None, done.out
    return found.group(0)


def export(root: Path, archive: Path, *ids: str) -> str:
    done = ok(root, "ledger", "export", *ids, "--to", str(archive))
    return done.out


def assert_same(
    source: dict[tuple[str, ...], tuple[int, str, str]],
    target: dict[tuple[str, ...], tuple[int, str, str]],
) -> None:
    for command, printed in source.items():
        assert target[command] == printed, f"`oloproof {' '.join(command)}` reads differently"


@dataclass(frozen=True)
class Support:
    root: Path
    baseline: str
    candidate: str
    diagnosis: str
    comparison: str


@pytest.fixture(scope="module")
def support(tmp_path_factory: pytest.TempPathFactory) -> Support:
    root = copy_example("support_rag", tmp_path_factory.mktemp("archives"))
    baseline = run_id(ok(root, "run", codes=(1, 3)))
    diagnosed = ok(
        root,
        "diagnose",
        baseline,
        "--intervention",
        "gold-context",
        "--criterion",
        "answer_correct",
    )
    diagnosis = next(
        ADDRESS.search(line).group(0)  # type: ignore[union-attr]
        for line in diagnosed.lines
        if line.startswith("Diagnosis") and ADDRESS.search(line)
    )
    config = root / "oloproof.yaml"
    config.write_text(config.read_text().replace("token_budget: 40", "token_budget: 120"))
    candidate = run_id(ok(root, "run", codes=(0, 1, 3)))
    compared = ok(root, "compare", candidate, baseline, "--policy", "compare.yaml", codes=(0, 1, 3))
    comparison = next(
        ADDRESS.search(line).group(0)  # type: ignore[union-attr]
        for line in compared.lines
        if line.startswith("Comparison") and ADDRESS.search(line)
    )
    return Support(root, baseline, candidate, diagnosis, comparison)


def run_reads(run: str, case: str) -> list[tuple[str, ...]]:
    return [
        ("inspect", run),
        ("inspect", run, "--json"),
        ("inspect", run, "--case", case),
        ("inspect", run, "--failures"),
    ]


def test_blackbox_run_round_trips(tmp_path: Path) -> None:
    root = copy_example("blackbox_rag", tmp_path)
    run = run_id(ok(root, "run", codes=(1, 3)))
    commands = [("runs",), ("runs", "--json"), ("verify",), *run_reads(run, "money_back")]
    before = reads(root, commands)
    assert before[("verify",)][0] == 0

    out = export(root, tmp_path / "run.oloarchive", run)
    # 89 events of the run and its cases, the 19 distinct passage texts they hold, and the 13
    # cases (expected values with gold passages) their case results refer to.
    assert re.fullmatch(r"exported 121 events to .*run\.oloarchive \([0-9,]+ bytes\)\n", out)
    target = imported(tmp_path, "target", tmp_path / "run.oloarchive")
    # The run was the whole ledger: its id, `latest`, and even the chain's head come along.
    assert_same(before, reads(target, commands))
    assert (target / ".oloproof").is_dir() and not (target / "cases.jsonl").exists()


def test_support_rag_with_a_diagnosis_and_a_comparison_round_trips(
    support: Support, tmp_path: Path
) -> None:
    runs_in = reads(support.root, [("runs", "--json")])[("runs", "--json")][1]
    every_run = [row["run_id"] for row in json.loads(runs_in)]
    commands = [
        ("runs",),
        ("runs", "--json"),
        ("verify",),
        ("verify", "--json"),
        ("inspect", support.diagnosis),
        ("inspect", support.diagnosis, "--json"),
        ("inspect", support.comparison),
        ("inspect", support.comparison, "--json"),
        *(read for run in every_run for read in run_reads(run, "refund_annual")),
    ]
    before = reads(support.root, commands)
    assert before[("verify",)][0] == 0

    export(support.root, tmp_path / "all.oloarchive", "--all")
    assert_same(before, reads(imported(tmp_path, "all", tmp_path / "all.oloarchive"), commands))


def test_a_diagnosis_carries_its_parent_and_child_runs(support: Support, tmp_path: Path) -> None:
    body = json.loads(ok(support.root, "inspect", support.diagnosis, "--json").out)
    children = [child["run_id"] for child in body["body"]["child_runs"]] if "body" in body else []
    children = children or [c["run_id"] for c in body.get("child_runs", [])]
    assert children, body
    commands = [
        ("inspect", support.diagnosis),
        ("inspect", support.diagnosis, "--json"),
        *(
            read
            for run in [support.baseline, *children]
            for read in run_reads(run, "refund_annual")
        ),
    ]
    before = reads(support.root, commands)
    export(support.root, tmp_path / "diagnosis.oloarchive", support.diagnosis)
    target = imported(tmp_path, "diagnosis", tmp_path / "diagnosis.oloarchive")
    assert_same(before, reads(target, commands))
    verified = ok(target, "verify")
    assert verified.lines[-1].endswith(": ok")
    assert "re-derived 1 decision(s), 1 diagnosis(es)" in verified.out


def test_a_comparison_carries_both_runs(support: Support, tmp_path: Path) -> None:
    commands = [
        ("inspect", support.comparison),
        ("inspect", support.comparison, "--json"),
        *(
            read
            for run in (support.candidate, support.baseline)
            for read in run_reads(run, "refund_annual")
        ),
    ]
    before = reads(support.root, commands)
    export(support.root, tmp_path / "comparison.oloarchive", support.comparison)
    target = imported(tmp_path, "comparison", tmp_path / "comparison.oloarchive")
    assert_same(before, reads(target, commands))
    verified = ok(target, "verify")
    # The baseline's diagnosis travels with it (a later diagnose carries its labels over).
    assert "0 problem" not in verified.out and verified.lines[-1].endswith(": ok")
    assert "1 comparison(s)" in verified.out
    listed = json.loads(ok(target, "runs", "--json").out)
    assert {support.candidate, support.baseline} <= {row["run_id"] for row in listed}


def test_a_run_into_a_project_with_runs_of_its_own(support: Support, tmp_path: Path) -> None:
    """`latest` travels only as a default: an import never moves the target's own."""
    target = copy_example("blackbox_rag", tmp_path)
    own = run_id(ok(target, "run", codes=(1, 3)))
    export(support.root, tmp_path / "run.oloarchive", support.baseline)
    done = ok(target, "ledger", "import", str(tmp_path / "run.oloarchive"))
    assert done.lines[0].startswith("imported ")
    latest = json.loads(ok(target, "inspect", "latest", "--json").out)
    assert latest["run_id"] == own
    assert_same(
        reads(support.root, run_reads(support.baseline, "refund_annual")),
        reads(target, run_reads(support.baseline, "refund_annual")),
    )
    assert ok(target, "verify").lines[-1].endswith(": ok")


def test_the_whole_ledger_into_a_project_with_runs_of_its_own(
    support: Support, tmp_path: Path
) -> None:
    """`--all` carries `latest` as a default too (before: as a ref that must not move, so the
    import was refused: `ref 'latest' was expected to hold sha256:… but holds sha256:…`)."""
    target = copy_example("blackbox_rag", tmp_path)
    own = run_id(ok(target, "run", codes=(1, 3)))
    export(support.root, tmp_path / "all.oloarchive", "--all")
    done = ok(target, "ledger", "import", str(tmp_path / "all.oloarchive"))
    assert done.lines[0].startswith("imported ")
    assert json.loads(ok(target, "inspect", "latest", "--json").out)["run_id"] == own
    listed = {row["run_id"] for row in json.loads(ok(target, "runs", "--json").out)}
    assert {own, support.candidate, support.baseline} <= listed
    assert ok(target, "verify").lines[-1].endswith(": ok")
    # Into an empty project, `latest` is set, as the source has it.
    empty = imported(tmp_path, "empty", tmp_path / "all.oloarchive")
    source = json.loads(ok(support.root, "inspect", "latest", "--json").out)["run_id"]
    assert json.loads(ok(empty, "inspect", "latest", "--json").out)["run_id"] == source


@pytest.fixture
def judged(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    with serving_judge_gate(tmp_path) as (root, _server):
        ok(root, "run", codes=(3,), env=JUDGE_ENV)
        calibrate_judge_gate(root, JUDGE_ENV)
        second = run_id(ok(root, "run", env=JUDGE_ENV))
        yield root, second


def test_judge_gate_with_its_calibration_round_trips(
    judged: tuple[Path, str], tmp_path: Path
) -> None:
    root, run = judged
    commands = [("verify",), *run_reads(run, "sync_interval")]
    before = reads(root, commands)
    assert "Judge metrics corrected for the judge's measured errors" in before[("inspect", run)][1]

    export(root, tmp_path / "run.oloarchive", run)
    target = imported(tmp_path, "run", tmp_path / "run.oloarchive")
    for command in commands[1:]:
        assert reads(target, [command])[command] == before[command], command
    verified = ok(target, "verify")
    assert verified.lines[-1].endswith(": ok") and "re-derived 1 decision(s)" in verified.out

    export(root, tmp_path / "all.oloarchive", "--all")
    assert_same(before, reads(imported(tmp_path, "all", tmp_path / "all.oloarchive"), commands))
    # The judge's key never reached an archive.
    for archive in ("run.oloarchive", "all.oloarchive"):
        assert JUDGE_ENV["JUDGE_GATE_KEY"].encode() not in (tmp_path / archive).read_bytes()


def test_exporting_nothing_or_both_is_refused(tmp_path: Path) -> None:
    root = copy_example("blackbox_rag", tmp_path)
    ok(root, "run", codes=(1, 3))
    for args in (("--to", "x.oloarchive"), ("latest", "--all", "--to", "x.oloarchive")):
        done = oloproof("ledger", "export", *args, cwd=root)
        assert done.code == 2 and "Traceback" not in done.err, done.err
    assert not (root / "x.oloarchive").exists()


def test_copy_helper_leaves_no_ledger_behind(tmp_path: Path) -> None:
    """The examples ship without a ledger, so each test above starts from an empty one."""
    root = copy_example("support_rag", tmp_path)
    assert not (root / ".oloproof").exists()
    shutil.rmtree(root)
