"""A comparison gate with nothing under it blocks and says why, through the real CLI.

The probe: a baseline that answers its 5 cases, a candidate whose system raises on every one,
compared under a policy with ``block_on: [FAIL]``. No case was paired, the rule came out
INSUFFICIENT_EVIDENCE (``no_paired_cases``), nothing blocked, and the comparison read
``Gate: PASS (exit 0)`` in the terminal, the Markdown summary and the JUnit file (the gate test
passed): a candidate that answered nothing compared as green as one that was checked.

Such a gate now BLOCKs (exit 3) whatever ``block_on`` says (comparison schema 5,
``no_evidence_blocks``), as a release gate with nothing under it does, and a line under the gate
says why. A comparison an earlier release recorded (schema 4, which let ``block_on`` pass it)
still verifies and still reads as it was made, with a line saying what let it pass.
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from tests.support import Result, earlier_release, oloproof, verified_as_made, write_project
from tests.view.support import fetch, serving

from ledger import Event, decode
from oloproof import events as ev
from oloproof.store import open_project_ledger

APP = """
from oloproof import system

@system(name="toy", version="1")
def run(case):
    return {"answer": case["q"]}

@system(name="broken", version="1")
def broken(case):
    raise RuntimeError("boom")
"""

CONFIG = """\
system: {{name: {name}, version: "1", callable: "app:{func}"}}
dataset: cases.jsonl
evaluators:
  - {{type: contains, criterion: answered, field: answer, expected_field: answer}}
{more}"""

# A schema that is itself, without end, through $dynamicRef (a $ref loop is refused when the
# run is planned; this one is not looked for): validating anything recurses until Python's recursion
# limit stops it, so every judgment of "shaped" is missing (evaluator_raised), in both runs.
SHAPED = '  - {type: json_schema, criterion: shaped, schema: {"$dynamicAnchor": "s", "$dynamicRef": "#s"}}\n'

RULES = "rules:\n  - {id: not-worse, metric: answered, non_inferiority: {margin: 5}}\n"
SHAPED_RULE = "  - {id: well-shaped, metric: shaped, non_inferiority: {margin: 5}}\n"

UNPAIRED = "No case was paired: 5 errored in candidate, so no rule had a pair to decide on"
ALONE = "that alone blocks the gate, whatever block_on lists"
LET_THROUGH = (
    "the gate passed only because block_on does not list INSUFFICIENT_EVIDENCE, which an "
    "earlier release allowed"
)


def project(root: Path, *, block_on: str | None, more: str = "", rules: str = RULES) -> Path:
    """Five cases; ``oloproof.yaml`` runs the answering system, ``broken.yaml`` the raising one,
    both with the evaluators ``more`` adds; ``compare.yaml`` holds the comparison policy."""
    made = write_project(
        root,
        app=APP,
        config=CONFIG.format(name="toy", func="run", more=more),
        policy="version: 1\nrules: []\n",  # unused: the runs have no release policy
        cases=({"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}}
               for i in range(5)),
    )  # fmt: skip
    (made / "broken.yaml").write_text(CONFIG.format(name="broken", func="broken", more=more))
    head = "version: 1\n" + (f"block_on: {block_on}\n" if block_on else "")
    (made / "compare.yaml").write_text(head + rules)
    return made


def run_id(root: Path, *args: str) -> str:
    done = oloproof("run", "--json", *args, cwd=root)
    assert done.code == 0, done.out + done.err
    return str(json.loads(done.out)["run_id"])


def compare(root: Path, candidate: str, baseline: str, *args: str, **kw: Any) -> Result:
    return oloproof(
        "compare", candidate, baseline, "--policy", "compare.yaml", *args, cwd=root, **kw
    )


def _under_gate(done: Result) -> list[str]:
    """The gate line and the lines after it."""
    at = next(i for i, line in enumerate(done.lines) if line.startswith("Gate:"))
    return done.lines[at:]


def _gate_test(junit: Path) -> ET.Element:
    (case,) = (c for c in ET.parse(junit).getroot().iter("testcase") if c.get("name") == "gate")
    return case


def _page_text(root: Path, address: str) -> str:
    """The viewer's page of the comparison, as text."""
    with serving(root) as url:
        status, page = fetch(f"{url}/comparisons/{address}")
    assert status == 200
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def _comparison(root: Path) -> tuple[str, int, dict[str, Any], tuple[str, ...]]:
    """The project's one comparison: its address, the schema it is stored at, its body as read
    (upcast to today's schema), its refs."""
    with open_project_ledger(root, create=False) as ledger:
        ((address, event),) = ledger.events(ev.COMPARISON)
        stored = decode(ledger.get_bytes(address))["schema"]
        return address, stored, json.loads(json.dumps(event.body)), event.refs


