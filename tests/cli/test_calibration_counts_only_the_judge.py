"""A calibration counts only the verdicts the judge's model gave, through the real CLI.

The judge_gate example runs in a copy, its judge server in this process, switched to a judge
that passes everything. Its specificity is 0 of 20 on the bundled labels. Before the fix, a
labels file whose 20 human fails held their answer under another key than the one the judge
reads got 20 of 20: each was failed by Oloproof, without a call, for having no answer text,
and that fail was counted as the judge's. The calibration cleared the policy and the gate passed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support import oloproof, serving_judge_gate

from oloproof import events as ev
from oloproof.store import open_project_ledger
from oloproof.testing import ScriptedJudgeServer, verdict

ENV = {"JUDGE_GATE_KEY": "sk-test"}
CALIBRATE = ("calibrate", "--evaluator", "groundedness", "--labels")


@pytest.fixture
def always_pass(tmp_path: Path) -> Iterator[tuple[Path, ScriptedJudgeServer]]:
    with serving_judge_gate(tmp_path) as (root, server):
        server.default = verdict(True, "every word is supported")
        yield root, server


def rewrite_labels(root: Path, name: str, change: Callable[[dict[str, Any]], None]) -> Path:
    """The example's labels with ``change`` applied to each human-fail example, as ``name``."""
    lines = []
    for line in (root / "labels.jsonl").read_text(encoding="utf-8").splitlines():
        example = json.loads(line)
        if not example["label"]:
            change(example)
        lines.append(json.dumps(example, ensure_ascii=False))
    path = root / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def answer_as_text_key(example: dict[str, Any]) -> None:
    example["output"] = {"text": example["output"]["answer"]}


def calibrations(root: Path) -> list[str]:
    """The addresses of the calibrations recorded in ``root``'s ledger (none without one)."""
    if not (root / ".oloproof").exists():
        return []
    with open_project_ledger(root) as ledger:
        return [address for address, _ in ledger.events(type=ev.CALIBRATION)]


