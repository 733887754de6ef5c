"""oloproof.compare: pairing rules, the spec's numbers, and the paired interval by brute force.

Runs are written straight into a real (temp-dir LMDB) project ledger: a run event with a ref
``run_X`` and one case_result event per case, shaped as the executor writes them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger import Ledger
from oloproof import events as ev
from oloproof.compare import (
    Comparison,
    build_comparison,
    compare_runs,
    load_comparison,
)
from oloproof.config import ComparePolicy
from oloproof.display import fmt_points, fmt_points_interval
from oloproof.errors import ConfigError, UnknownIdError
from oloproof.results import Interval
from oloproof.stats import PLANNING_LIMIT
from oloproof.store import open_project_ledger
from oloproof.stored_runs import StoredRun

PASS = {"s": "pass"}
FAIL = {"s": "fail"}
NO_LABELS = {"s": "excluded", "r": "no_relevance_labels"}

POLICY_YAML = """\
version: 1
confidence_level: 0.95
block_on: [FAIL, INSUFFICIENT_EVIDENCE, MANUAL_REVIEW]
rules:
  - id: answers-not-worse
    metric: answer_correct
    non_inferiority: {margin: 5}
  - id: citations-not-worse
    metric: citations_valid
    non_inferiority: {margin: 2}
