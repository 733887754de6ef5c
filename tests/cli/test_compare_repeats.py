"""A comparison never reads a repeated case on its judged repeats alone, through the real CLI.

The probe: 200 cases; a baseline that answers 60% of them right, every time; a candidate run
with ``--repeats 3`` that never answers wrong but raises instead (each repeat of a case passes
or errors, by a fixed pattern). Read as the mean of its judged repeats, every case the
candidate answered at least once was a perfect 1.000, and both comparison rules PASSed
(``+40.0 points [+5.6, +51.7]``, ``Gate: PASS (exit 0)``) while the run's own gate on the same
candidate blocked. Each repeat without a verdict now counts as the run's gate counts it:
failing for the lower bound, passing for the upper. The bounds are checked against the
paired interval of the completions built here by hand from the patterns, not against the
comparison's own arithmetic.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from tests.support import oloproof, patterns_project
from tests.view.support import fetch, serving

from ledger import Event
from oloproof import events as ev
from oloproof.compare import derive_comparison
from oloproof.config import load_compare_policy
from oloproof.display import fmt_points, fmt_points_interval
from oloproof.results import Interval
from oloproof.stats import paired_difference
from oloproof.store import open_project_ledger
from oloproof.stored_runs import load_run

FLOOR = "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.5}\n"
COMPARE = """\
version: 1
rules:
  - id: not-worse
    metric: answer_correct
    non_inferiority: {margin: 5}
  - id: better
    metric: answer_correct
    superiority: {margin: 0}