def test_a_labels_file_without_the_judged_field_is_refused(
    always_pass: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, server = always_pass
    rewrite_labels(root, "l_fieldmissing.jsonl", answer_as_text_key)
    refused = oloproof(*CALIBRATE, "l_fieldmissing.jsonl", cwd=root, env=ENV)
    # Was exit 0: "specificity 100.0% [83.1%, 100.0%]  20 / 20", "0 missing, 0 excluded".
    assert refused.code == 2, refused.out + refused.err
    assert refused.out == ""
    assert refused.err == (
        "error: l_fieldmissing.jsonl, line 21: the output has no 'answer', the field the judge "
        "'groundedness' reads, so this example cannot measure the judge (put the answer text "
        "there, or set the judge's field to where it is)\n"
    )
    assert server.requests == []  # refused before any call
    assert calibrations(root) == []

    run = oloproof("run", cwd=root, env=ENV)
    assert run.code == 3, run.out + run.err  # was 0: "grounded PASS", "Gate: PASS (exit 0)"
    assert run.lines[1] == "Gate: BLOCK (exit 3)"
    assert "│ grounded │ groundedness │ MANUAL_REVIEW │ judge_not_calibrated │" in run.lines


def test_a_refused_labels_file_leaves_the_honest_calibration_in_force(
    always_pass: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, server = always_pass
    honest = oloproof(*CALIBRATE, "labels.jsonl", cwd=root, env=ENV)
    assert honest.code == 0, honest.err
    assert "  specificity    0.0% [0.0%, 16.9%]  0 / 20" in honest.lines
    (recorded,) = calibrations(root)
    rewrite_labels(root, "l_fieldmissing.jsonl", answer_as_text_key)
    assert oloproof(*CALIBRATE, "l_fieldmissing.jsonl", cwd=root, env=ENV).code == 2
    assert calibrations(root) == [recorded]
    assert len(server.requests) == 40  # the honest calibration's calls, none after

    run = oloproof("run", cwd=root, env=ENV)
    assert run.code == 3, run.out + run.err  # was 0: the newer, credited calibration won
    assert "│ grounded │ groundedness │ MANUAL_REVIEW │ judge_below_requirement │" in run.lines
    assert any(
        line.startswith(f"Judge of grounded: calibration {recorded[:19]}")
        and "specificity ≥ 0.0% (0/20), needs 80.0%" in line
        for line in run.lines
    ), run.out


@pytest.mark.parametrize(
    ("output", "what"),
    [
        ({"answer": ["Notes sync across devices every minute."]}, "a list"),
        ({"answer": None}, "null"),
        ({"answer": 7}, "a number"),
        ({"answer": True}, "a boolean"),  # as a case file and an HTTP system's reply say
        ("Notes sync across devices every minute.", None),  # a plain string is read whole
    ],
)
def test_an_answer_that_is_not_text_is_refused(
    always_pass: tuple[Path, ScriptedJudgeServer], output: Any, what: str | None
) -> None:
    root, server = always_pass

    def change(example: dict[str, Any]) -> None:
        example["output"] = output

    rewrite_labels(root, "l_nottext.jsonl", change)
    result = oloproof(*CALIBRATE, "l_nottext.jsonl", cwd=root, env=ENV)
    if what is None:
        assert result.code == 0, result.err
        assert "  specificity    0.0% [0.0%, 16.9%]  0 / 20" in result.lines
        assert len(server.requests) == 40
        return
    assert result.code == 2, result.out + result.err
    assert result.err == (
        f"error: l_nottext.jsonl, line 21: the output's 'answer' is {what}, not the text the "
        "judge 'groundedness' reads, so this example cannot measure the judge (give the answer "
        "as text)\n"
    )
    assert server.requests == []
    assert calibrations(root) == []


def test_excluded_examples_are_never_counted_as_the_judges(
    always_pass: tuple[Path, ScriptedJudgeServer],
) -> None:
    # An exclusion is decided from what the example holds, never from the judge: it counts in
    # neither rate, and a judge whose human fails were all excluded has no specificity at all.
    root, server = always_pass

    def drop_context(example: dict[str, Any]) -> None:
        del example["context"]

    rewrite_labels(root, "l_nocontext.jsonl", drop_context)
    result = oloproof(*CALIBRATE, "l_nocontext.jsonl", cwd=root, env=ENV)
    assert result.code == 0, result.err
    assert "  specificity  no examples (0 / 0)" in result.lines
    assert (
        "  the judge passed 20 of 20 human passes and failed 0 of 0 human fails; "
        "0 missing, 20 excluded"
    ) in result.lines
    assert len(server.requests) == 20
    run = oloproof("run", cwd=root, env=ENV)
    assert run.code == 3, run.out + run.err
    assert "│ grounded │ groundedness │ MANUAL_REVIEW │ judge_below_requirement │" in run.lines


def test_label_ids_that_differ_only_in_unicode_form_are_one_id(
    always_pass: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, server = always_pass
    lines = (root / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    composed, decomposed = json.loads(lines[0]), json.loads(lines[1])
    composed["id"], decomposed["id"] = "caf\u00e9", "cafe\u0301"
    lines[0], lines[1] = json.dumps(composed), json.dumps(decomposed)
    (root / "l_ids.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = oloproof(*CALIBRATE, "l_ids.jsonl", cwd=root, env=ENV)
    assert result.code == 2, result.out + result.err  # was 0: two examples, 40 calls
    assert result.err == (
        "error: l_ids.jsonl, line 2: id 'cafe\\u0301' is the same text as 'caf\\xe9' on line 1, "
        "written with other Unicode code points (they look alike wherever they are shown); "
        "write both the same way, or rename one\n"
    )
    assert server.requests == []
    assert calibrations(root) == []
