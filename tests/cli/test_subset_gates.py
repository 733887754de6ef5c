"""A count of failures over part of the suite cannot say the suite never fails: through the real
CLI.

The defect: 300 cases of which 150 fail, and a policy that says the metric must never fail
(``kind: observed_count``, ``max_failures: 0``). ``oloproof run --sample 1`` drew a passing case,
the rule said PASS and the gate ``PASS (exit 0)``. Now such a rule is INSUFFICIENT_EVIDENCE
(``subset_of_cases``) on a run whose ``--sample`` or ``--limit`` may have left cases out, and
says how many of how many ran, in the report, ``inspect``, the Markdown summary and JUnit; the
failures a subset does hold still FAIL it; ``--filter`` alone gates the part it chose as before;
interval rules decide as on any run. A decision recorded before (schema 1) still re-derives as
it was made.

And a ``--sample`` larger than the cases it draws from is refused before anything is written,
where it ran them all and reported a sample that never happened.
"""

from __future__ import annotations

import html
import json
import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from tests.support import Result, decision_recorded_at, oloproof, stale_when_current
from tests.view.support import fetch, serving

CASES = 300
PASSING = 150  # cases c0 … c149 pass; c150 … c299 fail

APP = """
from oloproof import system

@system(name="half", version="1")
def half(case):
    return {"answer": "yes" if case["q"] < 150 else "no"}
"""

CONFIG = """\
system: {name: half, version: "1", callable: "app:half"}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
policy: policy.yaml
"""

POLICY = """\
version: 1
rules:
  - {id: floor, metric: answer_correct, min: 0.5}
  - {id: never, metric: answer_correct, kind: observed_count, max_failures: 0}
"""


def never_line(planned: int) -> str:
    return (
        f"never: only {planned} of {CASES} cases ran; 0 failures among them cannot show that the "
        "suite stays within max_failures 0 (run without --sample or --limit to decide it)"
    )


def project(root: Path) -> Path:
    root.mkdir()
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "policy.yaml").write_text(POLICY)
    lines = [
        json.dumps(
            {
                "id": f"c{i}",
                "input": {"q": i},
                "expected": {"answer": "yes"},
                "metadata": {"half": "first" if i < PASSING else "second"},
            }
        )
        for i in range(CASES)
    ]
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n")
    return root


def passing_seed() -> int:
    """A seed whose sample of one case draws a passing case (``oloproof.subset``'s draw)."""
    return next(s for s in range(100) if random.Random(s).sample(range(CASES), 1)[0] < PASSING)


def run_id(done: Result) -> str:
    return done.lines[0].split()[1]


def rules(done: Result) -> dict[str, tuple[str, str]]:
    """The rules table of a report, as rule id -> (decision, reason)."""
    found = {}
    for line in done.lines:
        cells = [c.strip() for c in line.strip("│").split("│")]
        if line.startswith("│") and cells[0] in ("floor", "never"):
            found[cells[0]] = (cells[2], cells[3])
    return found


def test_a_count_over_a_sample_cannot_say_the_suite_never_fails(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    seed = str(passing_seed())
    args = ("--sample", "1", "--seed", seed, "--summary", "s.md", "--junit", "j.xml")
    done = oloproof("run", *args, cwd=root)
    assert done.code == 3, done.out + done.err  # was 0: Gate: PASS on the one passing case
    assert done.lines[1] == f"Subset: 1 of 300 cases (sample 1, seed {seed})"
    assert done.lines[2] == "Gate: BLOCK (exit 3)"
    # The interval rule reads the one case as the sample it is, as before.
    assert rules(done) == {
        "floor": ("INSUFFICIENT_EVIDENCE", "interval_overlaps_threshold"),
        "never": ("INSUFFICIENT_EVIDENCE", "subset_of_cases"),
    }
    assert never_line(1) in done.lines

    run = run_id(done)
    again = oloproof("inspect", run, cwd=root)
    assert rules(again) == rules(done) and never_line(1) in again.lines
    report = json.loads(oloproof("inspect", run, "--json", cwd=root).out)
    never = next(r for r in report["rules"] if r["rule_id"] == "never")
    assert never["detail"] == {
        "failures": 0,
        "observed": 1,
        "max_failures": 0,
        "subset": {"planned": 1, "total": 300},
    }

    summary = (root / "s.md").read_text().splitlines()
    assert "| never | answer_correct | **INSUFFICIENT_EVIDENCE** | subset_of_cases |" in summary
    assert never_line(1) in summary
    case = ET.parse(root / "j.xml").getroot().find(".//testcase[@name='never (answer_correct)']")
    assert case is not None
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "INSUFFICIENT_EVIDENCE"
    assert failure.get("message") == "INSUFFICIENT_EVIDENCE: subset_of_cases"
    assert never_line(1) in (failure.text or "").splitlines()

    listed = json.loads(oloproof("runs", "--json", cwd=root).out)[0]
    assert (listed["gate"], listed["exit_code"]) == ("BLOCK", 3)
    with serving(root) as url:
        status, page = fetch(f"{url}/runs/{run}")
    assert status == 200
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))
    assert f"Subset 1 of 300 cases (sample 1, seed {seed})" in text
    assert never_line(1) in text
    assert oloproof("verify", cwd=root).code == 0


