"""A ``--filter`` whose text matches cases holding the key's value as two kinds (the number 1
and the string "1", the boolean true and the string "true") is refused, naming both cases and
their lines, as a slice over them is (test_slice_values_of_two_kinds): the filter's value is
text typed on a command line, so whether it meant one kind or both cannot be known. Exit 2,
nothing recorded. A filter matching one kind alone, or a resumed run, is read as before.

(Before: ``run --filter metadata.k=1`` ran both cases, ``Subset: 2 of 3 cases``, exit 0.)
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, toy_project


def _project(root: Path, values: list[object]) -> Path:
    toy_project(root)
    cases = (
        {"id": f"c{i}", "input": {"q": "x"}, "expected": {"answer": "x"}, "metadata": {"k": v}}
        for i, v in enumerate(values)
    )
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return root


def test_a_number_and_a_string_alike_are_refused(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", [1, 2, "1"])
    done = oloproof("run", "--filter", "metadata.k=2", "--filter", "metadata.k=1", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == (
        "error: --filter metadata.k=1: matches case 'c0' (line 1), holding the number 1, and "
        "case 'c2' (line 3), holding the string \"1\": values of two kinds that the filter's "
        "text cannot tell apart; write the value one way in both\n"
    )
    assert not (root / ".oloproof").exists()


def test_a_boolean_and_its_text_are_refused(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", ["true", True])
    done = oloproof("run", "--filter", "metadata.k=true", cwd=root)
    assert done.code == 2, done.out + done.err
    assert "case 'c0' (line 1), holding the string \"true\", and case 'c1' (line 2), " in done.err
    assert "holding the boolean true: values of two kinds" in done.err


def test_a_filter_matching_one_kind_runs(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", [1, 2, "1"])
    done = oloproof("run", "--filter", "metadata.k=2", cwd=root)
    assert done.code in (0, 3), done.out + done.err
    assert "1 of 3 cases" in done.out
