"""A labels file whose example holds its reference answer under a key with a dot, which the
judge's ``expected_field`` path cannot name, is refused by ``oloproof calibrate`` as a cases
file is (test_dotted_expected_keys), before any call. Real CLI, judge on 127.0.0.1.

(Before: with ``expected_field: gold.answer``, 10 of 20 examples written ``{"gold.answer": …}``
were excluded as having no reference answer; the calibration recorded 10 / 10, exit 0, its
specificity from no example.)
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, toy_project

from oloproof.testing import ScriptedJudgeServer, verdict

CONFIG = """\
system: {{name: toy, version: "1", callable: app:run}}
evaluators:
  - type: answer_judge
    provider: openai
    model: m
    base_url: {url}
    api_key_env: JUDGE_KEY
    expected_field: gold.answer
"""
ENV = {"JUDGE_KEY": "judge-key-0123456789"}


def _calibrated(root: Path, expected: list[dict[str, object]]) -> tuple[int, str, str, int]:
    """``calibrate`` of the answer judge on one example per expected value, each labelled by
    whether it is the first half's; with the calls the judge got."""
    lines = (
        {
            "id": f"e{i}",
            "input": {"q": f"q{i}"},
            "output": {"answer": f"a{i}"},
            "expected": e,
            "label": i < len(expected) // 2,
        }
        for i, e in enumerate(expected)
    )
    (root / "labels.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    with ScriptedJudgeServer(default=verdict(True)) as server:
        toy_project(root, config=CONFIG.format(url=server.openai_base_url))
        done = oloproof(
            "calibrate",
            "--evaluator",
            "answer_equivalent",
            "--labels",
            "labels.jsonl",
            cwd=root,
            env=ENV,
        )
        return done.code, done.out, done.err, len(server.requests)


def test_a_key_the_expected_field_cannot_name(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    expected = [{"gold": {"answer": "a"}}] * 10 + [{"gold.answer": "a"}] * 10
    code, out, err, calls = _calibrated(root, expected)
    assert (code, out, calls) == (2, "", 0), out + err
    assert err == (
        "error: labels.jsonl, line 11: expected of example 'e10' has the key 'gold.answer', "
        "whose dot expected_field gold.answer of 'answer_equivalent' reads as a key inside a "
        "key, so it could not read the value there; rename the key without the dot\n"
    )
    assert not (root / ".oloproof").exists()


def test_nested_keys_alone_are_read(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    code, out, err, calls = _calibrated(root, [{"gold": {"answer": "a"}}] * 4)
    assert code == 0, out + err
    assert "0 missing, 0 excluded" in out
    assert calls == 4
