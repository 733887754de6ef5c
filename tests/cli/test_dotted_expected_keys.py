"""An expected value under a key holding a dot, which an ``expected_field`` path cannot name, is
refused when the cases are read, through the real CLI.

The probe: ``expected_field: gold.answer`` reads the key ``answer`` inside the key ``gold``. Of
40 cases, 20 wrote their expected answer as ``{"gold.answer": …}`` and 20 as ``{"gold":
{"answer": …}}``; the run judged the 20 nested ones, excluded the other 20 as having no expected
value (``20 / 20 observed · 0 missing · 20 excluded``) and PASSed its gate, exit 0, on half the
suite. The cases file is now refused at the first such case's line (exit 2, nothing recorded),
naming its key and the evaluator, as ``--filter`` and slices refuse a metadata key with a dot.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import TOY_CONFIG, oloproof, toy_project

CONFIG = TOY_CONFIG.replace("expected_field: answer", "expected_field: gold.answer")


def _project(root: Path, expected: list[dict[str, object]]) -> Path:
    toy_project(root, config=CONFIG)
    cases = ({"id": f"c{i}", "input": {"q": "x"}, "expected": e} for i, e in enumerate(expected))
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return root


def test_a_key_the_expected_field_cannot_name(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", [{"gold": {"answer": "x"}}] * 3 + [{"gold.answer": "x"}] * 3)
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == (
        f"error: {root / 'cases.jsonl'}, line 4: expected of case 'c3' has the key "
        "'gold.answer', whose dot expected_field gold.answer of 'echo' reads as a key inside a "
        "key, so it could not read the value there; rename the key without the dot\n"
    )
    assert not (root / ".oloproof").exists()


def test_nested_keys_alone_are_read(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", [{"gold": {"answer": "x"}}] * 3 + [{"other.key": "y"}])
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.out + done.err  # three cases cannot clear the floor of 0.5
    assert "3 / 3 observed · 0 missing · 1 excluded" in done.out
