"""Calibration: the labels file, the counts, the exact intervals, the gate check, the correction."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from judge_helpers import KB03, KEY_ENV, judge_settings
from pydantic import TypeAdapter
from scipy.stats import binomtest

from oloproof.calibration import (
    CORRECTED_METHOD,
    Calibration,
    LabelledExample,
    acalibrate,
    calibrate,
    corrected_rate,
    load_labels,
    requirement_check,
)
from oloproof.errors import ConfigError, DatasetError
from oloproof.evaluators.judges import build_judge, judge_identity
from oloproof.judge_config import JudgeConfig
from oloproof.results import Verdict
from oloproof.testing import RecordedRequest, Reply, ScriptedJudge, ScriptedJudgeServer, verdict

ADAPTER: TypeAdapter[Any] = TypeAdapter(JudgeConfig)


def exact(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    ci = binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)


def example(case_id: str, label: bool, answer: str = "five seats") -> LabelledExample:
    return LabelledExample(
        id=case_id,
        input={"question": "How many seats?"},
        output={"answer": answer},
        label=label,
        artifacts={"context/v1": [{"items": [KB03]}]},
    )


def calibration(tp: int, fn: int, fp: int, tn: int, **extra: Any) -> Calibration:
    return Calibration("judge-key", {"type": "t"}, 0.95, tp, fn, fp, tn, **extra)


# --- the labels file ---------------------------------------------------------------------------


def write(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "labels.jsonl"
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


GOOD: dict[str, Any] = {
    "id": "a",
    "input": {"question": "q"},
    "output": {"answer": "five"},
    "context": [{"doc_id": "kb-03", "text": "Team plans include five seats."}],
    "citations": ["kb-03"],
    "expected": {"answer": "5"},
    "label": True,
}


def test_the_recorded_digest_is_of_the_bytes_the_examples_were_read_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The file is edited between reads: it was read twice, once for the examples and once for
    # the digest, so a calibration could record one file's digest beside another's examples.
    from oloproof.calibration import labels

    path = write(tmp_path, GOOD)
    edited = (json.dumps({**GOOD, "label": False}) + "\n").encode()
    contents = [path.read_bytes(), edited]
    monkeypatch.setattr(labels, "read_file", lambda *args: contents.pop(0))
    (example,), digest = labels.read_labels(path)
    assert example.label is True
    assert digest == "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    assert contents == [edited]  # read once


def test_load_labels_reads_every_field(tmp_path: Path) -> None:
    second = {
        **GOOD,
        "id": "b",
        "label": False,
        "context": {"items": [], "token_budget": 10},
        "citations": {"ids": []},
    }
    del second["expected"]
    path = write(tmp_path, GOOD, "", second)
    first, other = load_labels(path)
    assert (first.id, first.label, other.label) == ("a", True, False)
    view = first.view()
    assert view.artifact("context/v1") == {
        "items": [GOOD["context"][0]],
        "dropped": [],
        "source": "retrieval",
    }
    assert view.artifact("citations/v1") == {"ids": ["kb-03"]}
    assert view.expected == {"answer": "5"}
    assert other.view().artifact("context/v1")["token_budget"] == 10  # type: ignore[index]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2: not valid JSON"),
        ('{"id": "b", "label": true, "label": false}', "line 2: the key 'label' appears twice"),
        ("[1, 2]", "line 2: expected one JSON object"),
        ({**GOOD, "id": "b", "label": "yes"}, "line 2: label: Input should be a valid boolean"),
        ({k: v for k, v in GOOD.items() if k != "label"} | {"id": "b"}, "line 2: label: Field"),
        ({**GOOD, "id": "b", "colour": "red"}, "line 2: colour: unknown key"),
        ({**GOOD}, "line 2: id 'a' already used on line 1"),
        ({**GOOD, "id": "b", "context": [{"text": "no id"}]}, "line 2: malformed context/v1"),
        ({**GOOD, "id": ""}, "line 2: id: String should have at least 1 character"),
    ],
)
def test_load_labels_names_the_line(tmp_path: Path, line: object, message: str) -> None:
    path = write(tmp_path, GOOD, line)
    with pytest.raises(DatasetError, match=message.replace("(", r"\(").replace("[", r"\[")):
        load_labels(path)


def test_load_labels_takes_ids_in_another_unicode_form_as_the_same_id(tmp_path: Path) -> None:
    path = write(tmp_path, {**GOOD, "id": "caf\u00e9"}, {**GOOD, "id": "cafe\u0301"})
    with pytest.raises(DatasetError, match=r"line 2: id 'cafe\\u0301' is the same text as"):
        load_labels(path)
    first, second = load_labels(
        write(tmp_path, {**GOOD, "id": "caf\u00e9"}, "", {**GOOD, "id": "b"})
    )
    assert (first.line, second.line) == (1, 3)


def test_load_labels_reports_a_repeated_id_before_a_later_bad_line(tmp_path: Path) -> None:
    # The file's first mistake is the one reported, whatever is wrong further down.
    path = write(tmp_path, GOOD, {**GOOD, "id": "b"}, GOOD, "{not json")
    with pytest.raises(DatasetError, match=r"line 3: id 'a' already used on line 1$"):
        load_labels(path)


def test_load_labels_refuses_an_empty_or_absent_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no labelled example"):
        load_labels(write(tmp_path, ""))
    with pytest.raises(DatasetError, match="no such file"):
        load_labels(tmp_path / "absent.jsonl")


# --- the counts and their intervals ------------------------------------------------------------


def scripted_run() -> Calibration:
    # 30 human passes: the judge passes 27; 20 human fails: the judge fails 16.
    # Plus one missing and one excluded judgment, which count in neither.
    labels: dict[str, bool] = {}
    said: dict[str, Verdict | bool] = {}
    for i in range(30):
        labels[f"p{i}"] = True
        said[f"p{i}"] = i >= 3
    for i in range(20):
        labels[f"f{i}"] = False
        said[f"f{i}"] = i < 4  # the judge passes four of them
    labels["m"], said["m"] = True, Verdict.missing("judge_call_failed")
    labels["x"], said["x"] = False, Verdict.excluded("no_context_recorded")
    judge = ScriptedJudge(said, criterion="groundedness")
    return calibrate(judge, [example(i, label) for i, label in labels.items()])


def test_counts_rates_and_lists() -> None:
    result = scripted_run()
    assert (result.true_pass, result.false_fail) == (27, 3)
    assert (result.true_fail, result.false_pass) == (16, 4)
    assert result.missing == ("m",) and result.excluded == ("x",)
    assert result.missing_reasons == {"judge_call_failed": 1}
    assert set(result.disagreements) == {"p0", "p1", "p2", "f0", "f1", "f2", "f3"}
    assert (result.sensitivity.k, result.sensitivity.n) == (27, 30)
    assert (result.specificity.k, result.specificity.n) == (16, 20)
    assert (result.agreement.k, result.agreement.n) == (43, 50)


@pytest.mark.parametrize("name", ["sensitivity", "specificity", "agreement"])
def test_intervals_are_scipys_exact_intervals(name: str) -> None:
    rate = getattr(scripted_run(), name)
    lower, upper = exact(rate.k, rate.n)
    assert rate.interval.lower == pytest.approx(lower, abs=1e-12)
    assert rate.interval.upper == pytest.approx(upper, abs=1e-12)
    assert rate.interval.method == "clopper-pearson"


def test_the_body_is_plain_data_and_round_trips() -> None:
    result = scripted_run()
    body = result.to_body()
    assert json.loads(json.dumps(body)) == body
    assert body["identity"] == judge_identity(result.judge)
    assert body["sensitivity"]["k"] == 27 and body["counts"]["missing"] == 1
    assert Calibration.from_body(body) == result


def test_a_score_judge_cannot_be_calibrated() -> None:
    judge = ScriptedJudge({}, kind="mean")
    with pytest.raises(ConfigError, match="pass/fail"):
        calibrate(judge, [example("a", True)])


def test_identity_ignores_the_criterion_but_not_the_model(tmp_path: Path) -> None:
    def spec(**extra: Any) -> dict[str, Any]:
        data = {"type": "groundedness_judge", "provider": "openai", "model": "m1", **extra}
        return build_judge(ADAPTER.validate_python(data), base_dir=tmp_path).spec()

    base = judge_identity(spec())
    assert judge_identity(spec(criterion="grounded_v2")) == base
    assert judge_identity(spec(timeout_s=5, max_retries=0, concurrency=1)) == base
    assert judge_identity(spec(model="m2")) != base
    assert judge_identity(spec(temperature=0.5)) != base
    assert judge_identity(spec(base_url="http://localhost:8000/v1")) != base
    assert judge_identity(spec(template_version=1)) == base  # 1 is the newest today


# --- may it gate? ------------------------------------------------------------------------------


def test_no_calibration_is_manual_review() -> None:
    assert requirement_check(None, 0.8, 0.8, 0.95) == ("MANUAL_REVIEW", "judge_not_calibrated")


def test_a_calibration_of_another_judge_does_not_count() -> None:
    result = calibration(100, 0, 0, 100)
    assert requirement_check(result, None, None, 0.95, identity="other") == (
        "MANUAL_REVIEW",
        "judge_not_calibrated",
    )
    assert requirement_check(result, None, None, 0.95, identity="judge-key") == (None, None)


def test_the_lower_bounds_decide() -> None:
    # 27/30 and 16/20: point estimates 0.9 and 0.8, exact lower bounds ~0.735 and ~0.563.
    result = calibration(27, 3, 4, 16)
    se_low, sp_low = exact(27, 30)[0], exact(16, 20)[0]
    assert requirement_check(result, se_low - 1e-9, sp_low - 1e-9, 0.95) == (None, None)
    assert requirement_check(result, se_low + 1e-9, None, 0.95) == (
        "MANUAL_REVIEW",
        "judge_below_requirement",
    )
    assert requirement_check(result, None, sp_low + 1e-9, 0.95)[1] == "judge_below_requirement"
    # A point estimate above the minimum is not enough.
    assert requirement_check(result, 0.85, None, 0.95)[1] == "judge_below_requirement"


def test_the_policy_level_is_used_not_the_calibrations() -> None:
    result = calibration(27, 3, 4, 16)
    low_90 = exact(27, 30, 0.90)[0]
    low_99 = exact(27, 30, 0.99)[0]
    assert low_99 < low_90
    minimum = (low_90 + low_99) / 2
    assert requirement_check(result, minimum, None, 0.90) == (None, None)
    assert requirement_check(result, minimum, None, 0.99)[1] == "judge_below_requirement"


def test_a_rate_never_measured_clears_nothing() -> None:
    no_fails = calibration(50, 0, 0, 0)
    assert no_fails.specificity.interval is None
    assert requirement_check(no_fails, 0.5, None, 0.95)[1] == "judge_below_requirement"
    assert requirement_check(no_fails, None, None, 0.95)[1] == "judge_below_requirement"
    no_passes = calibration(0, 0, 1, 49)
    assert requirement_check(no_passes, None, None, 0.95)[1] == "judge_below_requirement"
    one_each = calibration(1, 0, 0, 1)
    assert requirement_check(one_each, None, None, 0.95, beats_chance=False) == (None, None)


def test_a_judge_must_be_shown_better_than_chance() -> None:
    # A flawless judge: each exact lower bound is (alpha/2)^(1/n) (scipy's agrees), so the two
    # add up to more than 1 from 6 labels of each kind at 0.95, and not at 5.
    for n, clears in ((5, False), (6, True)):
        lower = float(binomtest(n, n).proportion_ci(0.95, method="exact").low)
        assert lower == pytest.approx(0.025 ** (1 / n), abs=1e-12)
        assert (2 * lower > 1) is clears
        expected = (None, None) if clears else ("MANUAL_REVIEW", "judge_near_chance")
        assert requirement_check(calibration(n, 0, 0, n), None, None, 0.95) == expected
    # A judge that passes everything clears a sensitivity minimum, and still decides nothing.
    yes = calibration(20, 0, 20, 0)
    assert requirement_check(yes, 0.8, None, 0.95) == ("MANUAL_REVIEW", "judge_near_chance")
    assert requirement_check(yes, 0.8, None, 0.95, beats_chance=False) == (None, None)


# --- the corrected metric ----------------------------------------------------------------------


def test_rogan_gladen_point_estimate() -> None:
    # Se = 0.9, Sp = 0.8; observed 62/100: (0.62 + 0.8 - 1) / (0.9 + 0.8 - 1) = 0.6
    estimate, interval = corrected_rate(62, 100, calibration(90, 10, 20, 80))
    assert estimate == pytest.approx(0.6)
    assert interval.method == CORRECTED_METHOD and interval.level == 0.95
    assert interval.lower < 0.6 < interval.upper


def test_the_estimate_is_clipped() -> None:
    assert corrected_rate(5, 100, calibration(90, 10, 20, 80))[0] == 0.0
    assert corrected_rate(100, 100, calibration(80, 20, 2, 98))[0] == 1.0


@pytest.mark.parametrize(
    ("k", "n", "tp", "fn", "fp", "tn"),
    [(5, 0, 9, 1, 1, 9), (5, 10, 0, 0, 1, 9), (5, 10, 9, 1, 0, 0), (5, 10, 5, 5, 6, 4)],
)
def test_undefined_corrections_are_none_over_everything(
    k: int, n: int, tp: int, fn: int, fp: int, tn: int
) -> None:
    if k > n:
        k = n
    estimate, interval = corrected_rate(k, n, calibration(tp, fn, fp, tn))
    assert estimate is None
    assert (interval.lower, interval.upper) == (0.0, 1.0)


def test_the_interval_is_seeded_and_widens_with_a_smaller_calibration() -> None:
    big = calibration(900, 100, 200, 800)
    small = calibration(9, 1, 2, 8)
    first = corrected_rate(300, 500, big, seed=3)
    assert corrected_rate(300, 500, big, seed=3) == first
    width_big = first[1].upper - first[1].lower
    narrow = corrected_rate(300, 500, small, seed=3)[1]
    assert narrow.upper - narrow.lower > width_big
    # And it is wider than the uncorrected exact interval, which ignores the judge's errors.
    low, high = exact(300, 500)
    assert width_big > high - low


def test_a_perfect_calibration_still_carries_uncertainty() -> None:
    estimate, interval = corrected_rate(80, 100, calibration(20, 0, 0, 20))
    assert estimate == pytest.approx(0.8)
    low, high = exact(80, 100)
    assert interval.upper - interval.lower > high - low


def test_coverage_over_1000_simulated_suites() -> None:
    """The 95% interval covers the true pass rate in at least 95% of simulated suites."""
    rng = np.random.default_rng(20240601)
    true_rate, sensitivity, specificity = 0.8, 0.9, 0.85
    n_suite, n_positive, n_negative = 200, 100, 60
    observed_rate = sensitivity * true_rate + (1 - specificity) * (1 - true_rate)
    covered = 0
    for suite in range(1000):
        tp = int(rng.binomial(n_positive, sensitivity))
        tn = int(rng.binomial(n_negative, specificity))
        k = int(rng.binomial(n_suite, observed_rate))
        result = calibration(tp, n_positive - tp, n_negative - tn, tn)
        _, interval = corrected_rate(k, n_suite, result, 0.95, seed=suite)
        covered += interval.lower <= true_rate <= interval.upper
    assert covered >= 950, f"covered the truth in {covered} of 1000 suites"


# --- end to end over HTTP ----------------------------------------------------------------------


def test_calibrating_a_real_judge_over_http(secret: str) -> None:
    # The scripted judge passes an answer when it says "five"; people also require "seats".
    def responder(request: RecordedRequest) -> Reply:
        answer = request.user_message.split("<answer>")[1]
        return verdict("five" in answer.lower())

    examples = [
        example("a", True, "five seats"),
        example("b", True, "Five seats."),
        example("c", False, "five"),  # the judge passes it: a false pass
        example("d", False, "six seats"),
        example("e", True, "5 seats"),  # the judge fails it: a false fail
    ]
    with ScriptedJudgeServer(default=responder) as server:
        config = ADAPTER.validate_python(
            {"type": "groundedness_judge", **judge_settings(server, "anthropic")}
        )
        judge = build_judge(config, base_dir=Path("."))

        async def go() -> Calibration:
            return await acalibrate(judge, examples, labels={"path": "inline"})

        import asyncio

        result = asyncio.run(go())
        assert len(server.requests) == 5
    assert (result.true_pass, result.false_fail, result.false_pass, result.true_fail) == (
        2,
        1,
        1,
        1,
    )
    assert result.identity == judge_identity(judge.spec())
    assert result.labels == {"n": 5, "path": "inline"}
    assert result.judge["model"] == "judge-model-1"
    assert KEY_ENV not in json.dumps(result.to_body())
    assert secret not in json.dumps(result.to_body())


# --- only the model's verdicts count -----------------------------------------------------------

JUDGES: dict[str, dict[str, Any]] = {
    "groundedness_judge": {},
    "citation_support_judge": {},
    "answer_judge": {},
    "rubric_judge": {"criterion": "tone", "rubric": "Polite."},
}


@pytest.mark.parametrize("judge_type", sorted(JUDGES))
@pytest.mark.parametrize(
    ("output", "message"),
    [
        ({"text": "five seats"}, "the output has no 'answer', the field the judge"),
        ({"answer": ["five seats"]}, "the output's 'answer' is a list, not the text the judge"),
    ],
)
def test_an_example_the_model_is_never_asked_about_is_refused(
    judge_type: str, output: object, message: str
) -> None:
    # Each judge fails such an output without a call; that fail is not the model's verdict.
    examples = [
        LabelledExample(
            id=case_id,
            input={"question": "How many seats?"},
            output=output if case_id == "no-text" else {"answer": "five seats"},
            label=case_id == "ok",
            expected={"answer": "five"},
            artifacts={"context/v1": [{"items": [KB03]}], "citations/v1": [{"ids": ["kb-03"]}]},
        )
        for case_id in ("ok", "no-text")
    ]
    with ScriptedJudgeServer(default=verdict(True)) as server:
        config = ADAPTER.validate_python(
            {"type": judge_type, **JUDGES[judge_type], **judge_settings(server, "openai")}
        )
        with pytest.raises(DatasetError, match=f"example 'no-text': {message}"):
            calibrate(build_judge(config, base_dir=Path(".")), examples)
        assert server.requests == []
