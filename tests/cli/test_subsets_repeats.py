"""Subsets (`--limit`, `--sample --seed`, `--filter`) and repeats (`--repeats K`) through the
real CLI; the repeated metric's interval is checked against an independent implementation of
the betting interval (statistics.md B, solved with scipy's brentq)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from tests.betting_reference import betting as betting_reference
from tests.support import FLAKY_APP, oloproof

# ------------------------------------------------------------------------- a flaky system

PATTERNS = {
    "q01": "ppp",
    "q02": "ppp",
    "q03": "ppf",
    "q04": "pfp",
    "q05": "fpp",
    "q06": "pff",
    "q07": "fff",
    "q08": "ppp",
    "q09": "ppf",
    "q10": "ppp",
    "q11": "fpf",
    "q12": "ppp",
}

CONFIG = """\
system: {name: flaky, version: "1", callable: "app:answer"}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
concurrency: 4
"""


def _project(root: Path, patterns: dict[str, str]) -> Path:
    root.mkdir()
    (root / "app.py").write_text(FLAKY_APP.format(patterns=patterns))
    (root / "oloproof.yaml").write_text(CONFIG)
    lines = [
        json.dumps(
            {
                "id": qid,
                "input": {"question": qid},
                "expected": {"answer": "yes"},
                "metadata": {"topic": "even" if int(qid[1:]) % 2 == 0 else "odd"},
            }
        )
        for qid in patterns
    ]
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n")
    return root


def _metric(report: dict, criterion: str = "answer_correct") -> dict:
    return next(m for m in report["metrics"] if m["criterion"] == criterion)


def test_repeats_make_each_case_one_graded_value_with_the_betting_interval(tmp_path: Path) -> None:
    root = _project(tmp_path / "flaky", PATTERNS)
    done = oloproof("run", "--repeats", "3", "--json", cwd=root)
    assert done.code == 0, done.err
    report = json.loads(done.out)
    assert report["repeats"] == 3
    assert report["cache"]["execution"][:2] == [0, 36]  # every repeat executed
    means = [pattern.count("p") / 3 for pattern in PATTERNS.values()]
    metric = _metric(report)
    assert metric["proportion"] is False
    assert metric["observed"] == 12 and metric["missing"] == 0
    assert metric["estimate"] == pytest.approx(sum(means) / 12)
    lower, upper = betting_reference(means)
    assert metric["lower"] == pytest.approx(lower, abs=1e-9)
    assert metric["upper"] == pytest.approx(upper, abs=1e-9)
    # Pseudo-replication (36 outputs as if independent, Clopper-Pearson) would be narrower:
    from scipy.stats import binomtest

    naive = binomtest(sum(p.count("p") for p in PATTERNS.values()), 36).proportion_ci(0.95)
    assert upper - lower > naive.high - naive.low
    text = oloproof("inspect", report["run_id"], cwd=root)
    assert (
        "Repeats: each case executed 3 times; a case counts once, as the mean of its verdicts"
        in text.lines
    )
    assert oloproof("verify", cwd=root).code == 0


def test_a_rerun_reuses_every_repeat_and_gives_the_same_numbers(tmp_path: Path) -> None:
    root = _project(tmp_path / "flaky", PATTERNS)
    first = json.loads(oloproof("run", "--repeats", "3", "--json", cwd=root).out)
    again = json.loads(oloproof("run", "--repeats", "3", "--json", cwd=root).out)
    assert again["cache"]["execution"][:2] == [36, 0]
    assert _metric(again)["lower"] == _metric(first)["lower"]


def test_one_repeat_is_the_plain_run(tmp_path: Path) -> None:
    root = _project(tmp_path / "flaky", PATTERNS)
    report = json.loads(oloproof("run", "--json", cwd=root).out)
    metric = _metric(report)
    assert report["repeats"] == 1 and metric["proportion"] is True
    passes = sum(p[0] == "p" for p in PATTERNS.values())
    assert (metric["successes"], metric["observed"]) == (passes, 12)


def test_a_repeat_without_a_verdict_counts_against_its_case(tmp_path: Path) -> None:
    patterns = {**PATTERNS, "q01": "pep", "q07": "fef"}
    root = _project(tmp_path / "flaky", patterns)
    done = oloproof("run", "--repeats", "3", "--json", cwd=root)
    report = json.loads(done.out)
    metric = _metric(report)
    assert metric["missing"] == 0 and metric["missing_repeats"] == 2
    observed = [p.count("p") / (3 - p.count("e")) for p in patterns.values()]
    low = [p.count("p") / 3 for p in patterns.values()]
    high = [(p.count("p") + p.count("e")) / 3 for p in patterns.values()]
    assert metric["estimate"] == pytest.approx(sum(observed) / 12)
    assert metric["lower"] == pytest.approx(betting_reference(low)[0], abs=1e-9)
    assert metric["upper"] == pytest.approx(betting_reference(high)[1], abs=1e-9)
    assert (metric["observed_lower"], metric["observed_upper"]) == pytest.approx(
        betting_reference(observed), abs=1e-9
    )
    text = oloproof("inspect", report["run_id"], cwd=root)
    assert (
        "answer_correct: 2 repeats of observed cases have no verdict; the interval counts them "
        "as failing for the lower bound and passing for the upper"
    ) in text.lines
    assert oloproof("verify", cwd=root).code == 0


def test_a_case_whose_every_repeat_errored_is_missing(tmp_path: Path) -> None:
    root = _project(tmp_path / "flaky", {**PATTERNS, "q02": "eee"})
    report = json.loads(oloproof("run", "--repeats", "3", "--json", cwd=root).out)
    metric = _metric(report)
    assert (metric["observed"], metric["missing"]) == (11, 1)
    assert metric["missing_reasons"] == {"execution_errored": 1}


# ------------------------------------------------------------------------------- subsets


def _case_ids(root: Path, run_id: str) -> list[str]:
    export = oloproof("export", run_id, "--format", "jsonl", "--output", "out", cwd=root)
    assert export.code == 0, export.err
    rows = [json.loads(line) for line in (root / "out" / "cases.jsonl").read_text().splitlines()]
    return [row["case_id"] for row in rows]


def test_limit_runs_the_first_cases_and_says_so(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", PATTERNS)
    done = oloproof("run", "--limit", "3", cwd=root)
    assert done.code == 0, done.err
    assert done.lines[1] == "Subset: 3 of 12 cases (the first 3)"
    assert _case_ids(root, done.lines[0].split()[1]) == ["q01", "q02", "q03"]


def test_a_sample_is_reproducible_from_its_seed_and_recorded(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", PATTERNS)
    ids = list(PATTERNS)
    expected = [ids[i] for i in sorted(random.Random(7).sample(range(12), 5))]
    first = oloproof("run", "--sample", "5", "--seed", "7", "--json", cwd=root)
    report = json.loads(first.out)
    assert report["subset"] == {
        "limit": None,
        "sample": 5,
        "seed": 7,
        "filters": [],
        "total": 12,
    }
    assert report["planned_cases"] == 5
    assert _case_ids(root, report["run_id"]) == expected
    # Without --seed a seed is drawn, printed and recorded; giving it back draws the same cases.
    drawn = oloproof("run", "--sample", "5", cwd=root)
    line = drawn.lines[1]
    assert line.startswith("Subset: 5 of 12 cases (sample 5, seed ")
    seed = line.rsplit("seed ", 1)[1].rstrip(")")
    again = oloproof("run", "--sample", "5", "--seed", seed, cwd=root)
    assert _case_ids(root, drawn.lines[0].split()[1]) == _case_ids(root, again.lines[0].split()[1])


def test_filters_on_metadata(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", PATTERNS)
    even = oloproof("run", "--filter", "metadata.topic=even", cwd=root)
    assert even.code == 0, even.err
    assert even.lines[1] == "Subset: 6 of 12 cases (metadata.topic=even)"
    assert _case_ids(root, even.lines[0].split()[1]) == [q for q in PATTERNS if int(q[1:]) % 2 == 0]
    both = oloproof(
        "run", "--filter", "metadata.topic=even", "--filter", "metadata.topic=odd", cwd=root
    )
    assert both.lines[1] == "Subset: 12 of 12 cases (metadata.topic=even; metadata.topic=odd)"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--filter", "metadata.topc=even"],
            "error: --filter metadata.topc: no case has this "
            "metadata key; did you mean 'metadata.topic'?\n",
        ),
        (
            ["--filter", "metadata.topic=prime"],
            "error: --filter: no case has metadata.topic in ['prime']\n",
        ),
        (
            ["--filter", "topic=even"],
            "error: --filter 'topic=even': write it as "
            "metadata.KEY=VALUE (e.g. metadata.topic=billing)\n",
        ),
        (
            ["--limit", "3", "--sample", "2"],
            "error: --sample and --limit choose cases two ways; give one of them\n",
        ),
        (["--seed", "3"], "error: --seed chooses the cases of --sample; give --sample N with it\n"),
    ],
)
def test_a_subset_that_cannot_be_chosen_is_refused_before_anything_is_written(
    tmp_path: Path, args: list[str], message: str
) -> None:
    root = _project(tmp_path / "p", PATTERNS)
    done = oloproof("run", *args, cwd=root)
    assert (done.code, done.err) == (2, message)
    assert not (root / ".oloproof").exists()


STOPPING_APP = """
import os
import signal
import time
from pathlib import Path

