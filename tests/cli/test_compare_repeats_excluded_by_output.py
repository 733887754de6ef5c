"""A repeat that its output alone excluded, in a case the other run observed, counts in a
comparison as a repeat without a verdict: it is never dropped from its case.

The probe: a baseline cited its one context passage in each of 240 cases; the candidate, run
with `--repeats 3`, cited it on the first call of each case and recorded no citations on the
other two (as a system does that records them only when it has good ones). Each candidate case
combined to 1.000 on its one judged repeat, the two `no_citations_recorded` repeats left out as
if they had not run, so the comparison read 240 pairs with no difference and a 5-point
non-inferiority rule passed (`Gate: PASS (exit 0)`). Run once, the same candidate's cases with
no citations recorded are missing pairs (`test_compare_output_exclusions_missing`): a repeat
that drops exactly what it would fail must not pass where a case doing so does not. Such a
repeat now counts as a repeat without a verdict does (against the candidate for the lower
bound, for it for the upper), so the rule is INSUFFICIENT_EVIDENCE (`missing_cases_decide`), and
`verify` re-derives the comparison. A comparison an earlier release recorded so is re-derived
as it was made.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.betting_reference import paired
from tests.support import (
    earlier_release,
    oloproof,
    stored_event,
    verified_as_made,
    write_project,
)

APP = """
import os

from oloproof import Context, ContextItem, current_case, system

KB = Context(items=(ContextItem(doc_id="kb-1", text="Refunds take 14 days."),))


@system(name="citer", version="1", records=("context/v1", "citations/v1"))
def base(case):
    current_case().context(KB)
    current_case().citations(["kb-1"])
    return {"answer": "x"}


@system(name="citer", version="2", records=("context/v1", "citations/v1"))
def cand(case):
    # The first call of a case cites its passage; the later ones record no citations.
    mark = os.path.join("calls", str(case["n"]))
    os.makedirs("calls", exist_ok=True)
    first = not os.path.exists(mark)
    open(mark, "a").close()
    current_case().context(KB)
    if first:
        current_case().citations(["kb-1"])
    return {"answer": "x"}
"""
CONFIG = """\
system: {{name: citer, version: "{version}", callable: "app:{callable}"}}
dataset: cases.jsonl
policy: policy.yaml
concurrency: 1
evaluators:
  - {{type: citation_validity}}
"""


def _runs(tmp_path: Path) -> tuple[Path, str, str]:
    """The project, its candidate run (with ``--repeats 3``) and its baseline run."""
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=CONFIG.format(version="1", callable="base"),
        policy="version: 1\nrules:\n  - {id: floor, metric: citations_valid, min: 0.1}\n",
        cases=({"id": f"c{n}", "input": {"n": n}} for n in range(240)),
    )
    (root / "compare.yaml").write_text(
        "version: 1\nrules:\n  - {id: not-worse, metric: citations_valid, "
        "non_inferiority: {margin: 5}}\n"
    )
    baseline = json.loads(oloproof("run", "--json", cwd=root).out)["run_id"]
    (root / "oloproof.yaml").write_text(CONFIG.format(version="2", callable="cand"))
    done = oloproof("run", "--repeats", "3", "--json", cwd=root)
    return root, json.loads(done.out)["run_id"], baseline


def test_repeats_that_record_nothing_do_not_pass_the_candidate(tmp_path: Path) -> None:
    root, candidate, baseline = _runs(tmp_path)
    args = ("compare", candidate, baseline, "--policy", "compare.yaml")
    done = oloproof(*args, cwd=root)
    assert done.code == 3, done.out + done.err  # was 0: PASS on the one repeat it cited in
    said = "  repeats without a verdict 480: 480 in the candidate, 0 in the baseline, of 240 paired cases"
    assert said in done.out.splitlines()
    as_json = json.loads(oloproof(*args, "--json", cwd=root).out)
    (row,) = as_json["metrics"]
    assert (row["paired"], row["missing"], row["excluded"], row["partial"]) == (240, 0, 0, 240)
    assert row["missing_repeats"] == {"candidate": 480, "baseline": 0}
    # Each case at 1/3 for the lower bound: its two repeats without citations failing.
    assert row["difference"]["lower"] < -0.6
    (rule,) = as_json["decisions"]
    assert (rule["outcome"], rule["reason"]) == ("INSUFFICIENT_EVIDENCE", "missing_cases_decide")
    assert rule["detail"]["observed_only"]["outcome"] == "PASS"
    assert as_json["repeat_exclusions_missing"] is True
    assert oloproof("verify", cwd=root).code == 0
    # The mirror: the same repeats in the baseline count for the candidate's lower bound.
    mirrored = json.loads(oloproof("compare", baseline, candidate, "--json", cwd=root).out)
    assert mirrored["metrics"][0]["missing_repeats"] == {"candidate": 0, "baseline": 480}


def test_a_comparison_recorded_before_is_verified_as_made(tmp_path: Path) -> None:
    root, candidate, baseline = _runs(tmp_path)
    command = earlier_release({"oloproof.comparison": 8})
    args = ("compare", candidate, baseline, "--policy", "compare.yaml")
    assert oloproof(*args, cwd=root, command=command).code == 0
    stored = stored_event(root, "oloproof.comparison")
    verified_as_made(root, stored, "repeat_exclusions_missing", 8, "1 comparison(s)")


BASELINE_APP = """
import os

