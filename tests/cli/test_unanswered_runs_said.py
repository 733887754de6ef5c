"""A gate with nothing under it blocks and says why, through the real CLI.

The probe: a system that raises on every one of its 5 cases, under a policy with
``block_on: [FAIL]``. Both rules came out INSUFFICIENT_EVIDENCE (``no_observed_cases``), nothing
blocked, and the run read ``Gate: PASS (exit 0)``: the terminal report, the Markdown summary
(``**Gate: PASS (exit 0)**``), the JUnit file (every test passed or skipped), ``runs`` and the
viewer gave a run that answered no case the same green as a release that was checked. The same
held for a rule whose every judgment was missing (an evaluator that raised on each case) beside
cases that were answered.

Such a gate now BLOCKs (exit 3) whatever ``block_on`` says (decision schema 4,
``no_evidence_blocks``), and the line under the gate says that this alone blocks it. A decision
an earlier release recorded (schema 3, which let ``block_on`` pass it) still verifies and still
reads as it was made, with a line saying what let it pass.
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from tests.support import (
    Result,
    earlier_release,
    oloproof,
    stale_when_current,
    verified_as_made,
    write_project,
)
from tests.view.support import fetch, serving

from ledger import decode
from oloproof import events as ev
from oloproof.store import open_project_ledger

APP = """
from oloproof import system

@system(name="toy", version="1")
def run(case):
    if case["q"].startswith("raise"):
        raise RuntimeError("boom")
    return {"answer": case["q"]}
"""

CONFIG = """\
system: {name: toy, version: "1", callable: app:run}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""

# A schema that is itself, without end, through $dynamicRef (a $ref loop is refused when the
# run is planned; this one is not looked for): validating anything recurses until Python's recursion
# limit stops it, so every judgment of "shaped" is missing (evaluator_raised).
SHAPED = '  - {type: json_schema, criterion: shaped, schema: {"$dynamicAnchor": "s", "$dynamicRef": "#s"}}\n'

RULES = """\
rules:
  - {id: floor, metric: answered, min: 0.5}
  - {id: never, metric: answered, kind: observed_count, max_failures: 0}
"""

ALONE = "that alone blocks the gate, whatever block_on lists"
LET_THROUGH = (
    "the gate passed only because block_on does not list INSUFFICIENT_EVIDENCE, which an "
    "earlier release allowed"
)
UNANSWERED = "No case was answered: all 5 cases errored, so no rule had a case to decide on"


def project(root: Path, questions: list[str], *, block_on: str | None, config: str = CONFIG,
            rules: str = RULES) -> Path:  # fmt: skip
    head = "version: 1\n" + (f"block_on: {block_on}\n" if block_on else "")
    return write_project(
        root,
        app=APP,
        config=config,
        policy=head + rules,
        cases=({"id": q, "input": {"q": q}, "expected": {"answer": q}} for q in questions),
    )


def _under_gate(done: Result) -> list[str]:
    """The gate line and the line after it."""
    at = next(i for i, line in enumerate(done.lines) if line.startswith("Gate:"))
    return done.lines[at : at + 2]


def _gate_test(junit: Path) -> ET.Element:
    (case,) = (c for c in ET.parse(junit).getroot().iter("testcase") if c.get("name") == "gate")
    return case


ALL_RAISE = [f"raise{i}" for i in range(5)]


def _page_text(root: Path, run_id: str) -> str:
    """The viewer's page of the run, as text."""
    with serving(root) as url:
        status, page = fetch(f"{url}/runs/{run_id}")
    assert status == 200
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def _decision(root: Path) -> tuple[int, dict[str, Any], tuple[str, ...]]:
    """The project's one decision: the schema it is stored at, its body as read (upcast to
    today's schema), its refs."""
    with open_project_ledger(root, create=False) as ledger:
        ((address, event),) = ledger.events(ev.DECISION)
        stored = decode(ledger.get_bytes(address))["schema"]
        return stored, json.loads(json.dumps(event.body)), event.refs


