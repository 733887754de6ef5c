"""Judges in runs: the policy's judge check, usage per judge, the corrected metric, the dry run.

Runs go through ``plan_run``/``execute_run`` into a real ledger in a temp folder; the LLM judge
talks to the scripted server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from ledger import Ledger
from oloproof import events as ev
from oloproof.calibration import Calibration, run_calibration
from oloproof.cli.render import (
    corrected_lines,
    dry_run_lines,
    judge_rule_line,
    judge_usage_lines,
    run_report_lines,
)
from oloproof.config import Policy, Rule
from oloproof.dry_run import DryRun, JudgeCalls, JudgeRuleStanding, dry_run
from oloproof.errors import ConfigError
from oloproof.evaluators.judges import UsageMeter
from oloproof.metrics import MetricTally
from oloproof.policy import JudgeStanding, decide_policy, decide_rule
from oloproof.report import CorrectedRow, JudgeUsageRow, corrected_row
from oloproof.results import Verdict
from oloproof.runner import RunOutcome, RunPlan, execute_run, plan_run
from oloproof.store import open_project_ledger
from oloproof.stored_runs import read_run_report
from oloproof.testing import (
    RecordedRequest,
    Reply,
    ScriptedJudge,
    ScriptedJudgeServer,
    prompt_tokens,
    verdict,
)

# --- the policy's judge check (pure) -----------------------------------------------------------

RULE = Rule.model_validate({"id": "grounded", "metric": "groundedness", "min": 0.5})


def tally(passed: int, failed: int) -> MetricTally:
    metric = MetricTally("groundedness", "pass_fail")
    metric.passed, metric.failed = passed, failed
    return metric


def test_an_uncalibrated_judge_is_manual_review_of_an_observed_metric() -> None:
    standing = JudgeStanding("MANUAL_REVIEW", "judge_not_calibrated", {"calibration": None})
    decided = decide_rule(RULE, tally(9, 1), 0.95, lambda rule: standing)
    assert (decided.outcome, decided.reason) == ("MANUAL_REVIEW", "judge_not_calibrated")
    assert decided.detail == {"judge": {"calibration": None}}
    # With no evidence at all the rule stands on nothing, which blocks whatever block_on says;
    # the judge's standing is still kept. Decisions of schema 6 asked the judge first.
    empty = decide_rule(RULE, tally(0, 0), 0.95, lambda rule: standing)
    assert (empty.outcome, empty.reason) == ("INSUFFICIENT_EVIDENCE", "no_observed_cases")
    assert empty.detail == {"judge": {"calibration": None}}
    older = decide_rule(
        RULE, tally(0, 0), 0.95, lambda rule: standing, unobserved_before_judge=False
    )
    assert (older.outcome, older.reason) == ("MANUAL_REVIEW", "judge_not_calibrated")


def test_a_cleared_judge_decides_on_the_interval_and_the_detail_names_its_calibration() -> None:
    standing = JudgeStanding(None, None, {"calibration": "sha256:" + "ab" * 32})
    decided = decide_rule(RULE, tally(19, 1), 0.95, lambda rule: standing)
    assert (decided.outcome, decided.reason) == ("PASS", "interval_above_threshold")
    assert decided.detail["judge"] == {"calibration": "sha256:" + "ab" * 32}
    assert decided.detail["method"] == "clopper-pearson"
    none = decide_rule(RULE, tally(0, 0), 0.95, lambda rule: standing)
    assert (none.outcome, none.reason) == ("INSUFFICIENT_EVIDENCE", "no_observed_cases")
    assert "judge" in none.detail


def test_rules_on_other_metrics_are_unchanged() -> None:
    policy = Policy.model_validate(
        {"version": 1, "rules": [{"id": "r", "metric": "answer_correct", "min": 0.5}]}
    )
    metrics = {"answer_correct": tally(9, 1)}
    with_check = decide_policy(policy, metrics, lambda rule: None)
    assert with_check == decide_policy(policy, metrics)
    assert "judge" not in with_check[0].detail


# --- usage per judge ---------------------------------------------------------------------------


class _Judge:
    criterion = "groundedness"
    kind = "pass_fail"

    def __init__(self, verdicts: dict[str, Verdict], config: Any = None) -> None:
        self.verdicts = verdicts
        self.config = config

    def spec(self) -> dict[str, Any]:
        return {"type": "groundedness_judge", "criterion": self.criterion}

    async def ajudge(self, view: Any) -> Verdict:
        return self.verdicts[view.case_id]


class _View:
    def __init__(self, case_id: str) -> None:
        self.case_id = case_id


def test_the_meter_tells_new_calls_from_reused_judgments() -> None:
    usage = {"usage": {"input_tokens": 100, "output_tokens": 7}, "cost": 0.5}
    verdicts = {
        "a": Verdict.passed(**usage),
        "b": Verdict.missing("judge_call_failed", attempts=3),
        "c": Verdict.excluded("no_context_recorded"),
        "d": Verdict.failed("not_grounded", usage={"input_tokens": None, "output_tokens": None}),
    }
    meter = UsageMeter(["groundedness"], {"groundedness": {"calls": 2, "reused": 1}})
    watched = meter.watch(_Judge(verdicts))  # type: ignore[arg-type]
    assert meter.watch(watched) is not watched  # only the metered criteria are wrapped

    async def judge_all() -> None:
        for case_id in verdicts:
            await watched.ajudge(_View(case_id))  # type: ignore[arg-type]

    asyncio.run(judge_all())
    meter.case_done("a", ["groundedness"])
    meter.case_done("b", ["groundedness"])
    meter.case_done("c", [])  # excluded: no judgment recorded
    meter.case_done("d", ["groundedness"])
    meter.case_done("e", ["groundedness"])  # never judged here: from the cache
    meter.case_done("f", [])  # errored
    assert meter.totals() == {
        "groundedness": {
            "calls": 4,  # 2 before, then a and d
            "calls_without_usage": 1,
            "input_tokens": 100,
            "output_tokens": 7,
            "cost": 0.5,
            "failed": 1,
            "reused": 2,
        }
    }


def test_a_judge_that_raises_is_counted_failed_not_reused() -> None:
    class Raising(_Judge):
        async def ajudge(self, view: Any) -> Verdict:
            raise KeyError(view.case_id)

    meter = UsageMeter(["groundedness"])
    watched = meter.watch(Raising({}))  # type: ignore[arg-type]
    with pytest.raises(KeyError):
        asyncio.run(watched.ajudge(_View("a")))  # type: ignore[arg-type]
    meter.case_done("a", ["groundedness"])  # its missing judgment (evaluator_raised) recorded
    meter.case_done("b", ["groundedness"])  # never judged here: from the cache
    totals = meter.totals()["groundedness"]
    assert (totals["failed"], totals["reused"], totals["calls"]) == (1, 1, 0)


def test_a_priced_judge_that_makes_no_call_costs_zero() -> None:
    class Priced:
        price_per_input_token = 1e-6
        price_per_output_token = 2e-6

    meter = UsageMeter(["groundedness"])
    meter.watch(_Judge({}, Priced()))  # type: ignore[arg-type]
    meter.case_done("a", ["groundedness"])
    assert meter.totals()["groundedness"]["cost"] == 0.0
    assert UsageMeter(["groundedness"]).totals()["groundedness"]["cost"] is None


# --- rendering ---------------------------------------------------------------------------------

ADDRESS = "sha256:" + "0123456789abcdef" * 4


def test_judge_rule_lines() -> None:
    assert judge_rule_line("grounded", "groundedness", {"calibration": None}) == (
        "Judge of grounded: no calibration of this exact judge; record one with: "
        "oloproof calibrate --evaluator groundedness --labels FILE"
    )
    detail = {
        "calibration": ADDRESS,
        "sensitivity": {"k": 19, "n": 20, "lower": 0.7512672372279723},
        "specificity": {"k": 20, "n": 20, "lower": 0.8315665290169147},
        "min_sensitivity": 0.7,
        "min_specificity": None,
    }
    assert judge_rule_line("grounded", "groundedness", detail) == (
        "Judge of grounded: calibration sha256:0123456789ab: sensitivity ≥ 75.1% (19/20), "
        "needs 70.0%; specificity ≥ 83.1% (20/20)"
    )


def test_corrected_and_usage_lines() -> None:
    rows = [
        CorrectedRow(
            "groundedness", 0.9649, 0.7049, 1.0, 0.95, "m", 11, 12, ADDRESS, [19, 20], [20, 20]
        ),
        CorrectedRow("faithful", None, 0.0, 1.0, 0.95, "m", 0, 0, ADDRESS, [3, 3], [0, 0]),
    ]
    assert corrected_lines(rows)[1:] == [
        "┌──────────────┬───────────┬─────────────────┬─────────────────────────────────────────────────────────────┐",
        "│ metric       │ corrected │ interval        │ evidence                                                    │",
        "├──────────────┼───────────┼─────────────────┼─────────────────────────────────────────────────────────────┤",
        "│ groundedness │ 96.5%     │ [70.4%, 100.0%] │ 11 / 12 judged pass · sensitivity 19/20 · specificity 20/20 │",
        "│ faithful     │ —         │ [0.0%, 100.0%]  │ 0 / 0 judged pass · sensitivity 3/3 · specificity 0/0       │",
        "└──────────────┴───────────┴─────────────────┴─────────────────────────────────────────────────────────────┘",
        "groundedness: corrected with calibration sha256:0123456789ab",
        "faithful: corrected with calibration sha256:0123456789ab",
    ]
    usage = [
        JudgeUsageRow("groundedness", "openai", "m-1", 1200, 3, 40, 123456, 7890, 0.0421, 0),
        JudgeUsageRow("tone", "anthropic", "c-2", 5, 0, 0, 500, 50, None, 2),
    ]
    assert judge_usage_lines(usage)[1:] == [
        "┌──────────────┬───────────────┬──────────────────┬────────┬──────────────┬───────────────┬────────┐",
        "│ judge        │ model         │ calls            │ reused │ input tokens │ output tokens │ cost   │",
        "├──────────────┼───────────────┼──────────────────┼────────┼──────────────┼───────────────┼────────┤",
        "│ groundedness │ openai m-1    │ 1,200 + 3 failed │ 40     │ 123,456      │ 7,890         │ 0.0421 │",
        "│ tone         │ anthropic c-2 │ 5                │ 0      │ 500          │ 50            │ —      │",
        "└──────────────┴───────────────┴──────────────────┴────────┴──────────────┴───────────────┴────────┘",
        "tone: 2 replies reported no token counts, so the tokens above leave them out",
    ]


def test_dry_run_lines() -> None:
    plan = DryRun(
        cases=10,
        would_execute=4,
        cached=6,
        judges=[
            JudgeCalls("groundedness", "openai", "m-1", 2, 4, 3, 1),
            JudgeCalls("scripted", None, None, 0, 4, 6, 0),
        ],
        judge_rules=[
            JudgeRuleStanding("grounded", "groundedness", None, None, ADDRESS),
            JudgeRuleStanding(
                "g2", "groundedness", "MANUAL_REVIEW", "judge_below_requirement", ADDRESS
            ),
            JudgeRuleStanding("g3", "groundedness", "MANUAL_REVIEW", "judge_not_calibrated", None),
        ],
        has_ledger=True,
    )
    assert dry_run_lines(plan) == [
        "Dry run: nothing was executed, judged or recorded.",
        "Cases: 4 of 10 would execute; 6 reused from the execution cache",
        "Judge calls after the judgment cache:",
        "  groundedness (openai m-1): at most 6 calls (2 on cached outputs, at most 4 for the "
        "cases that would execute); 3 reused from the judgment cache, 1 decided without a call",
        "  scripted: at most 4 calls, one per case that would execute; 6 reused from the "
        "judgment cache",
        "Judge rules:",
        "  grounded (groundedness): calibration sha256:0123456789ab clears the rule's minimums; "
        "the rule will decide on the metric",
        "  g2 (groundedness): calibration sha256:0123456789ab falls short; the rule would decide "
        "MANUAL_REVIEW (judge_below_requirement)",
        "  g3 (groundedness): no calibration of this exact judge; the rule would decide "
        "MANUAL_REVIEW (judge_not_calibrated)",
    ]
    assert plan.to_json()["judges"][0]["at_most"] == 6


# --- runs in a real ledger ---------------------------------------------------------------------

APP = """
from oloproof import Context, ContextItem, current_case, system