def test_the_failures_a_sample_holds_still_fail_the_rule(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    done = oloproof("run", "--sample", "30", "--seed", "1", cwd=root)
    assert done.code == 1, done.out + done.err
    assert rules(done)["never"] == ("FAIL", "observed_failures_exceed_limit")


def test_a_limit_is_a_subset_too(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    done = oloproof("run", "--limit", "10", cwd=root)
    assert done.code == 3, done.out + done.err  # was 0: c0 … c9 all pass
    assert rules(done) == {
        "floor": ("PASS", "interval_above_threshold"),
        "never": ("INSUFFICIENT_EVIDENCE", "subset_of_cases"),
    }
    assert never_line(10) in done.lines
    assert oloproof("verify", cwd=root).code == 0


def test_a_filter_alone_gates_the_part_it_chose(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    chosen = ("--filter", "metadata.half=first")
    done = oloproof("run", *chosen, cwd=root)
    assert done.code == 0, done.out + done.err
    assert done.lines[1] == "Subset: 150 of 300 cases (metadata.half=first)"
    assert rules(done)["never"] == ("PASS", "observed_failures_within_limit")
    # A limit the filtered cases never reach leaves none of them out.
    whole = oloproof("run", *chosen, "--limit", "500", cwd=root)
    assert whole.code == 0, whole.out + whole.err
    assert rules(whole)["never"] == ("PASS", "observed_failures_within_limit")
    # One that cuts them short does.
    part = oloproof("run", *chosen, "--limit", "20", cwd=root)
    assert part.code == 3, part.out + part.err
    assert rules(part)["never"] == ("INSUFFICIENT_EVIDENCE", "subset_of_cases")
    assert never_line(20) in part.lines
    assert oloproof("verify", cwd=root).code == 0


def _as_schema_1(body: dict[str, Any]) -> dict[str, Any]:
    """The decision the code before schema 2 recorded for the one-case sample: PASS."""
    old = {key: value for key, value in body.items() if key != "count_rules_need_suite"}
    for rule in old["rules"]:
        if rule["reason"] == "subset_of_cases":
            del rule["detail"]["subset"]
            rule.update(outcome="PASS", reason="observed_failures_within_limit")
    old["gate"] = {"blocked": True, "exit_code": 3}  # the floor rule still blocks
    return old


def test_a_decision_of_schema_1_re_derives_as_it_was_made(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    done = oloproof("run", "--sample", "1", "--seed", str(passing_seed()), cwd=root)
    assert done.code == 3, done.out + done.err
    old, body, refs = decision_recorded_at(root, 1, _as_schema_1)
    # Read through its upcaster: not decided by today's rule for counts.
    raw = json.loads(oloproof("inspect", old, "--json", cwd=root).out)
    assert raw["body"]["count_rules_need_suite"] is False
    assert raw["body"]["rules"][1]["outcome"] == "PASS"
    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out + verified.err
    assert "re-derived 2 decision(s)" in verified.out

    # The same PASS recorded at today's schema claims a rule it was not decided by.
    stale = stale_when_current(root, {**body, "count_rules_need_suite": True}, refs)
    assert "rules[1].outcome: stored 'PASS', re-derived 'INSUFFICIENT_EVIDENCE'" in stale


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--sample", "301"],
            "error: --sample 301 asks for more cases than the 300 in the cases file; drop "
            "--sample to run them all\n",
        ),
        (
            ["--sample", "151", "--seed", "3", "--filter", "metadata.half=first"],
            "error: --sample 151 asks for more cases than the 150 selected by --filter "
            "metadata.half=first; drop --sample to run them all\n",
        ),
        (
            ["--dry-run", "--sample", "301"],
            "error: --sample 301 asks for more cases than the 300 in the cases file; drop "
            "--sample to run them all\n",
        ),
    ],
)
def test_a_sample_larger_than_its_cases_is_refused_before_anything_is_written(
    tmp_path: Path, args: list[str], message: str
) -> None:
    root = project(tmp_path / "p")
    done = oloproof("run", *args, cwd=root)
    # Was exit 0, reporting "Subset: 300 of 300 cases (sample 301, seed …)".
    assert (done.code, done.err, done.out) == (2, message, "")
    assert not (root / ".oloproof").exists()


def test_a_sample_of_every_filtered_case_is_still_read_as_a_sample(tmp_path: Path) -> None:
    # The run records the sample's size, not how many cases the filter kept: a sample of all of
    # them cannot be told from a sample of some, and the count is not taken for the suite's.
    root = project(tmp_path / "p")
    chosen = ("--filter", "metadata.half=first", "--sample", "150", "--seed", "3")
    done = oloproof("run", *chosen, cwd=root)
    assert done.code == 3, done.out + done.err
    assert done.lines[1] == "Subset: 150 of 300 cases (sample 150, seed 3; metadata.half=first)"
    assert rules(done)["never"] == ("INSUFFICIENT_EVIDENCE", "subset_of_cases")
