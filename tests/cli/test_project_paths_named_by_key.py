"""A path oloproof.yaml names that names no file is refused at its key, through the real CLI.

Before the fix ``dataset: ""`` and ``policy: ""`` were joined to the project folder, and the
error named the folder ("PROJECT: not a file of cases", "PROJECT: cannot read it (Is a
directory)"), not the key that said it; a symbolic-link loop was named by the file it ends at,
not by the key either; a NUL in a path (``"a\\0b"``) or a name too long for the file system
ended in a Python traceback (exit 1).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, oloproof, toy_project

CONFIG = TOY_CONFIG.replace("concurrency: 2\n", "") + "dataset: cases.jsonl\n"
LONG = "a" * 300  # longer than a file name may be (255 bytes)


def _project(root: Path) -> Path:
    return toy_project(root)


def _loop(name: str) -> Callable[[Path], None]:
    return lambda root: os.symlink(name, root / name)


def _nothing(root: Path) -> None:
    return None


REFUSED: dict[str, tuple[str, str, Callable[[Path], None], str]] = {
    "an empty dataset": (
        "dataset: cases.jsonl",
        'dataset: ""',
        _nothing,
        "line 8: dataset: an empty path names no file",
    ),
    "an empty policy": (
        "policy: policy.yaml",
        "policy: ''",
        _nothing,
        "line 7: policy: an empty path names no file",
    ),
    # Was: a run without a gate, exit 0, with policy.yaml beside it.
    "a policy left empty": (
        "policy: policy.yaml",
        "policy:",
        _nothing,
        "line 7: policy: no policy file is named; name one (policy: policy.yaml), or leave the "
        "key out to run without a release gate",
    ),
    "a policy of null": (
        "policy: policy.yaml",
        "policy: null",
        _nothing,
        "line 7: policy: no policy file is named; name one (policy: policy.yaml), or leave the "
        "key out to run without a release gate",
    ),
    "a dataset in a loop of links": (
        "dataset: cases.jsonl",
        "dataset: loop.jsonl",
        _loop("loop.jsonl"),
        "line 8: dataset: {root}/loop.jsonl: cannot read it (a loop of symbolic links)",
    ),
    "a policy in a loop of links": (
        "policy: policy.yaml",
        "policy: loop.yaml",
        _loop("loop.yaml"),
        "line 7: policy: {root}/loop.yaml: cannot read it (a loop of symbolic links)",
    ),
    "a dataset name too long": (
        "dataset: cases.jsonl",
        f"dataset: {LONG}",
        _nothing,
        f"line 8: dataset: {{root}}/{LONG}: cannot read it (its name is too long)",
    ),
    "a NUL in the dataset": (
        "dataset: cases.jsonl",
        'dataset: "cases\\0.jsonl"',
        _nothing,
        "line 8: dataset: a NUL character (\\0), which no setting can hold",
    ),
    "a NUL in a schema path": (
        "policy: policy.yaml",
        '  - {type: json_schema, criterion: shaped, schema_path: "s\\0.json"}\npolicy: policy.yaml',
        _nothing,
        "line 7: evaluators.1.schema_path: a NUL character (\\0), which no setting can hold",
    ),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_path_that_names_no_file_is_refused_at_its_key(tmp_path: Path, name: str) -> None:
    old, new, prepare, sentence = REFUSED[name]
    root = _project(tmp_path)
    (root / "oloproof.yaml").write_text(CONFIG.replace(old, new))
    prepare(root)
    expected = f"error: {root}/oloproof.yaml, {sentence.format(root=root)}\n"
    for args in (("run",), ("run", "--dry-run")):
        result = oloproof(*args, cwd=root)
        assert (result.code, result.out, result.err) == (2, "", expected), args
    assert not (root / ".oloproof").exists()