def test_a_comparison_that_paired_no_case_blocks_whatever_block_on_says(tmp_path: Path) -> None:
    root = project(tmp_path / "p", block_on="[FAIL]")
    baseline, candidate = run_id(root), run_id(root, "--config", "broken.yaml")
    done = compare(root, candidate, baseline, "--summary", "summary.md", "--junit", "junit.xml")
    assert done.code == 3, done.out + done.err
    said = f"{UNPAIRED}; {ALONE}"
    assert "  not-worse  answered  non-inferiority, margin 5.0 points  INSUFFICIENT_EVIDENCE  " \
        "no_paired_cases" in done.lines  # fmt: skip
    assert _under_gate(done) == ["Gate: BLOCK (exit 3)", said]
    summary = (root / "summary.md").read_text().splitlines()
    at = next(i for i, line in enumerate(summary) if line.startswith("**Gate: BLOCK (exit 3)**"))
    assert summary[at + 1 : at + 3] == ["", said]
    failure = _gate_test(root / "junit.xml").find("failure")
    assert failure is not None and failure.get("type") == "BLOCK" and failure.text == said
    # `inspect` of the comparison and the viewer show it as stored: BLOCK, and why.
    address, schema, body, _ = _comparison(root)
    assert _under_gate(oloproof("inspect", address, cwd=root)) == ["Gate: BLOCK (exit 3)", said]
    assert f"Gate: BLOCK (exit 3) {said}" in _page_text(root, address)
    # What is stored says the gate was decided so, and re-derives.
    assert (schema, body["no_evidence_blocks"], body["gate"]) == (
        ev.SCHEMAS[ev.COMPARISON],
        True,
        {"blocked": True, "exit_code": 3},
    )
    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out + verified.err


def test_a_blocked_comparison_over_no_pair_says_why(tmp_path: Path) -> None:
    # block_on lists INSUFFICIENT_EVIDENCE (the default): the rule blocks, and the line says
    # only what was paired.
    root = project(tmp_path / "p", block_on=None)
    baseline, candidate = run_id(root), run_id(root, "--config", "broken.yaml")
    done = compare(root, candidate, baseline, "--junit", "junit.xml")
    assert done.code == 3, done.out + done.err
    assert _under_gate(done) == ["Gate: BLOCK (exit 3)", UNPAIRED]
    failure = _gate_test(root / "junit.xml").find("failure")
    assert failure is not None and failure.text == UNPAIRED


def test_a_rule_that_observed_no_pair_blocks_beside_paired_cases(tmp_path: Path) -> None:
    root = project(tmp_path / "p", block_on="[FAIL]", more=SHAPED, rules=RULES + SHAPED_RULE)
    # Two runs of the answering system: every case pairs, and no judgment of `shaped` exists.
    baseline, candidate = run_id(root), run_id(root)
    done = compare(root, candidate, baseline, "--json")
    assert done.code == 3, done.out + done.err
    data = json.loads(done.out)
    assert data["paired_cases"] == 5
    assert [(d["id"], d["reason"]) for d in data["decisions"]] == [
        ("not-worse", "interval_overlaps_margin"),
        ("well-shaped", "no_paired_cases"),
    ]
    said = f"Rule well-shaped observed no pair, so nothing decided it; {ALONE}"
    assert _under_gate(oloproof("inspect", data["address"], cwd=root)) == [
        "Gate: BLOCK (exit 3)",
        said,
    ]


def test_an_ordinary_comparison_has_no_such_line(tmp_path: Path) -> None:
    root = project(tmp_path / "p", block_on=None)
    baseline, candidate = run_id(root), run_id(root)
    done = compare(root, candidate, baseline, "--summary", "summary.md", "--junit", "junit.xml")
    assert done.code == 3, done.out + done.err  # 5 pairs cannot rule out a 5-point loss
    assert "· 5 paired cases" in done.lines[0]
    assert _under_gate(done) == ["Gate: BLOCK (exit 3)"]
    summary = (root / "summary.md").read_text().splitlines()
    at = next(i for i, line in enumerate(summary) if line.startswith("**Gate: BLOCK (exit 3)**"))
    assert summary[at + 1 : at + 3] == [
        "",
        "| metric | difference | interval | paired | missing | excluded |",
    ]
    failure = _gate_test(root / "junit.xml").find("failure")
    assert failure is not None and failure.text is None
    address, _, body, _ = _comparison(root)
    assert body["no_evidence_blocks"] is True
    page = _page_text(root, address)
    assert "No case was paired" not in page and "observed no pair" not in page


# An earlier release (comparison schema 4), whose gate block_on let pass however little was
# under it: today's rule switched off, and the comparison stored at its schema, without the flag.
EARLIER_RELEASE = earlier_release({ev.COMPARISON: 4})


def test_a_comparison_an_earlier_release_let_pass_still_verifies_as_it_was_made(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "p", block_on="[FAIL]")
    baseline, candidate = run_id(root), run_id(root, "--config", "broken.yaml")
    earlier = compare(root, candidate, baseline, command=EARLIER_RELEASE)
    assert earlier.code == 0, earlier.out + earlier.err  # what it decided then
    assert "Gate: PASS (exit 0)" in earlier.lines
    address, schema, body, refs = _comparison(root)
    # Stored at schema 4 and read through its upcaster: decided by the rule of its day.
    verified_as_made(root, (schema, body), "no_evidence_blocks", 4, "1 comparison(s)")
    # Today's release shows what was decided then, and what let it pass.
    said = f"{UNPAIRED}; {LET_THROUGH}"
    assert _under_gate(oloproof("inspect", address, cwd=root)) == ["Gate: PASS (exit 0)", said]
    assert said in _page_text(root, address)

    # The same PASS recorded at today's schema claims a rule it was not decided by.
    with open_project_ledger(root, create=False) as ledger:
        current = {**body, "no_evidence_blocks": True}
        forged = ledger.put(Event(ev.COMPARISON, ev.SCHEMAS[ev.COMPARISON], current, refs))
    verified = oloproof("verify", cwd=root)
    assert verified.code == 1, verified.out + verified.err
    stale = [line for line in verified.lines if line.startswith(f"StaleSummary {forged}")]
    assert stale == [
        f"StaleSummary {forged}: comparison: gate.blocked: stored False, re-derived True; "
        "gate.exit_code: stored 0, re-derived 3"
    ]