def test_a_run_that_answered_no_case_blocks_whatever_block_on_says(tmp_path: Path) -> None:
    root = project(tmp_path / "p", ALL_RAISE, block_on="[FAIL]")
    done = oloproof("run", "--summary", "summary.md", "--junit", "junit.xml", cwd=root)
    assert done.code == 3, done.out + done.err
    said = f"{UNANSWERED}; {ALONE}"
    assert _under_gate(done) == ["Gate: BLOCK (exit 3)", said]
    summary = (root / "summary.md").read_text().splitlines()
    at = summary.index("**Gate: BLOCK (exit 3)** · DECIDED/PARTIAL · 5 of 5 cases")
    assert summary[at + 1 : at + 3] == ["", said]
    failure = _gate_test(root / "junit.xml").find("failure")
    assert failure is not None and failure.get("type") == "BLOCK" and failure.text == said
    # `inspect` of the run, `runs` and the viewer show the decision as stored: BLOCK.
    run_id = done.lines[0].split()[1]
    assert _under_gate(oloproof("inspect", run_id, cwd=root)) == ["Gate: BLOCK (exit 3)", said]
    listed = json.loads(oloproof("runs", "--json", cwd=root).out)[0]
    assert (listed["gate"], listed["exit_code"]) == ("BLOCK", 3)
    assert said in _page_text(root, run_id)
    # What is stored says the gate was decided so, and re-derives.
    schema, body, _ = _decision(root)
    assert (schema, body["no_evidence_blocks"], body["gate"]) == (
        ev.SCHEMAS[ev.DECISION],
        True,
        {"blocked": True, "exit_code": 3},
    )
    assert oloproof("verify", cwd=root).code == 0


def test_a_blocked_gate_over_no_answered_case_says_why(tmp_path: Path) -> None:
    # block_on lists INSUFFICIENT_EVIDENCE (the default): the rules block, and the line says
    # only what the run answered.
    root = project(tmp_path / "p", ALL_RAISE, block_on=None)
    done = oloproof("run", "--junit", "junit.xml", cwd=root)
    assert done.code == 3, done.out + done.err
    assert _under_gate(done) == ["Gate: BLOCK (exit 3)", UNANSWERED]
    failure = _gate_test(root / "junit.xml").find("failure")
    assert failure is not None and failure.text == UNANSWERED


def test_a_rule_that_observed_no_case_blocks_beside_answered_cases(tmp_path: Path) -> None:
    rules = RULES + "  - {id: well-shaped, metric: shaped, min: 0.5}\n"
    root = project(
        tmp_path / "p", ["a", "b", "c"], block_on="[FAIL]", config=CONFIG + SHAPED, rules=rules
    )
    done = oloproof("run", "--json", cwd=root)
    assert done.code == 3, done.out + done.err
    report = json.loads(done.out)
    assert [(r["rule_id"], r["reason"]) for r in report["rules"]][2] == (
        "well-shaped",
        "no_observed_cases",
    )
    done = oloproof("run", cwd=root)
    assert _under_gate(done) == [
        "Gate: BLOCK (exit 3)",
        f"Rule well-shaped observed no case, so nothing decided it; {ALONE}",
    ]


def test_a_run_with_answered_cases_says_only_what_block_on_let_through(tmp_path: Path) -> None:
    """Not a gate with nothing under it: it passes (exit 0), as block_on chose, and the line
    under it names the rules it let through (tests/cli/test_gate_passed_on_rules_let_through_said.py),
    where it once said nothing."""
    root = project(tmp_path / "p", ["a", "raise1", "c"], block_on="[FAIL]")
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    assert _under_gate(done) == [
        "Gate: PASS (exit 0)",
        "The gate passed only because block_on does not list INSUFFICIENT_EVIDENCE: the run did "
        "not show rules floor, never met",
    ]
    at = done.lines.index("Gate: PASS (exit 0)")
    assert done.lines[at + 2].startswith("┌")  # the rules table follows


# An earlier release (decision schema 3), whose gate block_on let pass however little was
# under it: today's rule switched off, and the decision stored at its schema, without the flag.
EARLIER_RELEASE = earlier_release({ev.DECISION: 3})


def test_a_gate_an_earlier_release_let_pass_still_verifies_as_it_was_made(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "p", ALL_RAISE, block_on="[FAIL]")
    earlier = oloproof("run", cwd=root, command=EARLIER_RELEASE)
    assert earlier.code == 0, earlier.out + earlier.err  # what it decided then
    run_id = earlier.lines[0].split()[1]
    schema, body, refs = _decision(root)
    # Stored at schema 3 and read through its upcaster: decided by the rule of its day.
    verified_as_made(root, (schema, body), "no_evidence_blocks", 3, "re-derived 1 decision(s)")
    # Today's release shows what was decided then, and what let it pass.
    said = f"{UNANSWERED}; {LET_THROUGH}"
    assert _under_gate(oloproof("inspect", run_id, cwd=root)) == ["Gate: PASS (exit 0)", said]
    listed = json.loads(oloproof("runs", "--json", cwd=root).out)[0]
    assert (listed["gate"], listed["exit_code"]) == ("PASS", 0)

    # The same PASS recorded at today's schema claims a rule it was not decided by.
    stale = stale_when_current(root, {**body, "no_evidence_blocks": True}, refs)
    assert "gate.blocked: stored False, re-derived True" in stale
