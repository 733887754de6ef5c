"""A repeat excluded by its own output never hides its siblings' failures, through the real CLI.

The probe: with ``--repeats 3``, case c3 cited a passage outside its context on two repeats
(a fail) and recorded no citations on the third (``no_citations_recorded``: excluded). The one
excluded repeat made the whole case excluded, its two failures vanished, and an
``observed_count`` rule with ``max_failures: 0`` PASSed where the same run without repeats
FAILed. Now an exclusion decided by the output is that repeat's alone: the case combines its
other repeats. An exclusion the case's own labels decide (no expected answer) still excludes
the case, in every repeat alike; a case whose every repeat was excluded by its output is
excluded, as it would be without repeats; and one whose other repeats errored is missing.

Every number is worked out here from the patterns, with the intervals of statistics.md
computed by formulas written out below (scipy for Clopper-Pearson, brentq for the betting
interval), never by Oloproof's own arithmetic.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binomtest
from tests.betting_reference import betting, paired
from tests.support import metric_of, oloproof, write_project

APP = """
import threading

from oloproof import Context, ContextItem, current_case, system

CALLS = {}
LOCK = threading.Lock()
KB = Context(items=(ContextItem(doc_id="kb-1", text="Refunds take 14 days."),))


def answer(case, role):
    with LOCK:
        n = CALLS.get((role, case["q"]), 0)
        CALLS[(role, case["q"])] = n + 1
    step = case[role][n % len(case[role])]
    if step == "e":
        raise RuntimeError("upstream timeout")
    recorder = current_case()
    recorder.context(KB)
    if step != "x":  # x: answers without recording its citations
        recorder.citations(["kb-1" if step == "p" else "kb-999"])
    return {"answer": "Refunds take 14 days."}


@system(name="cand", version="1", records=["context/v1", "citations/v1"])
def cand(case):
    return answer(case, "cand")


@system(name="base", version="1", records=["context/v1", "citations/v1"])
def base(case):
    return answer(case, "base")
"""

CONFIG = """\
system: {{name: {name}, version: "1", callable: "app:{name}"}}
dataset: cases.jsonl
evaluators:
  - {{type: citation_validity}}
  - {{type: contains, criterion: answer_correct, field: answer, expected_field: answer}}
