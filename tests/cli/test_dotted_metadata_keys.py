"""A metadata key holding a dot, which ``--filter`` and slices cannot name, is said, not skipped.

The probe: ``metadata.a.b`` reads the key ``b`` inside the key ``a``. Of six cases, three with
metadata ``{"a.b": "x"}`` and three with ``{"a": {"b": "x"}}``, ``run --filter metadata.a.b=x``
ran the three nested ones (``Subset: 3 of 6 cases``, exit 0), silently leaving out the three
whose key is literally ``a.b``; a slice ``metadata.a.b`` put them under ``(none)``. When every
case had the dotted key, the filter was refused as "no case has this metadata key; did you mean
'metadata.a.b'?", suggesting what was typed. Each is now refused (exit 2, nothing recorded),
naming the first case and its key, and saying to rename it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, oloproof, toy_project

NESTED = {"a": {"b": "x"}}


def _project(root: Path, metadata: list[dict[str, object]], config: str = TOY_CONFIG) -> Path:
    toy_project(root, config=config)
    cases = (
        {"id": f"c{i}", "input": {"q": "x"}, "expected": {"answer": "x"}, "metadata": m}
        for i, m in enumerate(metadata)
    )
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return root


def _said(key: str, case: str = "c0") -> str:
    return (
        f"case {case!r} has the metadata key {key!r}, whose dot metadata.a.b reads as a key "
        "inside a key, so it could not read the value there; rename the key without the dot"
    )


@pytest.mark.parametrize(
    "metadata",
    [[{"a.b": "x"}] * 3 + [NESTED] * 3, [{"a.b": "x"}] * 6],
    ids=["some dotted", "all dotted"],
)
def test_a_filter_that_cannot_name_a_key(tmp_path: Path, metadata: list[dict[str, object]]) -> None:
    root = _project(tmp_path / "p", metadata)
    done = oloproof("run", "--filter", "metadata.a.b=x", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == f"error: --filter metadata.a.b: {_said('a.b')}\n"
    assert not (root / ".oloproof").exists()


def test_a_key_inside_a_key_with_a_dot(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", [NESTED, {"a": {"b.c": "y"}}])
    done = oloproof("run", "--filter", "metadata.a.b.c=y", cwd=root)
    assert done.code == 2, done.out + done.err
    assert done.err.startswith(
        "error: --filter metadata.a.b.c: case 'c1' has the metadata key 'b.c'"
    )


def test_a_slice_that_cannot_name_a_key(tmp_path: Path) -> None:
    config = TOY_CONFIG + "slices: [metadata.a.b]\n"
    root = _project(tmp_path / "p", [NESTED, {"a.b": "x"}], config=config)
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    where = f"{root / 'oloproof.yaml'}, line 9"
    assert done.err == f"error: {where}: slices: metadata.a.b: {_said('a.b', 'c1')}\n"
    assert not (root / ".oloproof").exists()


def test_nested_keys_alone_are_read(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", [NESTED, {"a": {"b": "y"}}, {"a.c": "x"}])
    done = oloproof("run", "--filter", "metadata.a.b=x", cwd=root)
    assert done.code == 3, done.out + done.err  # one case cannot clear the floor of 0.5
    assert "Subset: 1 of 3 cases (metadata.a.b=x)" in done.out
