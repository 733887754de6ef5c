"""The judge_gate example end to end: a judge may gate only once it is calibrated.

The real CLI runs in subprocesses inside a copy of the example; the example's own judge server
runs in this process on a free port, and the copied oloproof.yaml is pointed at it. The judge's
key is set in the environment, and must never be written anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support import Result, oloproof, serving_judge_gate

from oloproof.testing import ScriptedJudgeServer

SECRET = "sk-judge-gate-SECRET-5f3a9c"
ENV = {"JUDGE_GATE_KEY": SECRET}

MANUAL_REVIEW = "│ grounded │ groundedness │ MANUAL_REVIEW │ judge_not_calibrated │"
NOT_CALIBRATED = (
    "Judge of grounded: no calibration of this exact judge; record one with: "
    "oloproof calibrate --evaluator groundedness --labels FILE"
)
PASSED = "│ grounded │ groundedness │ PASS     │ interval_above_threshold │"
METRIC = "│ groundedness │ 91.7%    │ [61.5%, 99.8%] │ 11 / 12 observed · 0 missing · 0 excluded │"
CORRECTED = [
    "Judge metrics corrected for the judge's measured errors (Rogan-Gladen; the interval carries "
    "the calibration's own uncertainty)",
    "│ groundedness │ 96.5%     │ [62.3%, 100.0%] │ 11 / 12 judged pass · sensitivity 19/20 · "
    "specificity 20/20 │",
]


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, ScriptedJudgeServer]]:
    with serving_judge_gate(tmp_path) as served:
        yield served


def run(root: Path, *args: str) -> Result:
    return oloproof(*args, cwd=root, env=ENV)


def assert_in_order(lines: list[str], expected: list[str]) -> None:
    position = 0
    for line in expected:
        assert line in lines[position:], f"missing or out of order: {line!r}\n" + "\n".join(lines)
        position = lines.index(line, position) + 1


def test_the_judge_gates_only_once_calibrated(project: tuple[Path, ScriptedJudgeServer]) -> None:
    root, server = project
    outputs: list[Result] = []

    planned = run(root, "run", "--dry-run")
    outputs.append(planned)
    assert planned.code == 0, planned.err
    assert planned.lines[:2] == [
        "Dry run: nothing was executed, judged or recorded.",
        "Cases: 12 of 12 would execute; 0 reused from the execution cache "
        "(no ledger yet, so nothing is cached)",
    ]
    assert (
        "  groundedness (openai word-overlap-judge): at most 12 calls, one per case that would "
        "execute; 0 reused from the judgment cache" in planned.lines
    )
    assert not (root / ".oloproof").exists()
    assert server.requests == []

    first = run(root, "run")
    outputs.append(first)
    assert first.code == 3, first.out + first.err
    assert first.lines[1] == "Gate: BLOCK (exit 3)"
    assert_in_order(first.lines, [MANUAL_REVIEW, NOT_CALIBRATED, METRIC])
    assert not any("corrected" in line for line in first.lines)
    assert len(server.requests) == 12
    assert {r.headers["authorization"] for r in server.requests} == {f"Bearer {SECRET}"}
    usage = next(line for line in first.lines if line.startswith("│ groundedness │ openai"))
    cells = [cell.strip() for cell in usage.strip("│").split("│")]
    assert cells[:4] == ["groundedness", "openai word-overlap-judge", "12", "0"]
    assert cells[6] != "—"  # priced in oloproof.yaml

    calibrated = run(root, "calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl")
    outputs.append(calibrated)
    assert calibrated.code == 0, calibrated.err
    assert "  sensitivity   95.0% [75.1%, 99.9%]  19 / 20" in calibrated.lines
    assert "  specificity  100.0% [83.1%, 100.0%]  20 / 20" in calibrated.lines
    assert "  disagreements: grounded-20" in calibrated.lines
    assert len(server.requests) == 12 + 40

    again = run(root, "run", "--dry-run")
    outputs.append(again)
    assert again.code == 0
    assert (
        "  groundedness (openai word-overlap-judge): 0 calls; 12 reused from the judgment cache"
        in again.lines
    )
    assert any("clears the rule's minimums" in line for line in again.lines)

    second = run(root, "run")
    outputs.append(second)
    assert second.code == 0, second.out + second.err
    assert second.lines[1] == "Gate: PASS (exit 0)"
    assert_in_order(second.lines, [PASSED, METRIC, *CORRECTED])
    assert any(
        line.startswith("Judge of grounded: calibration sha256:")
        and line.endswith(
            "sensitivity ≥ 75.1% (19/20), needs 70.0%; specificity ≥ 83.1% (20/20), needs 80.0%"
        )
        for line in second.lines
    )
    assert "Cache: execution 12 hit/0 miss; judgment 12 hit/0 miss" in second.lines
    usage = next(line for line in second.lines if line.startswith("│ groundedness │ openai"))
    assert [cell.strip() for cell in usage.strip("│").split("│")][2:4] == ["0", "12"]
    assert len(server.requests) == 52  # every judgment came from the cache

    as_json = run(root, "run", "--json")
    outputs.append(as_json)
    report = json.loads(as_json.out)
    assert [row["criterion"] for row in report["corrected"]] == ["groundedness"]
    assert report["corrected"][0]["method"] == "rogan-gladen-clopper-pearson-mc"
    (rule,) = report["rules"]
    calibration = rule["detail"]["judge"]["calibration"]
    assert rule["outcome"] == "PASS" and calibration == report["corrected"][0]["calibration"]
    assert report["judges"][0]["reused"] == 12

    exported = run(root, "export", report["run_id"])
    outputs.append(exported)
    assert exported.code == 0, exported.err
    archive = root / "run.oloarchive"
    archived = run(root, "ledger", "export", report["run_id"], "--to", str(archive))
    outputs.append(archived)
    assert archived.code == 0, archived.err

    inspected = run(root, "inspect", calibration)
    outputs.append(inspected)
    assert inspected.code == 0, inspected.err

    secret = SECRET.encode()
    stored = [p for p in (root / ".oloproof").rglob("*") if p.is_file()]
    assert any(p.name == "data.mdb" for p in stored)
    assert any(p.suffix == ".jsonl" for p in stored)  # the export bundle
    for path in [*stored, archive]:
        assert secret not in path.read_bytes(), path
    for result in outputs:
        assert SECRET not in result.out and SECRET not in result.err


def test_a_changed_judge_needs_its_own_calibration(
    project: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, _ = project
    assert (
        run(root, "calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl").code == 0
    )
    config = root / "oloproof.yaml"
    config.write_text(config.read_text().replace("word-overlap-judge", "word-overlap-judge-2"))
    result = run(root, "run")
    assert result.code == 3, result.out + result.err
    assert MANUAL_REVIEW in result.lines
    assert not any("corrected" in line for line in result.lines)


def test_a_calibration_that_falls_short_is_manual_review(
    project: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, _ = project
    policy = root / "policy.yaml"
    policy.write_text(policy.read_text().replace("min_specificity: 0.80", "min_specificity: 0.90"))
    assert (
        run(root, "calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl").code == 0
    )
    result = run(root, "run")
    assert result.code == 3, result.out + result.err
    assert "│ grounded │ groundedness │ MANUAL_REVIEW │ judge_below_requirement │" in result.lines
    assert any(line.endswith("specificity ≥ 83.1% (20/20), needs 90.0%") for line in result.lines)
    # The calibration exists, so the corrected metric is shown even though it may not gate.
    assert_in_order(result.lines, CORRECTED)
