"""A case every metric excluded is a skipped test in `--junit-cases`, not a passing one.

The probe: a case without the expected values its two checks read is excluded from both
(`no_expected_value`), judged on nothing; the run's metrics say `2 excluded`. With
`--junit-cases` it was a `<testcase>` with nothing in it, which every CI reporter counts as
passed: `tests="4" failures="0" skipped="0"`, four green cases where two were judged. It is
`<skipped>` now, naming each metric and why; a case one metric excluded and another passed
stays a passing test (it passed what it was judged on).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support import oloproof, write_project

APP = """
from oloproof import system

@system(name="echo", version="1")
def echo(case):
    return {"answer": case["q"]}
"""
CONFIG = """\
system: {name: echo, version: "1", callable: "app:echo"}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: mentions, field: answer, expected_field: answer}
  - {type: equals, criterion: exact, field: answer, expected_field: exact}
"""
CASES = [
    {"id": "both", "input": {"q": "yes"}, "expected": {"answer": "yes", "exact": "yes"}},
    {"id": "one", "input": {"q": "yes"}, "expected": {"answer": "yes"}},
    {"id": "none", "input": {"q": "yes"}},
    {"id": "none-2", "input": {"q": "no"}, "expected": {}},
]


def test_a_case_judged_on_nothing_is_skipped(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p", app=APP, config=CONFIG, policy="version: 1\nrules: []\n", cases=CASES
    )
    done = oloproof("run", "--junit", "j.xml", "--junit-cases", cwd=root)
    assert done.code == 0, done.out + done.err
    suites = ET.parse(root / "j.xml").getroot().findall("testsuite")
    cases = next(s for s in suites if s.get("name", "").endswith(": cases"))
    # Was: tests="4" failures="0" errors="0" skipped="0".
    counts = [cases.get(key) for key in ("tests", "failures", "errors", "skipped")]
    assert counts == ["4", "0", "0", "2"], ET.tostring(cases, encoding="unicode")
    by_id = {case.get("name"): case for case in cases.findall("testcase")}
    for passed in ("both", "one"):
        assert list(by_id[passed]) == [], ET.tostring(by_id[passed], encoding="unicode")
    for judged_on_nothing in ("none", "none-2"):
        (skipped,) = list(by_id[judged_on_nothing])
        assert skipped.tag == "skipped"
        assert skipped.get("message") == (
            "mentions: excluded (no_expected_value); exact: excluded (no_expected_value)"
        )
        assert (
            skipped.text
            == f"oloproof inspect {done.lines[0].split()[1]} --case {judged_on_nothing}"
        )
