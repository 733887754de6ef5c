"""`inspect RUN --case ID` finds a case whose id is typed with its accents encoded otherwise.

Case ids are compared as a reader sees them (docs/running.md): `été` written with one code point
per accented letter and `e` followed by a combining accent are one id, refused as given twice in
a cases file. An id is printed (the JUnit file's text, `inspect --failures`) to be typed back,
and what a terminal, an editor or a copied web page hands back may encode the accents the other
way. The probe: a run of the cases `été` (composed) and `café` (decomposed, as the file has it),
each inspected by the other spelling. Before: `error: run run_… has no case 'été'`, exit 2, the
id printed exactly as the run's report prints the case it denied; the run holds both. Now each
spelling shows the case as the ledger holds it, and an id the run does not have is still refused.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from tests.support import oloproof, write_project

APP = """
def answer(case):
    return {"answer": case["q"]}
"""
CONFIG = """\
system: {name: accents, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: mentions, field: answer, expected_field: answer}
"""
COMPOSED = unicodedata.normalize("NFC", "été")
DECOMPOSED = unicodedata.normalize("NFD", "café")


def test_a_case_is_found_by_either_spelling_of_its_id(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=CONFIG,
        policy="version: 1\nrules: []\n",
        cases=[
            {"id": COMPOSED, "input": {"q": "a"}, "expected": {"answer": "a"}},
            {"id": DECOMPOSED, "input": {"q": "b"}, "expected": {"answer": "a"}},
        ],
    )
    done = oloproof("run", "--json", cwd=root)
    assert done.code == 0, done.err
    run_id = json.loads(done.out)["run_id"]
    for stored, typed in (
        (COMPOSED, unicodedata.normalize("NFD", COMPOSED)),
        (DECOMPOSED, unicodedata.normalize("NFC", DECOMPOSED)),
    ):
        assert typed != stored
        exact = oloproof("inspect", run_id, "--case", stored, "--json", cwd=root)
        assert exact.code == 0, exact.err
        # Was: exit 1, "error: run run_… has no case 'été'".
        found = oloproof("inspect", run_id, "--case", typed, "--json", cwd=root)
        assert (found.code, found.err) == (0, ""), found.err
        assert json.loads(found.out) == json.loads(exact.out)
        assert json.loads(found.out)["case_id"] == stored
        shown = oloproof("inspect", run_id, "--case", typed, cwd=root)
        assert shown.code == 0, shown.err
    unknown = oloproof("inspect", run_id, "--case", "ete", cwd=root)
    assert unknown.code == 2
    assert f"run {run_id} has no case 'ete'" in unknown.err
