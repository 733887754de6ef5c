"""An output that is not plain data is judged as the ledger records it, on every run.

An object in an output (a set, bytes, an instance of the project's own class) is recorded as its
text. The run that executed it used to judge the object itself, while a later run reusing the
execution judged the recorded text: one execution, two verdicts (a set holding the expected
answer failed as "not text", then passed from the cache).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.support import oloproof

APP = """
from oloproof import system


class Answer:
    def __repr__(self):
        return "Answer(Paris)"


@system(name="odd", version="1")
def answer(case):
    kind = case["kind"]
    if kind == "set":
        return {"answer": {"Paris"}}
    if kind == "bytes":
        return {"answer": b"Paris"}
    if kind == "object":
        return {"answer": Answer()}
    return {"answer": "Paris"}
"""

CONFIG = """
system: {name: odd, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
"""

KINDS = ["set", "bytes", "object", "text"]


def verdicts(root: Path) -> dict[str, dict[str, str]]:
    """Each case's verdict as the latest run recorded it (``s`` status, ``r`` reason)."""
    found = {}
    for kind in KINDS:
        shown = json.loads(oloproof("inspect", "latest", "--case", kind, "--json", cwd=root).out)
        found[kind] = shown["verdicts"]["answer_correct"]
    return found


def test_an_execution_reused_from_the_cache_keeps_its_verdicts(tmp_path: Path) -> None:
    root = tmp_path / "odd"
    root.mkdir()
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": k, "input": {"kind": k}, "expected": {"answer": "Paris"}}) + "\n"
            for k in KINDS
        )
    )
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.out + first.err
    made = verdicts(root)
    again = oloproof("run", cwd=root)
    assert again.code == 0, again.out + again.err
    assert re.search(r"Cache: execution 4 hit/0 miss", again.out)
    assert verdicts(root) == made
    # Each recorded text holds the answer: the set's "{'Paris'}", the bytes' "b'Paris'".
    assert made == {kind: {"s": "pass"} for kind in KINDS}


NUMBERS = """
import numpy as np

from oloproof import system


@system(name="numeric", version="1")
def answer(case):
    return {
        "answer": np.str_("Paris"),
        "votes": np.int64(3),
        "sure": np.bool_(True),
        "scores": np.array([0.5, 0.25], dtype=np.float32),
        "grid": np.arange(4).reshape(2, 2),
    }
"""


def _one_case(root: Path, app: str, name: str, kind: str, answer: str) -> Path:
    """A project of system ``name`` (in ``app``) and one case, c1, of ``kind``."""
    root.mkdir()
    (root / "app.py").write_text(app)
    (root / "oloproof.yaml").write_text(CONFIG.replace("odd", name))
    (root / "cases.jsonl").write_text(
        json.dumps({"id": "c1", "input": {"kind": kind}, "expected": {"answer": answer}}) + "\n"
    )
    return root


def _recorded(root: Path) -> dict[str, Any]:
    """Case c1 of the latest run, as `inspect --json` shows it."""
    shown: dict[str, Any] = json.loads(
        oloproof("inspect", "latest", "--case", "c1", "--json", cwd=root).out
    )
    return shown


def _under_three_seeds(root: Path) -> list[dict[str, Any]]:
    """Case c1 as a run with --no-cache records it under each of three hash seeds."""
    every = []
    for seed in ("1", "2", "3"):
        result = oloproof("run", "--no-cache", cwd=root, env={"PYTHONHASHSEED": seed})
        assert result.code == 0, result.out + result.err
        every.append(_recorded(root))
    return every


def test_numpy_values_are_recorded_as_the_numbers_they_hold(tmp_path: Path) -> None:
    # Recorded as their text, they read "np.int64(3)" and "array([0.5 , 0.25], dtype=float32)":
    # a number the system computed became text a judge read as such.
    root = _one_case(tmp_path / "numeric", NUMBERS, "numeric", "x", "Paris")
    result = oloproof("run", cwd=root)
    assert result.code == 0, result.out + result.err
    assert _recorded(root)["output"] == {
        "answer": "Paris",
        "votes": 3,
        "sure": True,
        "scores": [0.5, 0.25],
        "grid": [[0, 1], [2, 3]],
    }


MAPPINGS = """
import collections
import types

from oloproof import system


class Record(collections.abc.Mapping):
    # A mapping that is not a dict, as configuration libraries make them.
    def __init__(self, **fields):
        self._fields = fields

    def __getitem__(self, key):
        return self._fields[key]

    def __iter__(self):
        return iter(self._fields)

    def __len__(self):
        return len(self._fields)


@system(name="mapped", version="1")
def answer(case):
    if case["kind"] == "proxy":
        return types.MappingProxyType({"answer": "Lyon"})
    return Record(answer="Lyon", more=collections.UserDict(n=1))
"""