from oloproof import system

ARMED = Path(__file__).with_name("armed")


@system(name="stopping", version="1")
def answer(case):
    # The first time it reaches q06, the process is interrupted as Ctrl-C would (a real SIGINT).
    if case["question"] == "q06" and ARMED.exists():
        ARMED.unlink()
        os.kill(os.getpid(), signal.SIGINT)
        # Not a raise: the case would be recorded as errored if that won the race with the
        # signal's handler. Asleep, it never finishes, and the resume runs it.
        time.sleep(3600)
    return {"answer": "yes"}
"""


def test_resume_finishes_the_subset_the_run_chose(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", PATTERNS)
    (root / "app.py").write_text(STOPPING_APP)
    (root / "armed").touch()
    config = root / "oloproof.yaml"
    config.write_text(config.read_text().replace("concurrency: 4", "concurrency: 1"))
    stopped = oloproof("run", "--filter", "metadata.topic=even", "--repeats", "2", cwd=root)
    assert stopped.code == 130, stopped.out + stopped.err
    run_id = stopped.err.split("--resume ")[1].split()[0]
    listed = json.loads(oloproof("inspect", run_id, "--failures", "--json", cwd=root).out)
    assert "q06" in listed["unfinished"]
    resumed = oloproof("run", "--resume", run_id, "--json", cwd=root)
    assert resumed.code == 0, resumed.err
    report = json.loads(resumed.out)
    assert report["run_id"] == run_id and report["execution_state"] == "COMPLETE"
    assert report["errored"] == 0  # q06 ran to the end in the resume
    assert report["planned_cases"] == report["cases"] == 6 and report["repeats"] == 2
    assert report["subset"]["filters"] == ["metadata.topic=even"]
    assert _case_ids(root, run_id) == [q for q in PATTERNS if int(q[1:]) % 2 == 0]
    refused = oloproof("run", "--resume", run_id, "--limit", "2", cwd=root)
    assert refused.code == 2 and "give no subset" in refused.err
    # Repeats are no subset: the sentence names the option given.
    refused = oloproof("run", "--resume", run_id, "--repeats", "3", cwd=root)
    assert (refused.code, refused.out) == (2, ""), refused.out + refused.err
    assert refused.err == (
        "error: --resume finishes a run with the repeats it started with; give no --repeats\n"
    )