policy: policy.yaml
concurrency: 1
"""
POLICY = (
    "version: 1\nrules:\n"
    "  - {id: never, metric: citations_valid, kind: observed_count, max_failures: 0}\n"
)
COMPARE = (
    "version: 1\nrules:\n"
    "  - id: not-worse\n    metric: citations_valid\n    non_inferiority: {margin: 5}\n"
)

# The candidate's steps per call, one call per repeat: p cites its context (passes), f cites a
# passage it was never given (fails), x records no citations (excluded by its output), e raises.
CANDIDATE = {
    "c0": "ppp",
    "c1": "ppp",
    "c2": "xpp",  # passed both repeats it cited in
    "c3": "ffx",  # the probe: failed both repeats it cited in
    "c4": "ppe",  # no expected answer: answer_correct excluded by the case, whatever ran
    "c5": "xxx",  # never cited: excluded, as a run without repeats would exclude it
    "c6": "xee",  # its only repeat that ran cited nothing; the others raised
}
NO_EXPECTED = {"c4"}


def _project(root: Path) -> Path:
    project = write_project(
        root,
        app=APP,
        config=CONFIG.format(name="cand"),
        policy=POLICY,
        cases=[
            {
                "id": case_id,
                "input": {"q": case_id, "cand": steps, "base": "p"},
                "expected": {} if case_id in NO_EXPECTED else {"answer": "14 days"},
            }
            for case_id, steps in CANDIDATE.items()
        ],
    )
    (project / "baseline.yaml").write_text(CONFIG.format(name="base"))
    (project / "compare.yaml").write_text(COMPARE)
    return project


# ------------------------------------------------------------------------------ the run


def _run(root: Path, *args: str) -> tuple[int, str, str]:
    done = oloproof("run", *args, cwd=root)
    assert done.code in (0, 1, 3), done.out + done.err
    return done.code, done.lines[0].split()[1], done.out


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, int]:
    root = _project(tmp_path_factory.mktemp("excluded") / "p")
    code, cand_id, _ = _run(root, "--repeats", "3")
    base_code, base_id, _ = _run(root, "--config", "baseline.yaml")
    assert base_code == 0
    return root, cand_id, base_id, code


def _verdicts(root: Path, run_id: str, case_id: str) -> dict[str, Any]:
    shown = oloproof("inspect", run_id, "--case", case_id, "--json", cwd=root)
    assert shown.code == 0, shown.err
    verdicts: dict[str, Any] = json.loads(shown.out)["verdicts"]
    return verdicts


def test_a_repeat_excluded_by_its_output_leaves_its_siblings_failures(
    project: tuple[Path, str, str, int],
) -> None:
    root, cand_id, _, code = project
    # c3 failed both repeats that cited: the count's one failure (was PASS, exit 0).
    assert code == 1
    report = json.loads(oloproof("inspect", cand_id, "--json", cwd=root).out)
    (never,) = report["rules"]
    assert (never["outcome"], never["reason"]) == ("FAIL", "observed_failures_exceed_limit")
    # By hand: c0-c4 observed (c4 passed the two repeats that ran), c3 the one below 1; c5
    # excluded; c6 missing; c4's errored repeat may hide a failure.
    assert never["detail"]["failures"] == 1
    assert never["detail"]["observed"] == 5
    assert never["detail"]["passes_unconfirmed"] == 1

    cases = {c: _verdicts(root, cand_id, c) for c in CANDIDATE}
    assert cases["c3"]["citations_valid"] == {"s": "value", "v": 0.0, "n": 2}
    assert cases["c2"]["citations_valid"] == {"s": "value", "v": 1.0, "n": 2}
    assert cases["c5"]["citations_valid"] == {"s": "excluded", "r": "no_citations_recorded"}
    # Excluded by its output once, errored twice: nothing says it would not have failed.
    assert cases["c6"]["citations_valid"] == {"s": "missing", "r": "execution_errored"}
    # An exclusion of the case's own labels holds in every repeat, the errored one too.
    assert cases["c4"]["answer_correct"] == {"s": "excluded", "r": "no_expected_value"}
    assert cases["c4"]["citations_valid"] == {"s": "value", "v": 1.0, "n": 2, "m": 1}

    metric = metric_of(report, "citations_valid")
    assert (metric["observed"], metric["missing"], metric["excluded"]) == (5, 1, 1)
    assert metric["estimate"] == pytest.approx(4 / 5)
    # The bounded interval: c4 at 2/3 (its errored repeat failing) and c6 at 0 for the lower
    # bound. For the upper, c4 and c6 at 1 make every value 0 or 1, which Clopper-Pearson reads
    # (5 of 6); a value short of 1 is at most 2/3 (a pass rate over 3 repeats), and the
    # betting interval reads that: the higher of the two.
    lower, _ = betting([1, 1, 1, 0, 2 / 3, 0])
    upper = max(
        binomtest(5, 6).proportion_ci(0.95, method="exact").high,
        betting([1, 1, 1, 0, 1, 2 / 3])[1],
    )
    assert metric["lower"] == pytest.approx(lower, abs=1e-7)
    assert metric["upper"] == pytest.approx(upper, abs=1e-7)
    assert oloproof("verify", cwd=root).code == 0


def test_a_run_without_repeats_decides_the_same(tmp_path: Path) -> None:
    # The same system executed once per case: c3's first call fails it, so the count FAILs.
    root = _project(tmp_path / "once")
    code, run_id, _ = _run(root)
    assert code == 1
    (never,) = json.loads(oloproof("inspect", run_id, "--json", cwd=root).out)["rules"]
    assert (never["outcome"], never["detail"]["failures"]) == ("FAIL", 1)
    metric = next(
        m
        for m in json.loads(oloproof("inspect", run_id, "--json", cwd=root).out)["metrics"]
        if m["criterion"] == "citations_valid"
    )
    # c0, c1, c3 and c4 observed, c3 failed; c2, c5 and c6 excluded (their first call cited
    # nothing).
    expected = binomtest(3, 4).proportion_ci(0.95, method="exact")
    assert (metric["observed"], metric["excluded"]) == (4, 3)
    assert metric["lower"] == pytest.approx(expected.low, abs=1e-9)
    assert metric["upper"] == pytest.approx(expected.high, abs=1e-9)


def test_a_comparison_pairs_the_combined_verdicts(project: tuple[Path, str, str, int]) -> None:
    root, cand_id, base_id, _ = project
    done = oloproof(
        "compare", cand_id, base_id, "--policy", "compare.yaml", "--cases", "--json", cwd=root
    )
    assert done.code in (1, 3), done.out + done.err
    body = json.loads(done.out)
    row = next(r for r in body["metrics"] if r["metric"] == "citations_valid")
    # The baseline passed every case once. Paired: c0-c3 whole, c4 with a repeat unjudged;
    # c5 missing, excluded by the candidate's output alone (the baseline observed it); c6
    # missing in the candidate.
    assert (row["paired"], row["missing"], row["excluded"]) == (5, 2, 0)
    assert row["missing_reasons"] == {
        "execution_errored": 1,
        "no_citations_recorded in the candidate": 1,
    }
    assert row["excluded_reasons"] == {}
    diff = row["difference"]
    assert diff["estimate"] == pytest.approx(-1 / 5)
    # A repeat the candidate's output alone excluded counts as one without a verdict, as c4's
    # errored one does: c2, c3 and c4 each have one (they were c2 at 1 and c3 at 0 both ways).
    assert (row["partial"], row["missing_repeats"]) == (3, {"candidate": 3, "baseline": 0})
    # Worst for the candidate: c2 and c4 at 2/3 against 1, c3 at 0, c5 and c6 at 0 against 1;
    # best: c3 at 1/3, the others at 1.
    lower, _ = paired([0, 0, -1 / 3, -1, -1 / 3, -1, -1])
    _, upper = paired([0, 0, 0, -2 / 3, 0, 0, 0])
    assert diff["lower"] == pytest.approx(lower, abs=1e-7)
    assert diff["upper"] == pytest.approx(upper, abs=1e-7)
    alone = paired([0, 0, 0, -1, 0])
    assert (diff["observed_lower"], diff["observed_upper"]) == pytest.approx(alone, abs=1e-7)
    (decision,) = body["decisions"]
    margin = -0.05
    outcome = "PASS" if lower > margin else "FAIL" if upper < margin else "INSUFFICIENT_EVIDENCE"
    assert decision["outcome"] == outcome
    # c3 is the regression its exclusion hid: pass in the baseline, 0 of 2 in the candidate,
    # and at most 1/3 whatever its third repeat would have said.
    flips = [(f["metric"], f["case_id"], f["baseline"], f["candidate"]) for f in body["flipped"]]
    assert flips == [("citations_valid", "c3", "pass", "0.000 (2 of 3 repeats judged)")]


# An earlier release, which excluded a case for any repeat's exclusion: its rule put back in
# place of today's, then the command run as the console script runs it.
EARLIER_RELEASE = """
import sys

import oloproof.repeats as repeats

today = repeats.combine


def as_before(summaries):
    excluded = [s for s in summaries if s["s"] == "excluded"]
    return dict(excluded[0]) if excluded else today(summaries)


repeats.combine = as_before
from oloproof.cli.main import command

sys.argv = ["oloproof", *sys.argv[1:]]
command()
"""


def test_verify_reads_what_an_earlier_release_recorded_as_it_was_made(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = _project(tmp_path / "p")
    earlier = subprocess.run(
        [sys.executable, "-c", EARLIER_RELEASE, "run", "--repeats", "3"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # No FAIL then: c3, excluded, could not fail the count rule (today it does, exit 1).
    assert earlier.returncode == 3, earlier.stdout + earlier.stderr
    run_id = earlier.stdout.splitlines()[0].split()[1]
    shown = oloproof("inspect", run_id, "--case", "c3", cwd=root)
    assert "citations_valid: excluded (no_citations_recorded)" in shown.out, shown.out
    checked = oloproof("verify", cwd=root)
    assert checked.code == 0, checked.out + checked.err  # not damage: another release's rule