"""


# ------------------------------------------------------------------------------- builders


def value(v: float) -> dict[str, Any]:
    return {"s": "value", "v": v}


def case(
    case_id: str,
    verdicts: Mapping[str, Mapping[str, Any]],
    *,
    status: str = "ok",
    input_key: str | None = None,
    topic: str = "billing",
) -> dict[str, Any]:
    return {
        "case_id": case_id,
        "input_key": input_key or f"key-{case_id}",
        "status": status,
        "verdicts": {k: dict(v) for k, v in verdicts.items()},
        "metadata": {"topic": topic},
        "expected": {},
        "execution": None,
        "judgments": {},
    }


def run_body(
    run_id: str,
    criteria: Sequence[str] = ("answer_correct",),
    *,
    kinds: Mapping[str, str] | None = None,
    slices: Sequence[str] = ("metadata.topic",),
    min_slice_support: int = 4,
) -> dict[str, Any]:
    kinds = kinds or {}
    return {
        "run_id": run_id,
        "system": {"name": "sut", "version": run_id},
        "evaluators": [
            {"criterion": c, "kind": kinds.get(c, "pass_fail"), "spec": {"type": c}}
            for c in criteria
        ],
        "slices": list(slices),
        "min_slice_support": min_slice_support,
    }


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with open_project_ledger(tmp_path) as opened:
        yield opened


def write_run(ledger: Ledger, body: Mapping[str, Any], cases: Sequence[Mapping[str, Any]]) -> str:
    with ledger.batch():
        address = ledger.put(ev.make(ev.RUN, body))
        ledger.set_ref(body["run_id"], address)
        for line, c in enumerate(cases, start=1):
            result = {"line": line, **c, "run_id": body["run_id"]}
            ledger.put(ev.make(ev.CASE_RESULT, result, [address]))
    return address


def policy_file(tmp_path: Path, text: str = POLICY_YAML) -> Path:
    path = tmp_path / "compare.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def row(comparison: Comparison, metric: str) -> Mapping[str, Any]:
    rows: list[Mapping[str, Any]] = comparison.body["metrics"]
    for r in rows:
        if r["metric"] == metric:
            return r
    raise AssertionError(f"no row for {metric}")


def printed(r: Mapping[str, Any]) -> str:
    d = r["difference"]
    return f"{fmt_points(d['estimate'])} {fmt_points_interval(Interval(d['lower'], d['upper'], 0.95, ''))}"


def tutorial_runs(ledger: Ledger) -> None:
    """15 cases; money_back fails in the baseline and passes in the candidate; two unlabelled."""
    criteria = ("answer_correct", "hit_rate_at_2", "citations_valid")
    base_cases, cand_cases = [], []
    for i in range(15):
        cid = "money_back" if i == 0 else f"case_{i:02d}"
        hit = NO_LABELS if i in (13, 14) else PASS
        base_cases.append(
            case(
                cid,
                {
                    "answer_correct": FAIL if i == 0 else PASS,
                    "hit_rate_at_2": hit,
                    "citations_valid": FAIL if i == 0 else PASS,
                },
                topic=f"t{i % 5}",
            )
        )
        cand_cases.append(
            case(
                cid,
                {"answer_correct": PASS, "hit_rate_at_2": hit, "citations_valid": PASS},
                topic=f"t{i % 5}",
            )
        )
    write_run(ledger, run_body("run_base", criteria), base_cases)
    write_run(ledger, run_body("run_cand", criteria), cand_cases)


# ------------------------------------------------------------------------- the spec's numbers


def test_tutorial_numbers_and_planning(ledger: Ledger, tmp_path: Path) -> None:
    tutorial_runs(ledger)
    comparison = compare_runs(ledger, "run_cand", "run_base", policy_path=policy_file(tmp_path))
    body = comparison.body
    assert body["paired_cases"] == 15
    answer = row(comparison, "answer_correct")
    assert printed(answer) == "+6.7 points [-26.5, +40.8]"
    assert (answer["paired"], answer["missing"], answer["excluded"]) == (15, 0, 0)
    assert (answer["difference"]["b"], answer["difference"]["c"]) == (1, 0)
    hit = row(comparison, "hit_rate_at_2")
    assert printed(hit) == "+0.0 points [-33.6, +33.6]"
    assert hit["excluded_reasons"] == {"no_relevance_labels": 2}
    decisions = {d["id"]: d for d in body["decisions"]}
    for rule_id, total in (("answers-not-worse", 53), ("citations-not-worse", 83)):
        d = decisions[rule_id]
        assert (d["outcome"], d["reason"]) == ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin")
        assert d["detail"]["planning"]["total"] == total
        assert d["detail"]["planning"]["more"] == total - 15
        assert d["detail"]["planning"]["discordance_percent"] == 7
    assert body["gate"] == {"blocked": True, "exit_code": 3}
    assert comparison.exit_code == 3
    # 3 metrics x 5 topics, every group has a pair (hit_rate keeps 1..3 of each topic).
    assert len(body["slices"]) == 15


def test_no_discordant_pairs_means_no_planning(ledger: Ledger, tmp_path: Path) -> None:
    cases = [
        case(f"c{i}", {"answer_correct": PASS if i < 9 else FAIL, "citations_valid": PASS})
        for i in range(13)
    ]
    criteria = ("answer_correct", "citations_valid")
    write_run(ledger, run_body("run_base", criteria), cases)
    write_run(ledger, run_body("run_cand", criteria), cases)
    comparison = compare_runs(ledger, "run_cand", "run_base", policy_path=policy_file(tmp_path))
    for metric in criteria:
        assert printed(row(comparison, metric)) == "+0.0 points [-33.6, +33.6]"
    for d in comparison.body["decisions"]:
        assert d["outcome"] == "INSUFFICIENT_EVIDENCE"
        assert d["detail"]["planning"] is None
    assert comparison.exit_code == 3


def test_n13_b1_is_the_spec_interval(ledger: Ledger) -> None:
    base = [case(f"c{i}", {"answer_correct": FAIL if i == 0 else PASS}) for i in range(13)]
    cand = [case(f"c{i}", {"answer_correct": PASS}) for i in range(13)]
    write_run(ledger, run_body("run_base"), base)
    write_run(ledger, run_body("run_cand"), cand)
    comparison = compare_runs(ledger, "run_cand", "run_base")
    assert printed(row(comparison, "answer_correct")) == "+7.7 points [-29.8, +45.5]"
    assert comparison.body["gate"] is None
    assert comparison.body["decisions"] == []
    assert comparison.exit_code == 0


# ---------------------------------------------------------------------------- pairing rules


def test_pairing_rules(ledger: Ledger) -> None:
    criteria = ("answer_correct", "hit_rate_at_2")
    base = [
        case("same", {"answer_correct": PASS, "hit_rate_at_2": PASS}),
        case("changed", {"answer_correct": PASS, "hit_rate_at_2": PASS}, input_key="old"),
        case("base_only", {"answer_correct": PASS, "hit_rate_at_2": PASS}),
        case(
            "err_base",
            {
                "answer_correct": {"s": "missing", "r": "execution_errored"},
                "hit_rate_at_2": {"s": "missing", "r": "execution_errored"},
            },
            status="errored",
        ),
        case("err_cand", {"answer_correct": PASS, "hit_rate_at_2": PASS}),
        case("judge", {"answer_correct": PASS, "hit_rate_at_2": PASS}),
        case("unlabelled", {"answer_correct": PASS, "hit_rate_at_2": NO_LABELS}),
        case("no_verdict", {"answer_correct": PASS}),
    ]
    cand = [
        case("same", {"answer_correct": FAIL, "hit_rate_at_2": PASS}),
        case("changed", {"answer_correct": PASS, "hit_rate_at_2": PASS}, input_key="new"),
        case("cand_only", {"answer_correct": PASS, "hit_rate_at_2": PASS}),
        case("err_base", {"answer_correct": PASS, "hit_rate_at_2": PASS}),
        case(
            "err_cand",
            {
                "answer_correct": {"s": "missing", "r": "execution_errored"},
                "hit_rate_at_2": {"s": "missing", "r": "execution_errored"},
            },
            status="errored",
        ),
        case(
            "judge",
            {"answer_correct": {"s": "missing", "r": "judge_failed"}, "hit_rate_at_2": NO_LABELS},
        ),
        case("unlabelled", {"answer_correct": PASS, "hit_rate_at_2": PASS}),
        case("no_verdict", {"answer_correct": PASS, "hit_rate_at_2": PASS}),
    ]
    write_run(ledger, run_body("run_base", criteria), base)
    write_run(ledger, run_body("run_cand", criteria), cand)
    body = compare_runs(ledger, "run_cand", "run_base").body

    assert body["paired_cases"] == 4  # same, judge, unlabelled, no_verdict
    unpaired = {u["reason"]: u["case_ids"] for u in body["unpaired"]}
    assert unpaired == {
        "input_differs": ["changed"],
        "only_in_candidate": ["cand_only"],
        "only_in_baseline": ["base_only"],
        "errored_in_candidate": ["err_cand"],
        "errored_in_baseline": ["err_base"],
    }
    per_case = {
        "input_differs": 1,
        "only_in_candidate": 1,
        "only_in_baseline": 1,
        "errored_in_candidate": 1,
        "errored_in_baseline": 1,
    }
    answer = {r["metric"]: r for r in body["metrics"]}["answer_correct"]
    # judge: missing in the candidate wins; same, unlabelled, no_verdict are observed.
    assert answer["missing_reasons"] == {**per_case, "judge_failed": 1}
    assert (answer["paired"], answer["missing"], answer["excluded"]) == (3, 6, 0)
    hit = {r["metric"]: r for r in body["metrics"]}["hit_rate_at_2"]
    # no_verdict: the baseline has no hit_rate verdict at all; judge, unlabelled: excluded.
    assert hit["missing_reasons"] == {**per_case, "no_verdict": 1}
    assert hit["excluded_reasons"] == {"no_relevance_labels": 2}
    assert (hit["paired"], hit["missing"], hit["excluded"]) == (1, 6, 2)
    assert answer["difference"]["estimate"] == pytest.approx(-1 / 3)


def test_missing_wins_over_excluded(ledger: Ledger) -> None:
    base = [case("a", {"hit_rate_at_2": NO_LABELS})]
    cand = [case("a", {"hit_rate_at_2": {"s": "missing", "r": "judge_failed"}})]
    write_run(ledger, run_body("run_base", ["hit_rate_at_2"]), base)
    write_run(ledger, run_body("run_cand", ["hit_rate_at_2"]), cand)
    hit = compare_runs(ledger, "run_cand", "run_base").body["metrics"][0]
    assert (hit["missing_reasons"], hit["excluded_reasons"]) == ({"judge_failed": 1}, {})


def test_metrics_only_one_run_has_are_not_compared(ledger: Ledger, tmp_path: Path) -> None:
    write_run(
        ledger,
        run_body("run_base", ["answer_correct", "citations_valid"]),
        [case("a", {"answer_correct": PASS, "citations_valid": PASS})],
    )
    write_run(
        ledger,
        run_body("run_cand", ["ndcg_at_6", "answer_correct"], kinds={"ndcg_at_6": "mean"}),
        [case("a", {"answer_correct": PASS, "ndcg_at_6": value(0.5)})],
    )
    comparison = compare_runs(ledger, "run_cand", "run_base", policy_path=policy_file(tmp_path))
    body = comparison.body
    assert [r["metric"] for r in body["metrics"]] == ["answer_correct"]
    assert body["not_compared"] == [
        {"metric": "ndcg_at_6", "only_in": "candidate"},
        {"metric": "citations_valid", "only_in": "baseline"},
    ]
    decisions = {d["id"]: d for d in body["decisions"]}
    assert decisions["citations-not-worse"]["outcome"] == "INSUFFICIENT_EVIDENCE"
    assert decisions["citations-not-worse"]["reason"] == "metric_not_compared"


def test_no_paired_cases(ledger: Ledger, tmp_path: Path) -> None:
    criteria = ("answer_correct", "citations_valid")
    write_run(
        ledger,
        run_body("run_base", criteria),
        [case("a", {"answer_correct": PASS, "citations_valid": PASS})],
    )
    write_run(
        ledger,
        run_body("run_cand", criteria),
        [case("b", {"answer_correct": PASS, "citations_valid": PASS})],
    )
    comparison = compare_runs(ledger, "run_cand", "run_base", policy_path=policy_file(tmp_path))
    body = comparison.body
    assert body["paired_cases"] == 0
    assert all(r["difference"] is None and r["paired"] == 0 for r in body["metrics"])
    assert {d["reason"] for d in body["decisions"]} == {"no_paired_cases"}
    assert body["slices"] == []
    assert comparison.exit_code == 3


def test_graded_metric_uses_the_values(ledger: Ledger) -> None:
    criteria = ["ndcg_at_6"]
    kinds = {"ndcg_at_6": "mean"}
    base = [case(f"c{i}", {"ndcg_at_6": value(0.5)}) for i in range(6)]
    cand = [case(f"c{i}", {"ndcg_at_6": value(0.75)}) for i in range(6)]
    write_run(ledger, run_body("run_base", criteria, kinds=kinds), base)
    write_run(ledger, run_body("run_cand", criteria, kinds=kinds), cand)
    diff = compare_runs(ledger, "run_cand", "run_base").body["metrics"][0]["difference"]
    assert diff["binary"] is False and diff["b"] is None
    assert diff["estimate"] == pytest.approx(0.25)
    low, high = brute_force_paired([0.75] * 6, [0.5] * 6, 0.95)
    assert diff["lower"] == pytest.approx(low, abs=1e-9)
    assert diff["upper"] == pytest.approx(high, abs=1e-9)


def test_slice_rows_use_the_candidates_values_and_support(ledger: Ledger) -> None:
    base = [case(f"c{i}", {"answer_correct": PASS}, topic="old") for i in range(6)]
    cand = [case(f"c{i}", {"answer_correct": PASS}, topic="a" if i < 4 else "b") for i in range(6)]
    write_run(ledger, run_body("run_base"), base)
    write_run(ledger, run_body("run_cand", min_slice_support=4), cand)
    rows = compare_runs(ledger, "run_cand", "run_base").body["slices"]
    assert [(r["value"], r["paired"], r["supported"]) for r in rows] == [
        ("a", 4, True),
        ("b", 2, False),
    ]
    assert rows[1]["lower"] is None and rows[1]["estimate"] == 0.0
    low, high = brute_force_paired([1.0] * 4, [1.0] * 4, 0.95)
    assert (rows[0]["lower"], rows[0]["upper"]) == pytest.approx((low, high), abs=1e-9)
    assert printed({"difference": rows[0]}) == "+0.0 points [-71.4, +71.4]"


# ---------------------------------------------------------------------------- bad input


def test_unknown_run_is_refused(ledger: Ledger) -> None:
    write_run(ledger, run_body("run_base"), [case("a", {"answer_correct": PASS})])
    with pytest.raises(UnknownIdError):
        compare_runs(ledger, "run_nope", "run_base")


def test_unreadable_policy_is_refused(ledger: Ledger, tmp_path: Path) -> None:
    tutorial_runs(ledger)
    with pytest.raises(ConfigError, match="no such file"):
        compare_runs(ledger, "run_cand", "run_base", policy_path=tmp_path / "nope.yaml")
    bad = policy_file(tmp_path, "version: 1\nrules:\n  - id: x\n    metric: answer_correct\n")
    with pytest.raises(ConfigError, match="exactly one of"):
        compare_runs(ledger, "run_cand", "run_base", policy_path=bad)


def test_a_rule_on_a_metric_neither_run_has_is_refused(ledger: Ledger, tmp_path: Path) -> None:
    tutorial_runs(ledger)
    typo = policy_file(
        tmp_path,
        "version: 1\nrules:\n  - id: x\n    metric: answer_corect\n"
        "    non_inferiority: {margin: 5}\n",
    )
    with pytest.raises(ConfigError, match="answer_corect"):
        compare_runs(ledger, "run_cand", "run_base", policy_path=typo)


# ---------------------------------------------------------------------------- the event


def test_the_comparison_is_an_event_linking_both_runs(ledger: Ledger, tmp_path: Path) -> None:
    tutorial_runs(ledger)
    path = policy_file(tmp_path)
    comparison = compare_runs(ledger, "run_cand", "run_base", policy_path=path)
    event = ledger.get(comparison.address)
    cand, base = ledger.resolve("run_cand"), ledger.resolve("run_base")
    assert event.type == ev.COMPARISON
    assert event.refs == (cand, base)
    # Each run as read: its id, its run event and how many case results were compared.
    assert event.body["candidate"] == {"run_id": "run_cand", "address": cand, "results": 15}
    assert event.body["baseline"] == {"run_id": "run_base", "address": base, "results": 15}
    assert event.body["policy_path"] == str(path.resolve())
    assert event.body["policy"]["rules"][0]["non_inferiority"] == {"margin": 5.0}
    assert ledger.lookup("comparisons", "run_cand") == [comparison.address]
    again = load_comparison(ledger, comparison.address[:20])
    assert again == comparison
    with pytest.raises(UnknownIdError, match="not a comparison"):
        load_comparison(ledger, "run_cand")


# --------------------------------------------------------------- brute force and properties


def _log_mean_exp(logs: Sequence[float]) -> float:
    top = max(logs)
    return top + math.log(math.fsum(math.exp(v - top) for v in logs) / len(logs))


def _log_k_plus(ys: Sequence[float], m: float) -> float:
    """log K+(m), one factor per pair and one term per bet, straight from the formula."""
    return _log_mean_exp(
        [math.fsum(math.log(1 + k / 20 * (y - m) / m) for y in ys) for k in range(1, 20)]
    )


def _log_k_minus(ys: Sequence[float], m: float) -> float:
    return _log_mean_exp(
        [math.fsum(math.log(1 - k / 20 * (y - m) / (1 - m)) for y in ys) for k in range(1, 20)]
    )


def _bisect(inside: Callable[[float], bool], inner: float, outer: float) -> float:
    for _ in range(200):
        mid = (inner + outer) / 2
        if mid in (inner, outer):
            break
        inner, outer = (mid, outer) if inside(mid) else (inner, mid)
    return (inner + outer) / 2


def brute_force_paired(
    candidate: Sequence[float], baseline: Sequence[float], level: float
) -> tuple[float, float]:
    """statistics.md C by hand: y = (d + 1) / 2, bisect K+(L) = K-(U) = 2/alpha, map back."""
    ys = [(c - b + 1) / 2 for c, b in zip(candidate, baseline, strict=True)]
    threshold = math.log(2 / (1 - level))
    mean = math.fsum(ys) / len(ys)
    edge = 1e-12
    lower = (
        0.0
        if mean <= edge or _log_k_plus(ys, edge) < threshold
        else _bisect(lambda m: _log_k_plus(ys, m) < threshold, mean, edge)
    )
    upper = (
        1.0
        if mean >= 1 - edge or _log_k_minus(ys, 1 - edge) < threshold
        else _bisect(lambda m: _log_k_minus(ys, m) < threshold, mean, 1 - edge)
    )
    return 2 * lower - 1, 2 * upper - 1


def stored(run_id: str, criteria: Sequence[str], kinds: Mapping[str, str]) -> StoredRun:
    return StoredRun(run_id, "sha256:" + "0" * 64, run_body(run_id, criteria, kinds=kinds))


GRADES = st.sampled_from([0.0, 0.25, 0.5, 0.63, 1.0])
PAIRS = st.lists(st.tuples(GRADES, GRADES), min_size=1, max_size=12)
BINARY_PAIRS = st.lists(
    st.tuples(st.sampled_from([0.0, 1.0]), st.sampled_from([0.0, 1.0])), min_size=1, max_size=15
)


def _compare_pure(
    pairs: Sequence[tuple[float, float]], policy: ComparePolicy | None = None
) -> dict[str, Any]:
    cand = [case(f"c{i}", {"m": value(x)}) for i, (x, _) in enumerate(pairs)]
    base = [case(f"c{i}", {"m": value(y)}) for i, (_, y) in enumerate(pairs)]
    return build_comparison(
        stored("run_cand", ["m"], {"m": "mean"}),
        cand,
        stored("run_base", ["m"], {"m": "mean"}),
        base,
        policy=policy,
    )


@settings(deadline=None, max_examples=60)
@given(PAIRS | BINARY_PAIRS)
def test_paired_interval_matches_brute_force(pairs: list[tuple[float, float]]) -> None:
    diff = _compare_pure(pairs)["metrics"][0]["difference"]
    low, high = brute_force_paired([x for x, _ in pairs], [y for _, y in pairs], 0.95)
    assert diff["lower"] == pytest.approx(low, abs=1e-7)
    assert diff["upper"] == pytest.approx(high, abs=1e-7)
    assert diff["estimate"] == pytest.approx(math.fsum(x - y for x, y in pairs) / len(pairs))
    assert diff["lower"] <= diff["estimate"] <= diff["upper"]


@settings(deadline=None, max_examples=60)
@given(PAIRS | BINARY_PAIRS)
def test_swapping_the_runs_mirrors_the_interval(pairs: list[tuple[float, float]]) -> None:
    forward = _compare_pure(pairs)["metrics"][0]["difference"]
    backward = _compare_pure([(y, x) for x, y in pairs])["metrics"][0]["difference"]
    assert backward["lower"] == pytest.approx(-forward["upper"], abs=1e-12)
    assert backward["upper"] == pytest.approx(-forward["lower"], abs=1e-12)
    assert backward["estimate"] == pytest.approx(-forward["estimate"], abs=1e-12)
    if forward["binary"]:
        assert (backward["b"], backward["c"]) == (forward["c"], forward["b"])


@settings(deadline=None, max_examples=40)
@given(BINARY_PAIRS, st.sampled_from([0.0, 1.0, 2.0, 5.0, 10.0]))
def test_planning_only_with_discordant_pairs(
    pairs: list[tuple[float, float]], margin: float
) -> None:
    policy = ComparePolicy.model_validate(
        {"version": 1, "rules": [{"id": "r", "metric": "m", "non_inferiority": {"margin": margin}}]}
    )
    body = _compare_pure(pairs, policy)
    decision = body["decisions"][0]
    diff = body["metrics"][0]["difference"]
    planning = decision["detail"]["planning"]
    if decision["outcome"] != "INSUFFICIENT_EVIDENCE" or diff["b"] + diff["c"] == 0:
        assert planning is None
    else:
        assert planning is not None
        if not planning["beyond_limit"]:
            assert len(pairs) < planning["total"] <= PLANNING_LIMIT
            assert planning["more"] == planning["total"] - len(pairs)
