"""A case whose execution errored is excluded from a criterion its own labels exclude it from,
through the real CLI.

The probe: 20 labelled cases that pass ``mrr_at_5`` and 3 unlabelled cases whose system raises.
Every criterion of an errored case was recorded ``missing: execution_errored``, so the run
printed ``mrr_at_5 … 20 / 20 observed · 3 missing``, the interval [58.2%, 100.0%] instead of
[83.1%, 100.0%], and BLOCKed a floor of 0.8 saying "3 missing cases decide it": false, those
cases have no relevance labels, so whatever they had returned they would have been excluded
(``no_relevance_labels``) and never counted. Now an errored case records the exclusion its
labels or expected values decide (``repeats.CASE_EXCLUSIONS``), under the reason it gets when
it runs; any other criterion of it (its labels present, a regex on its output) stays missing.
``verify`` still passes on such runs, on runs recorded before (their errored cases missing), on
a run an earlier release began and this one resumed, and with ``--repeats``; a comparison pairs
an unlabelled case that errored in one run as excluded, not missing (comparison schema 8).

The intervals are checked against scipy's beta quantiles (Clopper-Pearson), not Oloproof.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

from scipy.stats import beta
from tests.support import bundle_cases, oloproof, start_run, write_project

APP = """
import os
import sys
import time
from pathlib import Path

from oloproof import Passage, Retrieval, current_case, system

HERE = Path(__file__).parent


@system(name="ranker", version="1", records=("retrieval/v1",))
def run(case):
    if case.get("hold"):
        sys.stderr.write("holding\\n")
        sys.stderr.flush()
        while not (HERE / "release").exists():
            time.sleep(0.05)
    if case.get("boom") and not os.environ.get("MENDED"):
        raise RuntimeError("upstream down")
    ranked = tuple(Passage(doc_id=d, text=d) for d in ("d1", "x", "y"))
    current_case().retrieval(Retrieval(query="q", depth=3, candidates=ranked))
    return {"answer": "yes"}
"""

CONFIG = """\
system: {name: ranker, version: "1", callable: app:run}
dataset: cases.jsonl
policy: policy.yaml
concurrency: 1
evaluators:
  - {type: mrr, k: 5}
"""

POLICY = "version: 1\nrules:\n  - {id: mrr-floor, metric: mrr_at_5, min: 0.8}\n"

# The release before: every criterion of an errored case missing.
EARLIER_RELEASE = """
from oloproof import execute

execute._unexecuted_verdict = lambda judge, case: {"s": "missing", "r": "execution_errored"}

from oloproof.cli.main import main

main()
"""
EARLIER = ("-c", EARLIER_RELEASE)

LABELLED = {"relevant": [{"doc_id": "d1"}]}


def project(root: Path, *, config: str = CONFIG, hold: str | None = None) -> Path:
    """20 labelled cases l0… that rank d1 first, and 3 unlabelled ones u0… that raise (unless
    MENDED is set); u0 first, then the case ``hold`` names held until ``release`` appears."""
    cases: list[dict[str, Any]] = [
        {"id": f"u{i}", "input": {"n": 100 + i, "boom": True}} for i in range(3)
    ]
    cases += [{"id": f"l{i}", "input": {"n": i}, "expected": LABELLED} for i in range(20)]
    for case in cases:
        case["input"]["hold"] = case["id"] == hold
    return write_project(
        root, app=APP, config=config, policy=POLICY, cases=cases[:1] + cases[3:] + cases[1:3]
    )


def run_json(root: Path, *args: str, command: tuple[str, ...] = ("-m", "oloproof")) -> Any:
    done = oloproof("run", "--json", *args, cwd=root, command=command)
    assert done.code in (0, 3), done.out + done.err
    return json.loads(done.out)


def metric(report: Any, criterion: str) -> Any:
    return next(m for m in report["metrics"] if m["criterion"] == criterion)


def clopper_pearson(successes: int, n: int) -> tuple[float, float]:
    """The 95% Clopper-Pearson interval, from scipy's beta quantiles."""
    lower = 0.0 if successes == 0 else float(beta.ppf(0.025, successes, n - successes + 1))
    upper = 1.0 if successes == n else float(beta.ppf(0.975, successes + 1, n - successes))
    return lower, upper


def verified(root: Path) -> None:
    done = oloproof("verify", cwd=root)
    assert done.code == 0, done.out + done.err
    assert done.out.endswith(": ok\n"), done.out