"""

# The probe's candidate: a case's three repeats pass or raise, never answer wrong.
PROBE = ["eee", "pee", "epe", "ppe", "ppp"]


def _project(root: Path, patterns: Sequence[tuple[str, str]]) -> Path:
    """``patterns_project`` with the comparison policy in ``compare.yaml``."""
    project = patterns_project(root, patterns, policy=FLOOR)
    (project / "compare.yaml").write_text(COMPARE)
    return project


def _run(root: Path, *args: str) -> tuple[int, str]:
    done = oloproof("run", *args, cwd=root)
    assert done.code in (0, 1, 3), done.out + done.err
    return done.code, done.lines[0].split()[1]


def _value(steps: str) -> float:
    return steps.count("p") / len(steps)


def _interval(pairs: Sequence[tuple[float, float]]) -> Interval:
    return paired_difference([c for c, _ in pairs], [b for _, b in pairs])[1]


def _probe_patterns() -> list[tuple[str, str]]:
    return [("p" if q % 5 < 3 else "f", PROBE[(q // 5) % 5]) for q in range(200)]


def test_errored_repeats_cannot_pass_a_comparison(tmp_path: Path) -> None:
    patterns = _probe_patterns()
    root = _project(tmp_path / "probe", patterns)
    code, base_id = _run(root, "--config", "baseline.yaml")
    assert code == 0
    code, cand_id = _run(root, "--repeats", "3")
    assert code == 3  # the run's own gate counts the errored repeats against the candidate
    compared = oloproof("compare", cand_id, base_id, "--policy", "compare.yaml", cwd=root)
    assert compared.code == 3, compared.out + compared.err  # was 0: both rules PASSed

    # By hand: a case the candidate answered is worth its passes / 3 with its errored repeats
    # failing, 1 with them passing; a case it never answered is unpaired (0 or 1).
    paired = [(b, c) for b, c in patterns if c != "eee"]
    worst = [(c.count("p") / 3, _value(b)) for b, c in paired]
    worst += [(0.0, _value(b)) for b, c in patterns if c == "eee"]
    best = [(1.0, _value(b)) for b, _ in patterns]
    judged = [(1.0, _value(b)) for b, _ in paired]
    bounded = Interval(_interval(worst).lower, _interval(best).upper, 0.95, "")
    assert bounded.lower < -0.05 and bounded.upper > 0  # neither rule can pass, nor fail
    partial = sum(1 for _, c in paired if "e" in c)
    unjudged = sum(c.count("e") for _, c in paired)
    assert (len(paired), partial, unjudged) == (160, 120, 200)
    rule_tail = (
        "    40 missing pairs and 200 repeats without a verdict decide it: on the 160 paired "
        "alone, on their judged repeats, it would be PASS (interval_above_margin)"
    )
    assert compared.lines[1:] == [
        "not paired 40: errored in candidate (c0, c1, c2, c3, c4 and 35 more)",
        f"answer_correct: +40.0 points {fmt_points_interval(bounded)} · 160 paired · 40 missing "
        "· 0 excluded",
        "  the interval counts the 40 missing and the 200 repeats without a verdict against the "
        "candidate (lower bound) and for it (upper bound); the 160 paired alone, on their judged "
        f"repeats, give {fmt_points_interval(_interval(judged))}",
        "  missing 40: errored_in_candidate",
        "  repeats without a verdict 200: 200 in the candidate, 0 in the baseline, of 120 paired "
        "cases",
        "Decisions",
        "  not-worse  answer_correct  non-inferiority, margin 5.0 points  INSUFFICIENT_EVIDENCE  "
        "missing_cases_decide",
        rule_tail,
        "  better  answer_correct  superiority, margin 0.0 points  INSUFFICIENT_EVIDENCE  "
        "missing_cases_decide",
        rule_tail,
        "Gate: BLOCK (exit 3)",
    ]

    as_json = oloproof(
        "compare",
        cand_id,
        base_id,
        "--policy",
        "compare.yaml",
        "--json",
        "--summary",
        "s.md",
        cwd=root,
    )
    assert as_json.code == 3
    # The summary says what the terminal says of how the interval counts them.
    counted = next(line for line in compared.lines if line.startswith("  the interval counts"))
    assert f"answer_correct: {counted.strip()}" in (root / "s.md").read_text().splitlines()
    data = json.loads(as_json.out)
    (row,) = data["metrics"]
    diff = row["difference"]
    assert abs(diff["lower"] - bounded.lower) < 1e-9 and abs(diff["upper"] - bounded.upper) < 1e-9
    assert (row["partial"], row["missing_repeats"]) == (120, {"candidate": 200, "baseline": 0})
    assert (diff["binary"], diff["b"], diff["c"]) == (False, None, None)
    for decision in data["decisions"]:
        detail = decision["detail"]
        assert (detail["missing"], detail["missing_repeats"], detail["planning"]) == (40, 200, None)
        assert detail["observed_only"]["outcome"] == "PASS"
    # A flip holds whatever the errored repeats would have said: each improved case is one the
    # baseline failed and the candidate passed at least once (so at least 1/3).
    by_id = {f"c{q}": pair for q, pair in enumerate(patterns)}
    flipped = data["flipped"]
    assert {f["direction"] for f in flipped} == {"improved"}
    assert all(by_id[f["case_id"]][0] == "f" for f in flipped)
    assert len(flipped) == sum(1 for b, _ in paired if b == "f")
    c8 = next(f for f in flipped if f["case_id"] == "c8")  # pattern "pee"
    assert (c8["baseline"], c8["candidate"]) == ("fail", "1.000 (1 of 3 repeats judged)")

    # The viewer's comparison page shows the same interval and says what it counts.
    address = compared.lines[0].split()[1]
    with serving(root) as url:
        status, page = fetch(f"{url}/comparisons/{address}")
    assert status == 200
    assert fmt_points_interval(bounded) in page
    assert "200 repeat(s) without a verdict in 120 paired case(s)" in page
    assert oloproof("verify", cwd=root).code == 0


def test_a_comparison_recorded_before_reads_as_it_was_made(tmp_path: Path) -> None:
    """Schema 3 read each repeated case as the mean of its judged repeats; such a comparison
    still prints what it printed then, and ``verify`` re-derives it that way."""
    root = _project(tmp_path / "probe", _probe_patterns())
    _, base_id = _run(root, "--config", "baseline.yaml")
    _, cand_id = _run(root, "--repeats", "3")
    with open_project_ledger(root, create=False) as ledger:
        cand, base = load_run(ledger, cand_id), load_run(ledger, base_id)
        policy_path = (root / "compare.yaml").resolve()
        body = derive_comparison(
            ledger,
            cand,
            base,
            policy=load_compare_policy(policy_path),
            policy_path=policy_path,
            counts_missing_repeats=False,
            no_evidence_blocks=False,
        )
        del body["counts_missing_repeats"], body["no_evidence_blocks"]  # schema 3 had neither
        old = ledger.put(Event(ev.COMPARISON, 3, body, [cand.address, base.address]))
    shown = oloproof("inspect", old, cwd=root)
    assert shown.code == 0, shown.err
    # What schema 3 printed for the probe.
    assert "answer_correct: +40.0 points [+5.6, +51.7] · 160 paired · 40 missing · 0 excluded" in (
        shown.lines
    )
    assert shown.lines[-1] == "Gate: PASS (exit 0)"
    assert (
        json.loads(oloproof("inspect", old, "--json", cwd=root).out)["counts_missing_repeats"]
        is False
    )
    checked = oloproof("verify", cwd=root)
    assert checked.code == 0, checked.out
    assert "1 comparison(s)" in checked.out


def test_a_case_moves_only_when_its_unjudged_repeats_cannot_undo_it(tmp_path: Path) -> None:
    """Both runs repeated. ``c0`` judged 1 of 3 times (a pass) against a baseline's 2 of 3 could
    be 1/3: it was listed improved on its judged repeat alone, and is now listed apart,
    ``unsettled``, counted neither way."""
    patterns = [
        ("ppf", "pee"),  # 0.667 vs 1/3 .. 1: unknown
        ("fff", "pee"),  # 0 vs at least 1/3: improved
        ("ppp", "fee"),  # 1 vs at most 2/3: regressed
        ("pff", "fpe"),  # 1/3 vs 1/3 .. 2/3: unknown (judged alone, 0.5 looked better)
        ("ppp", "ppp"),  # unchanged
        ("fpf", "pfp"),  # 1/3 vs 2/3, both judged whole: improved
    ]
    root = _project(tmp_path / "both", patterns)
    _, base_id = _run(root, "--config", "baseline.yaml", "--repeats", "3")
    _, cand_id = _run(root, "--repeats", "3")
    done = oloproof("compare", cand_id, base_id, "--json", cwd=root)
    assert done.code == 0, done.err
    data = json.loads(done.out)
    moved = [(f["case_id"], f["baseline"], f["candidate"], f["direction"]) for f in data["flipped"]]
    assert moved == [
        ("c1", "0.000", "1.000 (1 of 3 repeats judged)", "improved"),
        ("c2", "1.000", "0.000 (1 of 3 repeats judged)", "regressed"),
        ("c5", "0.333", "0.667", "improved"),
        ("c0", "0.667", "1.000 (1 of 3 repeats judged)", "unsettled"),
        ("c3", "0.333", "0.500 (2 of 3 repeats judged)", "unsettled"),
    ]
    (row,) = data["metrics"]
    assert (row["paired"], row["partial"]) == (6, 4)
    assert row["missing_repeats"] == {"candidate": 7, "baseline": 0}
    worst = [(c.count("p") / 3, _value(b)) for b, c in patterns]
    best = [((3 - c.count("f")) / 3, _value(b)) for b, c in patterns]
    diff = row["difference"]
    assert abs(diff["lower"] - _interval(worst).lower) < 1e-9
    assert abs(diff["upper"] - _interval(best).upper) < 1e-9
    judged = [(c.count("p") / (3 - c.count("e")), _value(b)) for b, c in patterns]
    assert abs(diff["observed_lower"] - _interval(judged).lower) < 1e-9


def test_repeats_all_judged_compare_as_before(tmp_path: Path) -> None:
    """Every repeat judged: the comparison is the paired interval of the case values, with
    nothing counted against it, and its rows and decisions keep the shape they had."""
    cycle = ["ppf", "pff", "ppp", "fff", "pfp"]
    patterns = [("p" if q % 3 else "f", cycle[q % 5]) for q in range(30)]
    root = _project(tmp_path / "judged", patterns)
    _, base_id = _run(root, "--config", "baseline.yaml")
    _, cand_id = _run(root, "--repeats", "3")
    done = oloproof("compare", cand_id, base_id, "--policy", "compare.yaml", "--cases", cwd=root)
    assert done.code == 3, done.out + done.err
    values = [(_value(c), _value(b)) for b, c in patterns]
    estimate = sum(c - b for c, b in values) / len(values)
    interval = _interval(values)
    assert done.lines[1] == (
        f"answer_correct: {fmt_points(estimate)} {fmt_points_interval(interval)} · "
        "30 paired · 0 missing · 0 excluded"
    )
    assert done.lines[2].startswith("Changed cases: ")
    assert not any(
        "without a verdict" in line or "the interval counts" in line for line in done.lines
    )
    data = json.loads(
        oloproof("compare", cand_id, base_id, "--policy", "compare.yaml", "--json", cwd=root).out
    )
    (row,) = data["metrics"]
    assert "partial" not in row and "missing_repeats" not in row
    diff = row["difference"]
    assert "observed_lower" not in diff
    assert (
        abs(diff["lower"] - interval.lower) < 1e-12 and abs(diff["upper"] - interval.upper) < 1e-12
    )
    for decision in data["decisions"]:
        assert decision["reason"] != "missing_cases_decide"
        assert set(decision["detail"]) == {
            "lower",
            "upper",
            "level",
            "method",
            "paired",
            "b",
            "c",
            "planning",
        }
    # Every case whose value moved is listed, by the way it moved.
    expected = [
        (f"c{q}", "improved" if c > b else "regressed") for q, (c, b) in enumerate(values) if c != b
    ]
    assert [(f["case_id"], f["direction"]) for f in data["flipped"]] == expected