from oloproof import Context, ContextItem, current_case, system

KB = Context(items=(ContextItem(doc_id="kb-1", text="Refunds take 14 days."),))


@system(name="citer", version="1", records=("context/v1", "citations/v1"))
def base(case):
    # The first call of a case cites a passage it was never given; the later ones record none.
    mark = os.path.join("calls", str(case["n"]))
    os.makedirs("calls", exist_ok=True)
    first = not os.path.exists(mark)
    open(mark, "a").close()
    current_case().context(KB)
    if first:
        current_case().citations(["kb-999"])
    return {"answer": "x"}


@system(name="citer", version="2", records=("context/v1", "citations/v1"))
def cand(case):
    if case["n"] % 2:
        raise RuntimeError("upstream timeout")
    current_case().context(KB)
    current_case().citations(["kb-1"])
    return {"answer": "x"}
"""


def test_a_missing_pair_keeps_only_what_the_other_runs_repeats_show(tmp_path: Path) -> None:
    """The mirror, in missing pairs: a baseline run with `--repeats 3` that failed the one
    repeat of each case it recorded citations in, and a candidate that passed half the cases
    and raised on the other half. Each errored case was read at worst as the candidate failing
    against a baseline known to fail (a difference of 0), as if the baseline's two repeats
    without citations could not have passed, and superiority by 0 points PASSed; they count
    now as repeats without a verdict there too (the baseline passing them, for the lower
    bound), and the rule is INSUFFICIENT_EVIDENCE."""
    root = write_project(
        tmp_path / "p",
        app=BASELINE_APP,
        config=CONFIG.format(version="1", callable="base"),
        policy="version: 1\nrules:\n  - {id: floor, metric: citations_valid, min: 0.1}\n",
        cases=({"id": f"c{n}", "input": {"n": n}} for n in range(240)),
    )
    (root / "compare.yaml").write_text(
        "version: 1\nrules:\n  - {id: better, metric: citations_valid, superiority: {margin: 0}}\n"
    )
    baseline = json.loads(oloproof("run", "--repeats", "3", "--json", cwd=root).out)["run_id"]
    (root / "oloproof.yaml").write_text(CONFIG.format(version="2", callable="cand"))
    candidate = json.loads(oloproof("run", "--json", cwd=root).out)["run_id"]
    args = ("compare", candidate, baseline, "--policy", "compare.yaml", "--json")
    done = oloproof(*args, cwd=root)
    assert done.code == 3, done.out + done.err  # was 0
    (row,) = json.loads(done.out)["metrics"]
    assert (row["paired"], row["missing"]) == (120, 120)
    # Worst for the candidate: a paired case 1 against the baseline's 2/3 (its two repeats
    # without citations passing), a missing one 0 against 2/3 (was 0 against 0).
    lower, _ = paired([1 / 3] * 120 + [-2 / 3] * 120)
    assert row["difference"]["lower"] == pytest.approx(lower, abs=1e-7)
    (rule,) = json.loads(done.out)["decisions"]
    assert (rule["outcome"], rule["reason"]) == ("INSUFFICIENT_EVIDENCE", "missing_cases_decide")
    assert oloproof("verify", cwd=root).code == 0