def test_errored_unlabelled_cases_are_excluded_not_missing(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    done = oloproof("run", cwd=root)
    # Was: exit 3, "[58.2%, 100.0%] │ 20 / 20 observed · 3 missing · 0 excluded", and
    # "mrr-floor: 3 missing cases decide it".
    assert done.code == 0, done.out + done.err
    assert "3 of 23 cases errored: RuntimeError: upstream down (first: u0)" in done.out
    row = "│ mrr_at_5 │ 100.0%   │ [83.1%, 100.0%] │ 20 / 20 observed · 0 missing · 3 excluded │"
    assert row in done.lines, done.out
    assert "missing cases decide" not in done.out
    report = run_json(root, "--no-cache")
    mrr = metric(report, "mrr_at_5")
    assert (mrr["observed"], mrr["missing"], mrr["excluded"]) == (20, 0, 3)
    assert mrr["excluded_reasons"] == {"no_relevance_labels": 3}
    # 20 of 20 values 1 (d1 ranks first): Clopper-Pearson, as the report says.
    lower, upper = clopper_pearson(20, 20)
    assert mrr["method"] == "clopper-pearson"
    assert abs(mrr["lower"] - lower) < 1e-9 and mrr["upper"] == upper
    assert round(lower, 3) == 0.832
    verified(root)


# An errored case of each kind: labelled (missing everywhere but equals, which it has no value
# for), labels all non-relevant and an empty expected text (both excluded), and each criterion
# that reads the output alone (regex) or has no value for the case read as when it runs.
MIXED_CONFIG = """\
system: {name: ranker, version: "1", callable: app:run}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: mrr, k: 5}
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
  - {type: equals, criterion: exact, field: answer, expected_field: exact}
  - {type: regex, criterion: shaped, field: answer, pattern: "y"}
"""

MIXED_CASES = {
    "labelled": {"relevant": [{"doc_id": "d1"}], "answer": "yes", "exact": "yes"},
    "nothing_relevant": {"relevant": [{"doc_id": "d1", "grade": 0}], "answer": " \u200b"},
    "unlabelled": {},
}


def test_only_what_the_case_decides_is_excluded(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=MIXED_CONFIG,
        policy=POLICY,
        cases=(
            {"id": name, "input": {"n": n, "boom": True}, "expected": expected}
            for n, (name, expected) in enumerate(MIXED_CASES.items())
        ),
    )
    errored = run_json(root)["run_id"]
    mended = oloproof("run", "--json", "--no-cache", cwd=root, env={"MENDED": "1"})
    ran = json.loads(mended.out)["run_id"]
    missing = {"s": "missing", "r": "execution_errored"}
    verdicts = {c["id"]: c["verdicts"] for c in bundle_cases(root, errored)}
    assert verdicts == {
        "labelled": {"mrr_at_5": missing, "answered": missing, "exact": missing, "shaped": missing},
        "nothing_relevant": {
            "mrr_at_5": {"s": "excluded", "r": "all_labels_non_relevant"},
            "answered": {"s": "excluded", "r": "empty_expected_value"},
            "exact": {"s": "excluded", "r": "no_expected_value"},
            "shaped": missing,
        },
        "unlabelled": {
            "mrr_at_5": {"s": "excluded", "r": "no_relevance_labels"},
            "answered": {"s": "excluded", "r": "no_expected_value"},
            "exact": {"s": "excluded", "r": "no_expected_value"},
            "shaped": missing,
        },
    }
    # Each exclusion is the one the case gets when it runs.
    for case in bundle_cases(root, ran):
        assert case["status"] == "ok"
        for criterion, verdict in verdicts[case["id"]].items():
            if verdict["s"] == "excluded":
                assert case["verdicts"][criterion] == verdict, (case["id"], criterion)
            else:
                assert case["verdicts"][criterion]["s"] in ("pass", "value"), criterion
    verified(root)


def test_every_repeat_errored_excludes_an_unlabelled_case(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    report = run_json(root, "--repeats", "2")
    mrr = metric(report, "mrr_at_5")
    # Was: 3 missing, the 3 cases' every repeat missing execution_errored.
    assert (mrr["observed"], mrr["missing"], mrr["excluded"]) == (20, 0, 3)
    assert report["exit_code"] == 0
    (case,) = [c for c in bundle_cases(root, report["run_id"]) if c["id"] == "u0"]
    assert case["verdicts"] == {"mrr_at_5": {"s": "excluded", "r": "no_relevance_labels"}}
    verified(root)


def test_runs_recorded_before_resumed_and_compared(tmp_path: Path) -> None:
    root = project(tmp_path / "p", hold="l0")
    # An earlier release records u0 missing, then is interrupted on l0; this one resumes it.
    proc = start_run(root, "holding\n", command=EARLIER)
    proc.send_signal(signal.SIGINT)
    time.sleep(1)  # the signal is taken before the case it interrupted ends
    (root / "release").touch()
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, out + err
    resumed_id = err.split("--resume ")[1].split()[0]
    resumed = run_json(root, "--resume", resumed_id)
    mrr = metric(resumed, "mrr_at_5")
    assert (mrr["observed"], mrr["missing"], mrr["excluded"]) == (20, 1, 2), mrr
    assert mrr["missing_reasons"] == {"execution_errored": 1}
    # A whole run of the earlier release, its three missing.
    before = run_json(root, "--no-cache", command=EARLIER)
    assert metric(before, "mrr_at_5")["missing"] == 3
    now = run_json(root, "--no-cache")["run_id"]
    mended = oloproof("run", "--json", "--no-cache", cwd=root, env={"MENDED": "1"})
    baseline = json.loads(mended.out)["run_id"]
    # Compared with a baseline where the unlabelled cases ran (excluded there), by this run
    # and by the earlier release's (its errored cases missing): not paired, since they
    # errored, but excluded from mrr_at_5 rather than missing (was: 3 missing), and verified.
    for candidate in (now, before["run_id"]):
        compared = oloproof("compare", candidate, baseline, "--json", cwd=root)
        assert compared.code == 0, compared.err
        body = json.loads(compared.out)
        assert body["unpaired"] == [
            {"reason": "errored_in_candidate", "count": 3, "case_ids": ["u0", "u1", "u2"]}
        ]
        (row,) = body["metrics"]
        assert (row["paired"], row["missing"], row["excluded"]) == (20, 0, 3), row
        assert row["excluded_reasons"] == {"no_relevance_labels": 3}
    verified(root)