@system(name="echo", version="1", records=["context/v1"])
def answer(case_input):
    current_case().context(Context(items=(ContextItem(doc_id="kb", text="The sky is blue."),)))
    return {"answer": case_input["question"]}
"""

CASES = [
    {"id": "blue", "input": {"question": "The sky is blue."}, "expected": {"answer": "sky"}},
    {"id": "green", "input": {"question": "The sky is green."}, "expected": {"answer": "sky"}},
    {"id": "blue2", "input": {"question": "Blue is the sky."}, "expected": {"answer": "sky"}},
]
LABELS = [
    {
        "id": f"{'ok' if good else 'bad'}{i}",
        "input": {"question": f"q{i}"},
        "output": {"answer": "The sky is blue." if good else "The sky is green."},
        "context": [{"doc_id": "kb", "text": "The sky is blue."}],
        "label": good,
    }
    for good in (True, False)
    for i in range(10)
]


def responder(request: RecordedRequest) -> Reply:
    return verdict("green" not in request.user_message.split("<answer>")[-1])


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, ScriptedJudgeServer]]:
    with ScriptedJudgeServer(default=responder) as server:
        (tmp_path / "app.py").write_text(APP)
        (tmp_path / "cases.jsonl").write_text("\n".join(json.dumps(c) for c in CASES) + "\n")
        (tmp_path / "labels.jsonl").write_text("\n".join(json.dumps(x) for x in LABELS) + "\n")
        config = {
            "system": {"name": "echo", "version": "1", "callable": "app:answer"},
            "evaluators": [
                {"type": "contains", "criterion": "echoed"},
                {
                    "type": "groundedness_judge",
                    "provider": "openai",
                    "model": "judge-1",
                    "base_url": server.openai_base_url,
                    "api_key_env": None,
                    "max_retries": 0,
                },
            ],
            "policy": "policy.yaml",
        }
        (tmp_path / "oloproof.yaml").write_text(yaml.safe_dump(config))
        policy = {
            "version": 1,
            "rules": [
                {"id": "grounded", "metric": "groundedness", "min": 0.1},
                {"id": "echo", "metric": "echoed", "min": 0.1},
            ],
        }
        (tmp_path / "policy.yaml").write_text(yaml.safe_dump(policy))
        yield tmp_path, server


def execute(ledger: Ledger, plan: RunPlan) -> RunOutcome:
    return asyncio.run(execute_run(ledger, plan))


def test_the_decision_records_and_links_the_calibration_it_relied_on(
    project: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, _ = project
    with open_project_ledger(root) as ledger:
        first = execute(ledger, plan_run(root / "oloproof.yaml"))
        rules = {r.rule_id: r for r in first.report.rules}
        assert (rules["grounded"].outcome, rules["grounded"].reason) == (
            "MANUAL_REVIEW",
            "judge_not_calibrated",
        )
        assert rules["grounded"].detail["judge"]["calibration"] is None
        assert "judge" not in rules["echo"].detail
        assert first.report.corrected == []

        address, calibration = run_calibration(
            root / "oloproof.yaml", "groundedness", root / "labels.jsonl", ledger
        )
        second = execute(ledger, plan_run(root / "oloproof.yaml"))
        grounded = next(r for r in second.report.rules if r.rule_id == "grounded")
        assert grounded.outcome == "INSUFFICIENT_EVIDENCE"  # 2 of 3, min 0.1: [9.4%, 99.2%]
        assert grounded.detail["judge"]["calibration"] == address
        assert grounded.detail["judge"]["identity"] == calibration.identity
        decision = next(
            e for a, e in ledger.events(ev.DECISION) if e.body["run_id"] == second.run_id
        )
        assert decision.refs[2:] == (address,)

        (row,) = second.report.corrected
        assert (row.criterion, row.calibration, row.successes, row.observed) == (
            "groundedness",
            address,
            2,
            3,
        )
        assert (row.sensitivity, row.specificity) == ([10, 10], [10, 10])
        assert row.lower <= (row.estimate or 0) <= row.upper
        assert row == corrected_row(_metric(ledger, second.run_id), calibration, address, 0.95)
        lines = run_report_lines(second.report)
        assert any(line.startswith("Judge metrics corrected") for line in lines)


def _metric(ledger: Ledger, run_id: str) -> MetricTally:
    from oloproof.metrics import criteria_of, tally_run
    from oloproof.stored_runs import load_run

    run = load_run(ledger, run_id)
    return tally_run(ledger, run_id, criteria_of(run.body), []).metrics["groundedness"]


def test_the_report_uses_the_decisions_calibration_not_a_later_one(
    project: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, _ = project
    with open_project_ledger(root) as ledger:
        first, _ = run_calibration(
            root / "oloproof.yaml", "groundedness", root / "labels.jsonl", ledger
        )
        outcome = execute(ledger, plan_run(root / "oloproof.yaml"))
        (labels := root / "labels.jsonl").write_text(
            "\n".join(json.dumps(x) for x in LABELS[:15]) + "\n"
        )
        later, _ = run_calibration(root / "oloproof.yaml", "groundedness", labels, ledger)
        assert later != first
        report = read_run_report(ledger, outcome.run_id)
        assert [row.calibration for row in report.corrected] == [first]


def test_a_failed_judge_call_is_tried_again_on_the_next_run(
    project: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, _ = project
    judge = ScriptedJudge(
        {"green": Verdict.missing("judge_call_failed", error="scripted outage")},
        criterion="scripted",
        default=Verdict.passed(),
    )
    with open_project_ledger(root) as ledger:
        plan = plan_run(root / "oloproof.yaml")
        plan.evaluators.append(judge)
        first = execute(ledger, plan)
        assert sorted(judge.seen) == ["blue", "blue2", "green"]
        scripted = next(m for m in first.report.metrics if m.criterion == "scripted")
        assert (scripted.observed, scripted.missing) == (2, 1)

        judge.verdicts = {}  # the outage is over
        judge.seen.clear()
        plan = plan_run(root / "oloproof.yaml")
        plan.evaluators.append(judge)
        second = execute(ledger, plan)
        assert judge.seen == ["green"]  # the two judgments that were made are reused
        scripted = next(m for m in second.report.metrics if m.criterion == "scripted")
        assert (scripted.observed, scripted.missing) == (3, 0)


def test_judge_usage_is_totalled_per_run(
    project: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, server = project
    with open_project_ledger(root) as ledger:
        first = execute(ledger, plan_run(root / "oloproof.yaml"))
        (usage,) = first.report.judges
        assert (usage.criterion, usage.provider, usage.model) == (
            "groundedness",
            "openai",
            "judge-1",
        )
        assert (usage.calls, usage.reused, usage.failed) == (3, 0, 0)
        # The server counts each prompt it read (4 characters a token), and says so per reply.
        counted = sum(prompt_tokens(request) for request in server.requests)
        assert (usage.input_tokens, usage.output_tokens, usage.cost) == (counted, 60, None)
        assert len(server.requests) == 3
        second = execute(ledger, plan_run(root / "oloproof.yaml"))
        (usage,) = second.report.judges
        assert (usage.calls, usage.reused, usage.input_tokens) == (0, 3, 0)
        assert first.report.to_json()["judges"][0]["calls"] == 3


def test_a_resumed_run_adds_to_the_usage_recorded_before(
    project: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, server = project
    with open_project_ledger(root) as ledger:
        plan = plan_run(root / "oloproof.yaml")
        part = asyncio.run(execute_run(ledger, plan, cases=plan.dataset.cases[:1]))
        first = prompt_tokens(server.requests[0])
        assert [(u.calls, u.input_tokens) for u in part.report.judges] == [(1, first)]
        run = ledger.get(part.run_address)
        plan = plan_run(root / "oloproof.yaml")
        rest = asyncio.run(
            execute_run(ledger, plan, resume=(part.run_id, part.run_address, run.body))
        )
        counted = sum(prompt_tokens(request) for request in server.requests)
        assert [(u.calls, u.input_tokens, u.reused) for u in rest.report.judges] == [
            (3, counted, 0)
        ]


def test_the_dry_run_library_call_writes_nothing(
    project: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, server = project
    plan = plan_run(root / "oloproof.yaml")
    nothing = dry_run(None, plan)
    assert (nothing.would_execute, nothing.cached, nothing.has_ledger) == (3, 0, False)
    (calls,) = nothing.judges
    assert (calls.criterion, calls.at_most, calls.calls) == ("groundedness", 3, 0)
    assert [r.reason for r in nothing.judge_rules] == ["judge_not_calibrated"]
    with open_project_ledger(root) as ledger:
        execute(ledger, plan_run(root / "oloproof.yaml"))
        size = len(ledger)
        planned = dry_run(ledger, plan_run(root / "oloproof.yaml"))
        assert len(ledger) == size
    assert (planned.would_execute, planned.cached) == (0, 3)
    assert (planned.judges[0].calls, planned.judges[0].reused) == (0, 3)
    assert len(server.requests) == 3


def test_judge_minimums_on_a_metric_no_judge_gives_are_refused(
    project: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, _ = project
    policy = {
        "version": 1,
        "rules": [
            {"id": "echo", "metric": "echoed", "min": 0.1, "judge": {"min_sensitivity": 0.8}}
        ],
    }
    (root / "policy.yaml").write_text(yaml.safe_dump(policy))
    with pytest.raises(ConfigError, match="'echoed' is not an LLM judge's"):
        plan_run(root / "oloproof.yaml")


def test_calibration_type_is_what_the_report_uses() -> None:
    calibration = Calibration("id", {}, 0.95, 9, 1, 0, 10)
    row = corrected_row(tally(8, 2), calibration, ADDRESS, 0.95)
    assert row.estimate == pytest.approx(0.8 / 0.9)
    assert row.method == "rogan-gladen-clopper-pearson-mc"
