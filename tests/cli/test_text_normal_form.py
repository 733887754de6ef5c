"""`contains` and `equals` compare text, not code points: both sides in NFC, and when case does
not count, casefolded and composed again (NFC(casefold(NFC(x)))). A change in what they decide,
so their versions (and with them every judgment's identity) moved on: a judgment cached by the
old rule is judged again. Real CLI runs in a subprocess; the spec by value in-process.

(Before: an answer written in NFD, `e` + U+0301, failed against the same text in NFC, and
`inspect --failures` showed two identical strings.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from tests.support import Result, oloproof, write_project

from oloproof import events
from oloproof.evaluator_config import EvaluatorConfig
from oloproof.evaluators import Evaluator, build_evaluator
from oloproof.evaluators.base import CaseView

APP = """
import unicodedata

from oloproof import system

@system(name="echo", version="1")
def run(case):
    return {"answer": unicodedata.normalize(case["form"], case["text"])}
"""

CONFIG = """\
system: {name: echo, version: "1", callable: app:run}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: contains_nocase}
  - {type: equals, criterion: equals}
  - {type: equals, criterion: equals_nocase, case_sensitive: false}
"""

# id: (the normal form the system writes its answer in, the answer, the expected text, in NFC,
# and the criteria that fail the case).
CASES: dict[str, tuple[str, str, str, dict[str, str]]] = {
    "nfd": ("NFD", "Le Café", "Le Café", {}),
    "nfd_upper": ("NFD", "CAFÉ", "café", {"equals": "fail"}),
    # In NFD `cafe` is a prefix of `café` (c a f e U+0301); it does not read inside it.
    "accent_is_part_of_the_letter": (
        "NFC",
        "café",
        "cafe",
        {"contains_nocase": "fail", "equals": "fail", "equals_nocase": "fail"},
    ),
    "sharp_s": ("NFC", "STRASSE", "Straße", {"equals": "fail"}),
    "final_sigma": ("NFD", "ΟΔΌΣ", "οδός", {"equals": "fail"}),
}


def project(root: Path) -> Path:
    return write_project(
        root,
        app=APP,
        config=CONFIG,
        policy="version: 1\nrules:\n  - {id: r, metric: equals, min: 0.5}\n",  # not read
        cases=[
            {
                "id": case_id,
                "input": {"form": form, "text": text},
                "expected": {"answer": unicodedata.normalize("NFC", exp)},
            }
            for case_id, (form, text, exp, _) in CASES.items()
        ],
    )


def failures(root: Path) -> dict[str, dict[str, str]]:
    """The verdict of every criterion on each case of the latest run that failed one."""
    result = oloproof("inspect", "latest", "--failures", "--json", cwd=root)
    assert result.code == 0, result.err
    return {
        case["case_id"]: {name: v["s"] for name, v in case["verdicts"].items()}
        for case in json.loads(result.out)["failed"]
    }


def cache_line(result: Result) -> str:
    return next(line for line in result.lines if line.startswith("Cache:"))


def test_text_that_reads_the_same_compares_the_same(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    result = oloproof("run", cwd=root)
    assert result.code == 0, result.err
    expected = {
        case_id: {
            name: fails.get(name, "pass") for name in ("contains_nocase", "equals", "equals_nocase")
        }
        for case_id, (*_, fails) in CASES.items()
        if fails
    }
    assert failures(root) == expected


# The old rule, as the release before this one compared: code points, casefolded without case.
OLD_RULE = """
from oloproof.evaluators import text

text.Contains.VERSION = 2
text.Equals.VERSION = 1
text._comparable = lambda value, case_sensitive: value if case_sensitive else value.casefold()

from oloproof.cli.main import main

main()
"""


def old_release(root: Path, *args: str) -> Result:
    """``oloproof ARGS`` in ``root`` as the release that compared code points ran it."""
    proc = subprocess.run(
        [sys.executable, "-c", OLD_RULE, *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def test_a_judgment_cached_by_the_code_point_rule_is_judged_again(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    old = old_release(root, "run")
    assert old.code == 0, old.err
    assert failures(root)["nfd"] == {
        "contains_nocase": "fail",
        "equals": "fail",
        "equals_nocase": "fail",
    }

    new = oloproof("run", cwd=root)
    assert new.code == 0, new.err
    # Before: "judgment 15 hit/0 miss", and the NFD answer still failed.
    assert cache_line(new) == "Cache: execution 5 hit/0 miss; judgment 0 hit/15 miss"
    assert "nfd" not in failures(root)
    again = oloproof("run", cwd=root)
    assert cache_line(again) == "Cache: execution 5 hit/0 miss; judgment 15 hit/0 miss"


def build(data: dict[str, Any]) -> Evaluator:
    adapter: TypeAdapter[EvaluatorConfig] = TypeAdapter(EvaluatorConfig)
    return build_evaluator(adapter.validate_python(data), base_dir=Path("."))


def test_the_specs_name_the_new_rule_and_so_key_other_judgments() -> None:
    contains = build({"type": "contains", "criterion": "c"}).spec()
    equals = build({"type": "equals", "criterion": "e"}).spec()
    assert contains == {
        "type": "contains",
        "criterion": "c",
        "field": "answer",
        "expected_field": "answer",
        "case_sensitive": False,
        "version": 5,
    }
    assert equals == {
        "type": "equals",
        "criterion": "e",
        "field": "answer",
        "expected_field": "answer",
        "case_sensitive": True,
        "strip": True,
        "version": 4,
    }
    # The specs the code-point rule judged under, which its cached judgments are keyed by.
    assert events.identity_key(contains) != events.identity_key({**contains, "version": 2})
    assert events.identity_key(equals) != events.identity_key({**equals, "version": 1})


def test_the_comparison_is_canonical_for_every_form_of_the_same_text() -> None:
    # NFC(casefold(NFC(x))) makes canonically equivalent texts equal, whichever form they come
    # in, including where casefolding decomposes (ǰ) or a mark reorders (ᾳ with a tonos).
    equals = build({"type": "equals", "criterion": "e", "case_sensitive": False})
    for word in ("ǰ", "ΆΙ", "ᾴ", "Straße", "ΟΔΌΣ"):
        forms = {unicodedata.normalize(form, word) for form in ("NFC", "NFD")}
        verdicts = {
            equals.judge(CaseView("c", {}, {"answer": exp}, {}, {"answer": out}, {})).status
            for out in forms
            for exp in forms | {word.upper()}
        }
        assert verdicts == {"pass"}, word
