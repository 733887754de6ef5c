"""`--junit` and `--summary` for `run` and `compare`, read back the way a CI system reads them
(junitparser, and xml.etree for the attributes the common CI reporters use), and
`compare --cases` / its JSON naming the cases that changed."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from junitparser import Error, Failure, JUnitXml, Skipped
from tests.support import oloproof, write_project
from tests.unchecked_ids import oloproof_unchecked_ids


def _outcome(case: object) -> str:
    results = list(case.result)  # type: ignore[attr-defined]
    if not results:
        return "passed"
    first = results[0]
    if isinstance(first, Failure):
        return f"failure:{first.type}"
    if isinstance(first, Error):
        return f"error:{first.type}"
    if isinstance(first, Skipped):
        return "skipped"
    return type(first).__name__


def test_run_junit_has_a_test_per_rule_and_the_gate(blackbox: Path) -> None:
    done = oloproof("run", "--junit", "reports/junit.xml", cwd=blackbox)
    assert done.code == 1, done.err
    xml = JUnitXml.fromfile(str(blackbox / "reports" / "junit.xml"))
    (suite,) = list(xml)
    outcomes = {case.name: _outcome(case) for case in suite}
    assert outcomes == {
        "answer-floor (answer_correct)": "failure:INSUFFICIENT_EVIDENCE",
        "retrieval-floor (hit_rate_at_2)": "failure:INSUFFICIENT_EVIDENCE",
        "citations-valid (citations_valid)": "failure:FAIL",
        "gate": "failure:BLOCK",
    }
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (4, 4, 0, 0)
    root = ET.parse(blackbox / "reports" / "junit.xml").getroot()
    assert root.tag == "testsuites" and root.get("tests") == "4" and root.get("failures") == "4"
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["run_id"] == done.lines[0].split()[1] and props["gate"] == "BLOCK (exit 1)"


def test_run_junit_cases_has_a_test_per_case(blackbox: Path) -> None:
    app = blackbox / "app.py"
    app.write_text(
        app.read_text().replace(
            "def run(case):\n",
            "def run(case):\n    if case['question'].startswith('What are the support'):\n"
            "        raise ValueError('index offline')\n",
        )
    )
    done = oloproof("run", "--junit", "j.xml", "--junit-cases", cwd=blackbox)
    assert done.code == 1, done.err
    xml = JUnitXml.fromfile(str(blackbox / "j.xml"))
    rules, cases = list(xml)
    assert rules.tests == 4 and cases.tests == 15
    outcomes = {case.name: _outcome(case) for case in cases}
    assert outcomes["office_hours"] == "error:ValueError"
    assert outcomes["money_back"] == "failure:failed"
    assert outcomes["invoice_copy"] == "passed"
    by_name = {case.name: case for case in cases}
    failure = next(iter(by_name["money_back"].result))
    assert failure.message.startswith("answer_correct: failed; hit_rate_at_2: failed")
    run_id = done.lines[0].split()[1]
    assert failure.text == f"oloproof inspect {run_id} --case money_back"
    assert next(iter(by_name["office_hours"].result)).message == "index offline"


def test_a_passing_gate_is_a_green_report(blackbox: Path) -> None:
    (blackbox / "lenient.yaml").write_text(
        "version: 1\nrules:\n  - id: any\n    metric: answer_correct\n    min: 0.1\n"
    )
    done = oloproof("run", "--policy", "lenient.yaml", "--junit", "ok.xml", cwd=blackbox)
    assert done.code == 0, done.err
    suite = next(iter(JUnitXml.fromfile(str(blackbox / "ok.xml"))))
    assert (suite.tests, suite.failures, suite.errors) == (2, 0, 0)


def test_junit_cases_needs_junit(blackbox: Path) -> None:
    done = oloproof("run", "--junit-cases", cwd=blackbox)
    assert (done.code, done.err) == (
        2,
        "error: --junit-cases adds cases to the --junit file; give --junit FILE\n",
    )


def test_run_summary_is_markdown_and_appends_to_the_step_summary(blackbox: Path) -> None:
    step = blackbox / "step-summary.md"
    step.write_text("earlier step\n")
    env = {"GITHUB_STEP_SUMMARY": str(step)}
    done = oloproof("run", "--summary", str(step), cwd=blackbox, env=env)
    assert done.code == 1
    text = step.read_text()
    assert text.startswith("earlier step\n### Oloproof run `run_")
    assert "**Gate: BLOCK (exit 1)** · DECIDED/COMPLETE · 15 of 15 cases" in text
    assert (
        "| citations-valid | citations_valid | **FAIL** | observed_failures_exceed_limit |" in text
    )
    assert (
        "| answer_correct | 73.3% | [44.8%, 92.3%] | 11 / 15 observed · 0 missing · 0 excluded |"
        in text
    )
    plain = oloproof("run", "--summary", "pr.md", cwd=blackbox)
    assert plain.code == 1 and (blackbox / "pr.md").read_text().startswith("### Oloproof run")


def _two_runs(blackbox: Path) -> tuple[str, str]:
    base = oloproof("run", cwd=blackbox)
    app = blackbox / "app.py"
    app.write_text(app.read_text().replace("EXPAND_QUERY = False", "EXPAND_QUERY = True"))
    cand = oloproof("run", cwd=blackbox)
    return cand.lines[0].split()[1], base.lines[0].split()[1]


def test_compare_cases_json_and_ci_files_name_the_changed_cases(blackbox: Path) -> None:
    cand, base = _two_runs(blackbox)
    plain = oloproof("compare", cand, base, "--policy", "compare.yaml", cwd=blackbox)
    assert not any(line.startswith("Changed cases") for line in plain.lines)  # the guide's output
    done = oloproof(
        "compare",
        cand,
        base,
        "--policy",
        "compare.yaml",
        "--cases",
        "--junit",
        "c.xml",
        "--summary",
        "c.md",
        cwd=blackbox,
    )
    assert done.code == 3, done.err
    at = done.lines.index("Changed cases: 4 improved, 0 regressed")
    assert done.lines[at + 1] == (
        f"  answer_correct  money_back  fail → pass  improved  oloproof inspect {cand} --case "
        f"money_back · oloproof inspect {base} --case money_back"
    )
    assert done.lines[at + 5] == "Decisions"
    data = json.loads(oloproof("compare", cand, base, "--json", cwd=blackbox).out)
    flipped = [f for f in data["flipped"] if f["metric"] == "answer_correct"]
    row = next(m for m in data["metrics"] if m["metric"] == "answer_correct")
    assert len(flipped) == row["difference"]["b"] + row["difference"]["c"] == 1
    assert flipped[0] == {
        "metric": "answer_correct",
        "case_id": "money_back",
        "candidate": "pass",
        "baseline": "fail",
        "direction": "improved",
        "candidate_case": f"oloproof inspect {cand} --case money_back",
        "baseline_case": f"oloproof inspect {base} --case money_back",
    }
    suite = next(iter(JUnitXml.fromfile(str(blackbox / "c.xml"))))
    assert {c.name: _outcome(c) for c in suite} == {
        "answers-not-worse (answer_correct)": "failure:INSUFFICIENT_EVIDENCE",
        "citations-not-worse (citations_valid)": "failure:INSUFFICIENT_EVIDENCE",
        "gate": "failure:BLOCK",
    }
    summary = (blackbox / "c.md").read_text()
    assert "| answer_correct | +6.7 points | [-26.5, +40.8] | 15 | 0 | 0 |" in summary
    assert (
        f"| answer_correct | money_back | fail | pass | `oloproof inspect {cand} --case money_back` |"
        in summary
    )


HOSTILE_APP = """
from oloproof import system

