"""A case whose metadata or expected key is the key a slice or an ``expected_field`` reads,
written with other code points (``café`` with its accent composed in oloproof.yaml and
decomposed in the case), is refused at the case's line, naming both spellings; exit 2, before
the ledger is made. Real CLI.

(Before: the two print alike, but the path reads keys by their code points: the case counted
in the slice's ``(none)`` row, and was excluded from the metric, no_expected_value, with the run
exiting 0.)
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

from tests.support import oloproof, write_project

APP = """
from oloproof import system

@system(name="echo", version="1")
def run(case):
    return {"answer": case["q"]}
"""
NFC, NFD = unicodedata.normalize("NFC", "réponse"), unicodedata.normalize("NFD", "réponse")
CONFIG = f"""\
system: {{name: echo, version: "1", callable: app:run}}
dataset: cases.jsonl
evaluators:
  - {{type: contains, criterion: echo, field: answer, expected_field: {NFC}}}
slices: [metadata.{NFC}]
min_slice_support: 1
"""


def _run(root: Path, second: dict[str, Any]) -> tuple[int, str, str]:
    cases = [
        {"id": "c1", "input": {"q": "x"}, "expected": {NFC: "x"}, "metadata": {NFC: "a"}},
        {"id": "c2", "input": {"q": "x"}, **second},
    ]
    write_project(root, app=APP, config=CONFIG, policy="version: 1\nrules: []\n", cases=cases)
    done = oloproof("run", "--slices", "--json", cwd=root)
    return done.code, done.out, done.err


def test_an_expected_key_written_otherwise(tmp_path: Path) -> None:
    root = tmp_path / "p"
    code, out, err = _run(root, {"expected": {NFD: "x"}, "metadata": {NFC: "a"}})
    assert (code, out) == (2, ""), err
    assert err == (
        f"error: {(root / 'cases.jsonl').resolve()}, line 2: expected of case 'c2' has the key "
        "'re\\u0301ponse', the same text as 'r\\xe9ponse' that expected_field réponse of 'echo' "
        "reads, written with other Unicode code points (they look alike wherever they are "
        "shown), so it would read no value there; write both the same way\n"
    )
    assert not (root / ".oloproof").exists()


def test_a_metadata_key_written_otherwise(tmp_path: Path) -> None:
    root = tmp_path / "p"
    code, out, err = _run(root, {"expected": {NFC: "x"}, "metadata": {NFD: "a"}})
    assert (code, out) == (2, ""), err
    assert err == (
        f"error: {(root / 'oloproof.yaml').resolve()}, line 5: slices: metadata.réponse: "
        f"{(root / 'cases.jsonl').resolve()}, line 2: case 'c2' has the metadata key "
        "'re\\u0301ponse', the same text as 'r\\xe9ponse' that the slice reads, written with "
        "other Unicode code points (they look alike wherever they are shown), so it would read "
        "no value there; write both the same way\n"
    )
    assert not (root / ".oloproof").exists()


def test_both_spellings_in_one_case(tmp_path: Path) -> None:
    code, out, err = _run(
        tmp_path / "p", {"expected": {NFC: "x"}, "metadata": {NFC: "a", NFD: "b"}}
    )
    assert (code, out) == (2, ""), err
    assert "case 'c2' has the metadata key 're\\u0301ponse', the same text as" in err


def test_keys_written_one_way_are_read(tmp_path: Path) -> None:
    code, out, err = _run(tmp_path / "p", {"expected": {NFC: "x"}, "metadata": {NFC: "b"}})
    assert code == 0, out + err
    report = json.loads(out)
    assert report["metrics"][0]["observed"] == 2
    assert sorted(s["value"] for s in report["slices"]) == ["a", "b"]