@pytest.mark.parametrize("kind", ["proxy", "record"])
def test_a_mapping_that_is_not_a_dict_is_recorded_as_one(tmp_path: Path, kind: str) -> None:
    # Recorded as its text ("mappingproxy({'answer': 'Lyon'})"), the output was read whole as
    # text: a field check found no field, and `contains` passed on the text of both.
    root = _one_case(tmp_path / "mapped", MAPPINGS, "mapped", kind, "Paris")
    result = oloproof("run", cwd=root)
    assert result.code == 0, result.out + result.err
    shown = _recorded(root)
    expected = {"answer": "Lyon"} if kind == "proxy" else {"answer": "Lyon", "more": {"n": 1}}
    assert shown["output"] == expected
    assert shown["verdicts"]["answer_correct"]["s"] == "fail"


SETS = """
from oloproof import system


class Unordered:
    def __lt__(self, other):
        raise ValueError("no order")

    def __repr__(self):
        return "Unordered()"


@system(name="sets", version="1")
def answer(case):
    return {
        "answer": {"paris", "lyon", "nice", "brest"},
        "codes": frozenset({10, 3, 9}),
        "mixed": {Unordered(), 1},  # in the order of their text: its __lt__ raises
    }
"""


def test_a_set_is_recorded_as_the_same_text_in_every_process(tmp_path: Path) -> None:
    # A set's repr follows the process's hash seed: the same answer was recorded as another
    # text, so another execution address, on every run.
    root = _one_case(tmp_path / "sets", SETS, "sets", "x", "lyon")
    recorded = [(shown["output"], shown["execution"]) for shown in _under_three_seeds(root)]
    assert recorded[0][0] == {
        "answer": "{'brest', 'lyon', 'nice', 'paris'}",
        "codes": "frozenset({3, 9, 10})",
        "mixed": "{1, Unordered()}",
    }
    assert recorded[1] == recorded[0] and recorded[2] == recorded[0]


DATACLASSES = """
import dataclasses

import attrs

from oloproof import system


@dataclasses.dataclass
class Source:
    doc_id: str
    pages: tuple


@dataclasses.dataclass(frozen=True)
class Answer:
    answer: str
    tags: set
    sources: list
    draft: str = dataclasses.field(default="", repr=False)


@attrs.define
class AttrsAnswer:
    answer: str
    tags: set
    sources: list
    draft: str = attrs.field(default="", repr=False)


@system(name="typed", version="1")
def answer(case):
    made = Answer if case["kind"] == "dataclass" else AttrsAnswer
    return made(
        answer="Lyon",
        tags={"paris", "lyon", "nice", "brest"},
        sources=[Source("kb-1", (3, 4))],
        draft="Lyon?",
    )
"""


@pytest.mark.parametrize("kind", ["dataclass", "attrs"])
def test_a_dataclass_is_recorded_as_its_fields(tmp_path: Path, kind: str) -> None:
    # Recorded as its text, "Answer(answer='Lyon', tags={...}, ...)", a dataclass was read
    # whole by `field: answer`, so `contains` passed on another field's value or a field name;
    # and the set in it was written in the order of the process's hash seed: the same answer
    # was another text, and another execution address, on every run.
    root = _one_case(tmp_path / "typed", DATACLASSES, "typed", kind, "Lyon")
    every = _under_three_seeds(root)
    assert all(shown["verdicts"]["answer_correct"]["s"] == "pass" for shown in every), every
    recorded = [(shown["output"], shown["execution"]) for shown in every]
    assert recorded[0][0] == {
        "answer": "Lyon",
        "tags": "{'brest', 'lyon', 'nice', 'paris'}",
        "sources": [{"doc_id": "kb-1", "pages": [3, 4]}],
        "draft": "Lyon?",
    }
    assert recorded[1] == recorded[0] and recorded[2] == recorded[0]
    # A tag is not the answer: its text held it, and `contains` passed on it.
    cases = root / "cases.jsonl"
    cases.write_text(cases.read_text().replace('"answer": "Lyon"', '"answer": "brest"'))
    result = oloproof("run", cwd=root)
    assert result.code == 0, result.out + result.err
    assert _recorded(root)["verdicts"]["answer_correct"]["s"] == "fail"