@system(name="hostile", version="1")
def run(case):
    if case["q"] == "boom":
        raise RuntimeError('<img src="https://attacker.example/p.png"> **Gate: PASS**\\n<!--')
    return {"answer": case["q"]}
"""


def test_text_from_the_cases_cannot_forge_the_summary(tmp_path: Path) -> None:
    # A case id that opens a heading and an HTML comment, and an error message with an image:
    # written raw, GitHub rendered a "Gate: PASS (exit 0)" heading and hid the real table.
    forged = "a\n\n## Gate: PASS (exit 0)\n\n<!--"
    cases = [
        {"id": forged, "input": {"q": "boom"}, "expected": {"answer": "x"}},
        {"id": "b|c", "input": {"q": "x"}, "expected": {"answer": "x"}},
    ]
    root = write_project(
        tmp_path / "p",
        app=HOSTILE_APP,
        config="system: {name: hostile, version: '1', callable: app:run}\n"
        "evaluators:\n  - {type: contains, criterion: echo, field: answer, expected_field: "
        "answer}\npolicy: policy.yaml\n",
        policy="version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n",
        cases=cases,
    )
    # Such an id is refused in a cases file now; a ledger written before still holds it.
    done = oloproof_unchecked_ids("run", "--summary", "s.md", cwd=root)
    assert done.code == 3, done.out + done.err
    text = (root / "s.md").read_text()
    lines = text.splitlines()
    assert not any(line.lstrip().startswith("#") and "Gate" in line for line in lines), text
    # Only escaped: no "<" or "**" from the case's text reaches the renderer as syntax.
    assert not re.search(r"(?<!\\)<", text), text
    assert not re.search(r"(?<!\\)\*\*Gate: PASS", text), text
    assert sum("Gate:" in line for line in lines) == 2, text  # the real one, and the message's
    assert "**Gate: BLOCK (exit 3)**" in text
    errored = next(line for line in lines if "cases errored" in line)
    assert '\\<img src="https://\u2060attacker.example/p.png"\\> \\*\\*Gate: PASS\\*\\*' in errored
    # The id's newlines are shown as \n (then escaped for Markdown), on the one line.
    assert "(first: a\\\\n\\\\n## Gate: PASS (exit 0)\\\\n\\\\n\\<!--)" in errored, errored


def test_text_from_the_cases_cannot_reorder_the_summary(tmp_path: Path) -> None:
    # A right-to-left override in an id or an error message turns the rest of its line around
    # as it is shown ("BLOCK" read backwards, a table cell that reads as another): each such
    # mark is shown as its escape instead, in every part of the summary.
    marks = "\u202e\u2066\u200f"
    cases = [
        {"id": f"x{marks}KCOLB", "input": {"q": "boom"}, "expected": {"answer": "x"}},
        {"id": f"y{marks}", "input": {"q": "miss"}, "expected": {"answer": "x"}},
    ]
    app = HOSTILE_APP.replace("'<img", "'\\u202e<img")
    root = write_project(
        tmp_path / "p",
        app=app,
        config="system: {name: hostile, version: '1', callable: app:run}\n"
        "evaluators:\n  - {type: contains, criterion: echo, field: answer, expected_field: "
        "answer}\npolicy: policy.yaml\n",
        policy="version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n",
        cases=cases,
    )
    # Such ids are refused in a cases file now; a ledger written before still holds them.
    done = oloproof_unchecked_ids(
        "run", "--summary", "s.md", "--junit", "j.xml", "--junit-cases", cwd=root
    )
    assert done.code == 3, done.out + done.err
    text = (root / "s.md").read_text()
    assert not any(mark in text for mark in marks), ascii(text)
    assert "x\\\\u202e\\\\u2066\\\\u200fKCOLB" in text, text

    # The comparison's table of changed cases shows the ids as they are, in its cells.
    base_id = done.lines[0].split()[1]
    (root / "app.py").write_text(
        app.replace(
            'return {"answer": case["q"]}', 'return {"answer": "x" if case["q"] == "miss" else 1}'
        )
    )
    (root / "oloproof.yaml").write_text((root / "oloproof.yaml").read_text().replace("'1'", "'2'"))
    candidate = oloproof_unchecked_ids("run", cwd=root)
    compared = oloproof(
        "compare", candidate.lines[0].split()[1], base_id, "--summary", "c.md", cwd=root
    )
    assert compared.code == 0, compared.out + compared.err
    text = (root / "c.md").read_text()
    assert "| echo | y\\\\u202e\\\\u2066\\\\u200f | fail | pass |" in text, ascii(text)
    assert not any(mark in text for mark in marks), ascii(text)
