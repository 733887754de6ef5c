"""`oloproof compare` end to end: real runs of both examples in a subprocess, golden output.

Each scenario copies an example into a temp dir, runs the baseline, makes the spec's candidate
change, runs again and compares. Addresses and run ids differ per run and are normalised; every
other character must match the tutorial (blackbox_rag) and the RAG guide (support_rag).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
EXAMPLES = REPO / "examples"

ADDRESS = re.compile(r"sha256:[0-9a-f]{64}")

BLACKBOX_GOLDEN = """\
Comparison sha256:ADDRESS of run_CAND against run_BASE · 15 paired cases
answer_correct: +6.7 points [-26.5, +40.8] · 15 paired · 0 missing · 0 excluded
hit_rate_at_2: +7.7 points [-29.8, +45.5] · 13 paired · 0 missing · 2 excluded
  excluded 2: no_relevance_labels
recall_at_2: +7.7 points [-29.8, +45.5] · 13 paired · 0 missing · 2 excluded
  excluded 2: no_relevance_labels
citations_valid: +6.7 points [-26.5, +40.8] · 15 paired · 0 missing · 0 excluded
20 exploratory slice differences not shown; add --slices to list them
Decisions
  answers-not-worse  answer_correct  non-inferiority, margin 5.0 points  INSUFFICIENT_EVIDENCE  interval_overlaps_margin
    about 38 more paired cases would decide it, if the difference holds (53 in total at 7% discordance)
  citations-not-worse  citations_valid  non-inferiority, margin 2.0 points  INSUFFICIENT_EVIDENCE  interval_overlaps_margin
    about 68 more paired cases would decide it, if the difference holds (83 in total at 7% discordance)
Gate: BLOCK (exit 3)
"""

SUPPORT_METRICS = """\
Comparison sha256:ADDRESS of run_CAND against run_BASE · 13 paired cases
answer_correct: +0.0 points [-33.6, +33.6] · 13 paired · 0 missing · 0 excluded
hit_rate_at_2: +0.0 points [-33.6, +33.6] · 13 paired · 0 missing · 0 excluded
recall_at_2: +0.0 points [-33.6, +33.6] · 13 paired · 0 missing · 0 excluded
ndcg_at_6: +0.0 points [-33.6, +33.6] · 13 paired · 0 missing · 0 excluded
citations_valid: +0.0 points [-33.6, +33.6] · 13 paired · 0 missing · 0 excluded
"""

SUPPORT_DECISIONS = """\
Decisions
  answers-not-worse  answer_correct  non-inferiority, margin 5.0 points  INSUFFICIENT_EVIDENCE  interval_overlaps_margin
  citations-not-worse  citations_valid  non-inferiority, margin 2.0 points  INSUFFICIENT_EVIDENCE  interval_overlaps_margin
