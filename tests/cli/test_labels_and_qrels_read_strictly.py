"""A labels file is read as strictly as a cases file, and labels and qrels files are bounded,
through the real CLI.

Before the fix ``calibrate --labels`` read its file with Python's own JSON parser, split at
every line break Python knows: a labels file holding ``NaN``, ``1e400`` (read as infinity) or a
lone ``\\uD800`` was calibrated on (exit 0), as was an id holding a zero-width space (it prints
as another id), all of which docs/running.md says every JSON file Oloproof reads refuses; a
line with a U+2028 inside a string was refused as "not valid JSON" (the file was cut there);
JSON nested 5,000 deep ended in a RecursionError traceback; a line that is not UTF-8 was named
by its byte alone. Labels and qrels files were read whole, whatever their size.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support import oloproof, serving_judge_gate

from oloproof.testing import ScriptedJudgeServer, verdict

ENV = {"JUDGE_GATE_KEY": "sk-test"}
CALIBRATE = ("calibrate", "--evaluator", "groundedness", "--labels", "l.jsonl")


@pytest.fixture
def judge_gate(tmp_path: Path) -> Iterator[tuple[Path, ScriptedJudgeServer]]:
    with serving_judge_gate(tmp_path) as (root, server):
        server.default = verdict(True, "supported")
        yield root, server


def _labels(root: Path, fourth: str) -> list[str]:
    """The example's labels with the fourth line replaced by ``fourth`` (as written)."""
    lines = (root / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    lines[3] = fourth
    return lines


def _fourth(root: Path, **change: object) -> str:
    example = json.loads(_labels(root, "")[2])
    return json.dumps({**example, "id": "changed", **change}, ensure_ascii=False)


REFUSED = {
    "NaN": (
        lambda root: _fourth(root)[:-1] + ', "metadata": {"s": NaN}}',
        "NaN is not a JSON number",
    ),
    "a number too large": (
        lambda root: _fourth(root)[:-1] + ', "metadata": {"s": 1e400}}',
        "the number 1e400 is too large to record",
    ),
    "a lone surrogate": (
        lambda root: _fourth(root)[:-1] + ', "metadata": {"s": "\\ud800"}}',
        "holds a lone surrogate escape (\\uD800-\\uDFFF without its pair), which is not text",
    ),
    "nested 5,000 deep": (
        lambda root: _fourth(root)[:-1] + ', "metadata": {"s": ' + "[" * 5000 + "]" * 5000 + "}}",
        "nested deeper than 100 levels",
    ),
    "nested 150 deep": (
        lambda root: _fourth(root)[:-1] + ', "metadata": {"s": ' + "[" * 150 + "]" * 150 + "}}",
        "nested deeper than 100 levels",
    ),
    "an id that prints as another": (
        lambda root: _fourth(root, id="ground\u200bed"),
        "id 'ground\\u200bed' holds U+200B ZERO WIDTH SPACE (character 7), which does not show "
        "where the id is printed (it looks like 'grounded'); write the id without it",
    ),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_labels_refused_as_a_cases_file_would_be(
    judge_gate: tuple[Path, ScriptedJudgeServer], name: str
) -> None:
    root, server = judge_gate
    line, sentence = REFUSED[name]
    (root / "l.jsonl").write_text("\n".join(_labels(root, line(root))) + "\n", encoding="utf-8")
    result = oloproof(*CALIBRATE, cwd=root, env=ENV)
    assert (result.code, result.out, result.err) == (2, "", f"error: l.jsonl, line 4: {sentence}\n")
    assert server.requests == []
    assert not (root / ".oloproof").exists()


def test_a_labels_line_not_utf8_is_named(judge_gate: tuple[Path, ScriptedJudgeServer]) -> None:
    root, _ = judge_gate
    lines = _labels(root, _fourth(root))
    head = "".join(line + "\n" for line in lines[:3]).encode()
    (root / "l.jsonl").write_bytes(head + b'{"id": "\xff"}\n')
    result = oloproof(*CALIBRATE, cwd=root, env=ENV)
    assert (result.code, result.err) == (
        2,
        f"error: l.jsonl, line 4: not UTF-8 text (byte {len(head) + 8})\n",
    )


def test_a_line_separator_inside_a_string_is_text(
    judge_gate: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, server = judge_gate
    example = json.loads(_labels(root, "")[2])
    example["output"]["answer"] += "\u2028\u0085"
    lines = _labels(root, json.dumps({**example, "id": "separated"}, ensure_ascii=False))
    (root / "l.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = oloproof(*CALIBRATE, cwd=root, env=ENV)
    assert result.code == 0, result.err
    assert "  labels: l.jsonl (40 examples)" in result.lines
    assert len(server.requests) == 40


def _sparse(path: Path, size: int) -> None:
    with path.open("wb") as file:
        file.truncate(size)


def test_a_labels_file_too_large_is_refused(judge_gate: tuple[Path, ScriptedJudgeServer]) -> None:
    root, server = judge_gate
    _sparse(root / "l.jsonl", (256 << 20) + 1)
    result = oloproof(*CALIBRATE, cwd=root, env=ENV)
    assert (result.code, result.out, result.err) == (
        2,
        "",
        "error: l.jsonl: 268435457 bytes, more than a labels file may hold (268435456)\n",
    )
    assert server.requests == []


def test_a_qrels_file_too_large_is_refused(tmp_path: Path) -> None:
    case = {"id": "q1", "input": {"q": "x"}}
    (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n")
    _sparse(tmp_path / "qrels.txt", (256 << 20) + 1)
    result = oloproof("qrels-to-cases", "qrels.txt", "--output", "out.jsonl", cwd=tmp_path)
    assert (result.code, result.out, result.err) == (
        2,
        "",
        "error: qrels.txt: 268435457 bytes, more than a qrels file may hold (268435456)\n",
    )
    assert not (tmp_path / "out.jsonl").exists()
    assert set(os.listdir(tmp_path)) == {"cases.jsonl", "qrels.txt"}


def test_a_qrels_line_not_utf8_is_named(tmp_path: Path) -> None:
    # Was "qrels.txt: not UTF-8 text (byte 16)": no line, and the byte counted after the
    # byte-order mark.
    (tmp_path / "cases.jsonl").write_text(json.dumps({"id": "q1", "input": {"q": "x"}}) + "\n")
    (tmp_path / "qrels.txt").write_bytes(b"\xef\xbb\xbfq1 0 d1 1\nq1 0 d\xff 1\n")
    result = oloproof("qrels-to-cases", "qrels.txt", "--output", "out.jsonl", cwd=tmp_path)
    assert (result.code, result.err) == (2, "error: qrels.txt, line 2: not UTF-8 text (byte 19)\n")
