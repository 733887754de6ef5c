"""A labels file that gives the judge the same example twice measures it once, not twice.

Each labelled example is one observation of the judge, and the Clopper-Pearson bounds the gate
reads assume as many as there are lines. Two lines the judge reads alike (same answer, same
passages, under other ids) are one question asked twice: it answers both alike, so repeating
one easy human pass and one easy human fail twenty times each used to clear the minimums
(`sensitivity ≥ 83.1% (20/20)`) and let the gate PASS on two examples. Such a file is refused
before any call, naming both lines; a repeat labelled the other way is refused too, as its two
labels cannot both be the truth.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support import oloproof, serving_judge_gate

from oloproof import events as ev
from oloproof.store import LEDGER_DIR, open_project_ledger
from oloproof.testing import ScriptedJudgeServer

ENV = {"JUDGE_GATE_KEY": "sk-repeats-1"}
CALIBRATE = ("calibrate", "--evaluator", "groundedness", "--labels")


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, ScriptedJudgeServer]]:
    with serving_judge_gate(tmp_path) as served:
        yield served


def example_lines(root: Path) -> list[dict[str, object]]:
    text = (root / "labels.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def write(root: Path, name: str, examples: list[dict[str, object]]) -> None:
    lines = "".join(json.dumps(example) + "\n" for example in examples)
    (root / name).write_text(lines, encoding="utf-8")


def calibrations(root: Path) -> list[str]:
    if not (root / LEDGER_DIR).exists():
        return []
    with open_project_ledger(root) as ledger:
        return [address for address, _ in ledger.events(type=ev.CALIBRATION)]


def test_two_examples_repeated_twenty_times_do_not_clear_the_gate(
    project: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, server = project
    examples = example_lines(root)
    grounded, ungrounded = examples[0], examples[20]
    repeated = [
        {**example, "id": f"{prefix}-{i}"}
        for i in range(20)
        for prefix, example in (("pass", grounded), ("fail", ungrounded))
    ]
    write(root, "repeated.jsonl", repeated)
    refused = oloproof(*CALIBRATE, "repeated.jsonl", cwd=root, env=ENV)
    # Was exit 0, "sensitivity 100.0% [83.1%, 100.0%]  20 / 20", and then "Gate: PASS (exit 0)".
    assert refused.code == 2, refused.out + refused.err
    assert refused.out == ""
    assert refused.err == (
        "error: repeated.jsonl, line 3: the judge 'groundedness' reads the same here as in "
        "example 'pass-0' on line 1, so the two would count one observation twice (keep one)\n"
    )
    assert server.requests == []
    assert calibrations(root) == []

    run = oloproof("run", cwd=root, env=ENV)
    assert run.code == 3, run.out + run.err
    assert "│ grounded │ groundedness │ MANUAL_REVIEW │ judge_not_calibrated │" in run.lines


def test_a_repeat_labelled_the_other_way_is_refused(
    project: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, server = project
    examples = example_lines(root)
    # Another annotator's label on the same question, answer and passages (the metadata,
    # which the judge does not read, says who).
    contradicting = {**examples[3], "id": "second-opinion", "label": False}
    contradicting["metadata"] = {"annotator": "b"}
    write(root, "contradicting.jsonl", [*examples, contradicting])
    refused = oloproof(*CALIBRATE, "contradicting.jsonl", cwd=root, env=ENV)
    assert refused.code == 2, refused.out + refused.err
    assert refused.err == (
        "error: contradicting.jsonl, line 41: the judge 'groundedness' reads the same here as "
        "in example 'grounded-04' on line 4, labelled pass there and fail here; one example "
        "cannot be both (settle on one label)\n"
    )
    assert server.requests == []
    assert calibrations(root) == []


def test_examples_the_judge_reads_differently_are_all_counted(
    project: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, _ = project
    done = oloproof(*CALIBRATE, "labels.jsonl", cwd=root, env=ENV)
    assert done.code == 0, done.err
    assert "  labels: labels.jsonl (40 examples)" in done.lines
    assert len(calibrations(root)) == 1