Gate: BLOCK (exit 3)
"""


def oloproof(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "oloproof", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def run_id_of(project: Path) -> str:
    done = oloproof("run", "--json", cwd=project)
    assert done.returncode in (0, 1, 3), done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    assert isinstance(run_id, str)
    return run_id


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path.name} no longer contains {old!r}"
    path.write_text(text.replace(old, new), encoding="utf-8")


@dataclass(frozen=True)
class Project:
    root: Path
    candidate: str
    baseline: str

    def compare(self, *extra: str) -> subprocess.CompletedProcess[str]:
        return oloproof("compare", self.candidate, self.baseline, *extra, cwd=self.root)

    def normalise(self, text: str) -> str:
        text = text.replace(self.candidate, "run_CAND").replace(self.baseline, "run_BASE")
        return ADDRESS.sub("sha256:ADDRESS", text)


def make_project(tmp: Path, example: str, change: tuple[str, str, str]) -> Project:
    root = tmp / example
    shutil.copytree(
        EXAMPLES / example, root, ignore=shutil.ignore_patterns(".oloproof", "__pycache__")
    )
    baseline = run_id_of(root)
    edit(root / change[0], change[1], change[2])
    candidate = run_id_of(root)
    return Project(root, candidate, baseline)


@pytest.fixture(scope="module")
def blackbox_runs(tmp_path_factory: pytest.TempPathFactory) -> Project:
    change = ("app.py", "EXPAND_QUERY = False", "EXPAND_QUERY = True")
    return make_project(tmp_path_factory.mktemp("compare"), "blackbox_rag", change)


@pytest.fixture(scope="module")
def support_runs(tmp_path_factory: pytest.TempPathFactory) -> Project:
    change = ("oloproof.yaml", "token_budget: 40", "token_budget: 120")
    return make_project(tmp_path_factory.mktemp("compare"), "support_rag", change)


# ------------------------------------------------------------------------------- golden


def test_blackbox_candidate_against_baseline(blackbox_runs: Project) -> None:
    done = blackbox_runs.compare("--policy", "compare.yaml")
    assert done.stderr == ""
    assert blackbox_runs.normalise(done.stdout) == BLACKBOX_GOLDEN
    assert done.returncode == 3


def test_support_rag_token_budget_experiment(support_runs: Project) -> None:
    done = support_runs.compare("--policy", "compare.yaml")
    assert done.stderr == ""
    out = support_runs.normalise(done.stdout)
    assert out.startswith(SUPPORT_METRICS)
    assert out.endswith(SUPPORT_DECISIONS)
    assert "more paired cases" not in out  # no discordant pair, so no planning line
    middle = out[len(SUPPORT_METRICS) : -len(SUPPORT_DECISIONS)]
    assert re.fullmatch(
        r"\d+ exploratory slice differences not shown; add --slices to list them\n", middle
    )
    assert done.returncode == 3


def test_slices_are_listed_on_request(blackbox_runs: Project) -> None:
    done = blackbox_runs.compare("--slices")
    lines = done.stdout.splitlines()
    assert "20 exploratory slice differences (they never gate)" in lines
    assert (
        "  metadata.topic=billing  answer_correct: +25.0 points [-65.9, +88.1] · 4 paired" in lines
    )
    assert (
        "  metadata.topic=account  answer_correct: +0.0 points "
        "(fewer than 4 paired; no interval) · 3 paired"
    ) in lines
    assert sum(line.startswith("  metadata.topic=") for line in lines) == 20


def test_without_a_policy_nothing_is_decided(blackbox_runs: Project) -> None:
    done = blackbox_runs.compare()
    assert done.returncode == 0
    assert "Decisions" not in done.stdout and "Gate:" not in done.stdout
    assert blackbox_runs.normalise(done.stdout) == BLACKBOX_GOLDEN.split("Decisions\n")[0]


# ----------------------------------------------------------------- the recorded comparison


def test_inspect_prints_the_comparison_again(blackbox_runs: Project) -> None:
    done = blackbox_runs.compare("--policy", "compare.yaml")
    address = ADDRESS.search(done.stdout)
    assert address is not None
    again = oloproof("inspect", address.group(0)[:20], cwd=blackbox_runs.root)
    assert again.returncode == 0, again.stderr
    assert again.stdout == done.stdout


def test_json_is_the_recorded_body(blackbox_runs: Project) -> None:
    done = blackbox_runs.compare("--policy", "compare.yaml", "--json")
    assert done.returncode == 3
    data = json.loads(done.stdout)
    assert data["candidate"]["run_id"] == blackbox_runs.candidate
    assert data["baseline"]["run_id"] == blackbox_runs.baseline
    assert data["paired_cases"] == 15
    assert [r["metric"] for r in data["metrics"]] == [
        "answer_correct",
        "hit_rate_at_2",
        "recall_at_2",
        "citations_valid",
    ]
    assert data["gate"] == {"blocked": True, "exit_code": 3}
    assert data["policy_path"] == str((blackbox_runs.root / "compare.yaml").resolve())
    again = oloproof("inspect", data["address"], "--json", cwd=blackbox_runs.root)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == data


# ------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("run_00000000000000000000000000", "BASE"), "run_00000000000000000000000000"),
        (("CAND", "BASE", "--policy", "missing.yaml"), "missing.yaml"),
        (("CAND", "BASE", "--policy", "policy.yaml"), "policy.yaml"),
        # A run against itself shows no difference whatever it holds: a gate on it says nothing.
        (("CAND", "CAND", "--policy", "compare.yaml"), "the same run"),
        (("latest", "CAND", "--policy", "compare.yaml"), "the same run"),
    ],
)
def test_bad_input_exits_2_with_one_sentence(
    blackbox_runs: Project, args: tuple[str, ...], needle: str
) -> None:
    names = {"CAND": blackbox_runs.candidate, "BASE": blackbox_runs.baseline}
    done = oloproof("compare", *(names.get(a, a) for a in args), cwd=blackbox_runs.root)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith("error: ") and needle in done.stderr


def test_compare_is_a_registered_command(tmp_path: Path) -> None:
    done = oloproof("compare", "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "--policy" in done.stdout


# ------------------------------------------------------------- rendering, without a subprocess


def _result(case_id: str, verdict: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "case_id": case_id,
        "input_key": extra.pop("input_key", f"key-{case_id}"),
        "status": extra.pop("status", "ok"),
        "verdicts": {"answer_correct": verdict},
        "metadata": {},
        **extra,
    }


def _stored(run_id: str) -> Any:
    from oloproof.stored_runs import StoredRun

    body = {
        "run_id": run_id,
        "evaluators": [{"criterion": "answer_correct", "kind": "pass_fail", "spec": {}}],
        "slices": [],
        "min_slice_support": 4,
    }
    return StoredRun(run_id, "sha256:" + "0" * 64, body)


def _lines(
    cand: list[dict[str, Any]], base: list[dict[str, Any]], rules: list[dict[str, Any]]
) -> list[str]:
    from oloproof.cli.compare_cmd import comparison_lines
    from oloproof.compare import build_comparison
    from oloproof.config import ComparePolicy

    policy = ComparePolicy.model_validate({"version": 1, "rules": rules}) if rules else None
    body = build_comparison(_stored("run_c"), cand, _stored("run_b"), base, policy=policy)
    return comparison_lines("sha256:" + "1" * 64, body)


PASS: dict[str, Any] = {"s": "pass"}
FAIL: dict[str, Any] = {"s": "fail"}


def test_unpaired_cases_are_listed_and_counted_missing() -> None:
    base = [_result(f"c{i}", PASS) for i in range(8)] + [_result("moved", PASS, input_key="a")]
    cand = [_result("c0", FAIL), _result("moved", PASS, input_key="b")]
    cand += [_result(f"new{i}", PASS) for i in range(7)]
    lines = _lines(cand, base, [])
    assert lines[0].endswith(" · 1 paired case")
    assert lines[1] == "not paired 1: input differs (moved)"
    assert lines[2] == "not paired 7: only in candidate (new0, new1, new2, new3, new4 and 2 more)"
    assert lines[3] == "not paired 7: only in baseline (c1, c2, c3, c4, c5 and 2 more)"
    assert lines[4].startswith("answer_correct: -100.0 points [")
    assert lines[4].endswith(" · 1 paired · 15 missing · 0 excluded")
    assert lines[5:] == [
        "  the interval counts the 15 missing against the candidate (lower bound) and for it "
        "(upper bound); the 1 paired alone give [-100.0, +97.5]",
        "  missing 1: input_differs",
        "  missing 7: only_in_baseline",
        "  missing 7: only_in_candidate",
    ]


def test_no_paired_cases_and_the_rules_on_them() -> None:
    rules = [{"id": "same", "metric": "answer_correct", "equivalence": {"margin": 2.5}}]
    lines = _lines([_result("a", PASS)], [_result("b", PASS)], rules)
    assert "answer_correct: no paired cases · 2 missing · 0 excluded" in lines
    assert (
        "  same  answer_correct  equivalence, margin 2.5 points  INSUFFICIENT_EVIDENCE  "
        "no_paired_cases"
    ) in lines
    # block_on (the default) lists INSUFFICIENT_EVIDENCE: the line says only what was paired.
    assert lines[-2:] == [
        "Gate: BLOCK (exit 3)",
        "No case was paired: 1 only in candidate and 1 only in baseline, so no rule had a pair "
        "to decide on",
    ]


def test_a_decided_rule_and_the_passing_gate() -> None:
    cases = [_result(f"c{i}", PASS) for i in range(200)]
    rules = [{"id": "better", "metric": "answer_correct", "superiority": {"margin": 1}}]
    lines = _lines(cases, cases, rules)
    assert lines[-2:] == [
        "  better  answer_correct  superiority, margin 1.0 points  INSUFFICIENT_EVIDENCE  "
        "interval_overlaps_margin",
        "Gate: BLOCK (exit 3)",
    ]
    rules = [{"id": "no-worse", "metric": "answer_correct", "non_inferiority": {"margin": 50}}]
    lines = _lines(cases, cases, rules)
    assert lines[-2:] == [
        "  no-worse  answer_correct  non-inferiority, margin 50.0 points  PASS  "
        "interval_above_margin",
        "Gate: PASS (exit 0)",
    ]


def test_planning_beyond_the_search_limit() -> None:
    base = [_result(f"c{i}", PASS) for i in range(15)]
    cand = [_result("c0", FAIL), *base[1:]]
    rules = [{"id": "no-worse", "metric": "answer_correct", "non_inferiority": {"margin": 2}}]
    lines = _lines(cand, base, rules)
    assert lines[-2] == (
        "    more than 100,000 paired cases would be needed to show it non-inferior, if the "
        "difference holds; the difference seen is worse than the margin, so more cases would "
        "rather decide it as a FAIL"
    )
