"""A gate that passes only because ``block_on`` lets a rule's INSUFFICIENT_EVIDENCE through says
so under the gate, naming the rules, through the real CLI: in the report `run` and `inspect`
print, the Markdown summary and the JUnit gate test. The exit code stays 0, as documented.

The probe: 30 cases of which 27 raised, under `block_on: [FAIL]` and `min: 0.5`, gave
`Gate: PASS (exit 0)` over `floor │ echo │ INSUFFICIENT_EVIDENCE` (3 / 3 observed, 27
missing, [2.1%, 100.0%]); `--sample 1` of cases that pass gave the same PASS on one case. The
policy chose to let INSUFFICIENT_EVIDENCE through, but nothing under the green gate said it
had leaned on that choice: the summary's first line read `Gate: PASS (exit 0)` alone.
Each now says `The gate passed only because block_on does not list INSUFFICIENT_EVIDENCE: the
run did not show rule floor met`. A gate whose every rule PASSed says nothing of it.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support import oloproof, write_project
from tests.view.support import fetch, page_text, serving

APP = """
from oloproof import system

@system(name="toy", version="1")
def run(case):
    if case["q"] not in ("x0", "x1", "x2"):
        raise RuntimeError("down")
    return {"answer": case["q"]}
"""
CONFIG = """\
system: {name: toy, version: "1", callable: app:run}
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
policy: policy.yaml
"""
LET_THROUGH = "version: 1\nblock_on: [FAIL]\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"
SAID = (
    "The gate passed only because block_on does not list INSUFFICIENT_EVIDENCE: the run did not "
    "show rule floor met"
)


def _project(root: Path, policy: str = LET_THROUGH) -> Path:
    cases = (
        {"id": f"c{i}", "input": {"q": f"x{i}"}, "expected": {"answer": f"x{i}"}} for i in range(30)
    )
    return write_project(root, app=APP, config=CONFIG, policy=policy, cases=cases)


def test_a_pass_on_27_errored_of_30_says_what_it_leaned_on(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    done = oloproof("run", "--summary", "summary.md", "--junit", "junit.xml", cwd=root)
    assert done.code == 0, done.out + done.err
    assert "Gate: PASS (exit 0)" in done.lines
    assert done.lines[done.lines.index("Gate: PASS (exit 0)") + 1] == SAID, done.out
    assert SAID in (root / "summary.md").read_text().splitlines()
    gate = ET.parse(root / "junit.xml").find(".//testcase[@name='gate']")
    assert gate is not None and gate.findtext("system-out") == SAID
    assert SAID in oloproof("inspect", "latest", cwd=root).lines


def test_a_pass_on_a_sample_of_one_says_it_too(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    cases = (
        {"id": f"c{i}", "input": {"q": f"x{i}"}, "expected": {"answer": f"x{i}"}} for i in range(3)
    )
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    done = oloproof("run", "--sample", "1", "--json", cwd=root)
    assert done.code == 0, done.out + done.err
    shown = oloproof("inspect", "latest", cwd=root)
    assert "Gate: PASS (exit 0)" in shown.lines and SAID in shown.lines, shown.out


def test_rules_that_all_pass_say_nothing(tmp_path: Path) -> None:
    root = _project(
        tmp_path / "p",
        "version: 1\nblock_on: [FAIL]\nrules:\n  - {id: floor, metric: echo, min: 0.01}\n",
    )
    (root / "app.py").write_text(APP.replace('("x0", "x1", "x2")', "case['q']"))
    done = oloproof("run", cwd=root)
    assert done.code == 0 and "Gate: PASS (exit 0)" in done.lines, done.out + done.err
    assert "passed only because" not in done.out


def test_a_comparison_passed_on_a_rule_let_through_says_so(tmp_path: Path) -> None:
    """The same for `compare`: 3 paired of 30 under `block_on: [FAIL]` read `Gate: PASS (exit
    0)` over an INSUFFICIENT_EVIDENCE non-inferiority rule, with nothing under it."""
    root = _project(tmp_path / "p")
    ids = []
    for _ in range(2):
        done = oloproof("run", "--no-cache", cwd=root)
        ids.append(done.lines[0].split()[1])
    (root / "cmp.yaml").write_text(
        "version: 1\nblock_on: [FAIL]\nrules:\n  - {id: nw, metric: echo, non_inferiority: {margin: 5}}\n"
    )
    compared = oloproof("compare", ids[1], ids[0], "--policy", "cmp.yaml", cwd=root)
    assert compared.code == 0, compared.out + compared.err
    said = "The gate passed only because block_on does not list INSUFFICIENT_EVIDENCE: the comparison did not show rule nw met"
    assert compared.lines[compared.lines.index("Gate: PASS (exit 0)") + 1] == said, compared.out


def test_runs_lists_a_pass_on_rules_let_through_as_such(tmp_path: Path) -> None:
    """`oloproof runs` (and the viewer's list of runs) showed such a run as `PASS (exit 0)`
    beside `3 of 30 answered`, like a run whose every rule passed; its row, `--json` and the
    viewer's list now name the rules let through."""
    root = _project(tmp_path / "p")
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    listed = oloproof("runs", cwd=root)
    assert listed.code == 0, listed.err
    assert (
        "  PASS (exit 0; block_on let through rule floor: INSUFFICIENT_EVIDENCE)  3 of 30 answered"
        in listed.out
    ), listed.out
    (row,) = json.loads(oloproof("runs", "--json", cwd=root).out)
    assert row["let_through"] == [{"rule": "floor", "decision": "INSUFFICIENT_EVIDENCE"}]
    with serving(root) as url:
        status, page = fetch(f"{url}/")
    assert status == 200, page
    assert "block_on let through rule floor: INSUFFICIENT_EVIDENCE" in page_text(page)
    (root / "app.py").write_text(APP.replace('("x0", "x1", "x2")', "case['q']"))
    (root / "policy.yaml").write_text(LET_THROUGH.replace("0.5", "0.01"))
    assert oloproof("run", cwd=root).code == 0
    rows = json.loads(oloproof("runs", "--json", cwd=root).out)
    assert "let_through" not in rows[0] and rows[0]["gate"] == "PASS", rows[0]
    assert oloproof("runs", cwd=root).lines[0].split("  ")[4] == "PASS (exit 0)"
