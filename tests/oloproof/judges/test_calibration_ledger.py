"""Calibrations recorded in a real ledger, found again by identity, and checked by the policy."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from judge_helpers import KEY_ENV, SECRET

from ledger import Ledger
from oloproof import events as ev
from oloproof.calibration import judge_check, latest_calibration, run_calibration
from oloproof.config import Rule
from oloproof.errors import ConfigError, UnknownIdError
from oloproof.evaluators.judges import build_judge, judge_identity
from oloproof.store import open_project_ledger
from oloproof.testing import RecordedRequest, Reply, ScriptedJudgeServer, verdict

LABELS = [
    {
        "id": f"ok{i}",
        "input": {"question": f"q{i}"},
        "output": {"answer": "grounded"},
        "context": [{"doc_id": "d", "text": "t"}],
        "label": True,
    }
    for i in range(20)
] + [
    {
        "id": f"bad{i}",
        "input": {"question": f"q{i}"},
        "output": {"answer": "made up"},
        "context": [{"doc_id": "d", "text": "t"}],
        "label": False,
    }
    for i in range(20)
]


def responder(request: RecordedRequest) -> Reply:
    return verdict("<answer>\ngrounded" in request.user_message)


@pytest.fixture
def project(tmp_path: Path, secret: str) -> Iterator[tuple[Path, ScriptedJudgeServer]]:
    with ScriptedJudgeServer(default=responder) as server:
        config = {
            "system": {"name": "s", "version": "1", "callable": "app:answer"},
            "evaluators": [
                {"type": "contains", "criterion": "answer_correct"},
                {
                    "type": "groundedness_judge",
                    "provider": "openai",
                    "model": "judge-1",
                    "base_url": server.openai_base_url,
                    "api_key_env": KEY_ENV,
                    "max_retries": 0,
                },
            ],
        }
        (tmp_path / "oloproof.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        lines = "\n".join(json.dumps(line) for line in LABELS)
        (tmp_path / "labels.jsonl").write_text(lines + "\n", encoding="utf-8")
        yield tmp_path, server


def open_ledger_in(root: Path) -> Ledger:
    return open_project_ledger(root)


def test_run_calibration_records_an_event_indexed_by_identity(
    project: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, server = project
    with open_ledger_in(root) as ledger:
        address, calibration = run_calibration(
            root / "oloproof.yaml", "groundedness", root / "labels.jsonl", ledger
        )
        event = ledger.get(address)
        assert event.type == ev.CALIBRATION and event.schema == 1 and event.refs == ()
        assert event.body["identity"] == calibration.identity
        assert event.body["labels"]["sha256"].startswith("sha256:")
        assert (calibration.true_pass, calibration.true_fail) == (20, 20)
        assert latest_calibration(ledger, calibration.identity) == calibration
        assert latest_calibration(ledger, "another-identity") is None
    assert len(server.requests) == 40
    text = json.dumps(event.body)
    assert SECRET not in text and KEY_ENV not in text


def test_run_calibration_refuses_unknown_and_non_judge_ids(
    project: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, _ = project
    with open_ledger_in(root) as ledger:
        with pytest.raises(UnknownIdError, match="judges: groundedness"):
            run_calibration(root / "oloproof.yaml", "nope", root / "labels.jsonl", ledger)
        with pytest.raises(ConfigError, match="not an LLM judge"):
            run_calibration(root / "oloproof.yaml", "answer_correct", root / "labels.jsonl", ledger)
        assert len(ledger) == 0


def test_judge_check_gates_on_the_exact_identity(
    project: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, _ = project
    config_path = root / "oloproof.yaml"
    from oloproof.config import load_config

    entries = load_config(config_path).evaluators
    judge = build_judge(entries[1], base_dir=root)  # type: ignore[arg-type]
    rule = Rule.model_validate(
        {
            "id": "grounded",
            "metric": "groundedness",
            "min": 0.9,
            "judge": {"min_sensitivity": 0.8, "min_specificity": 0.8},
        }
    )
    strict = Rule.model_validate(
        {"id": "grounded", "metric": "groundedness", "min": 0.9, "judge": {"min_sensitivity": 0.9}}
    )
    other = Rule.model_validate({"id": "answers", "metric": "answer_correct", "min": 0.5})
    with open_ledger_in(root) as ledger:
        before = judge_check(ledger, [judge], 0.95)
        standing = before(rule)
        assert standing is not None
        assert (standing.outcome, standing.reason) == ("MANUAL_REVIEW", "judge_not_calibrated")
        assert standing.detail["calibration"] is None
        assert standing.detail["identity"] == judge_identity(judge.spec())
        assert before(other) is None
        address, _ = run_calibration(config_path, "groundedness", root / "labels.jsonl", ledger)
        after = judge_check(ledger, [judge], 0.95)
        cleared = after(rule)  # 20/20 each way: lower bounds ~0.83
        assert cleared is not None and cleared.outcome is None and cleared.reason is None
        assert cleared.detail["calibration"] == address
        assert cleared.detail["sensitivity"]["k"] == 20
        assert cleared.detail["sensitivity"]["lower"] == pytest.approx(0.8316, abs=1e-4)
        from_specs = judge_check(ledger, [{"type": "contains"}, judge.spec()], 0.95)
        assert from_specs(rule) == cleared
        short = after(strict)
        assert short is not None
        assert (short.outcome, short.reason) == ("MANUAL_REVIEW", "judge_below_requirement")
        assert short.detail["calibration"] == address
        # Another model is another judge: the calibration does not carry over.
        data = entries[1].model_dump() | {"model": "judge-2"}
        changed = build_judge(type(entries[1]).model_validate(data), base_dir=root)  # type: ignore[arg-type]
        assert judge_identity(changed.spec()) != judge_identity(judge.spec())
        moved = judge_check(ledger, [changed], 0.95)(rule)
        assert moved is not None
        assert (moved.outcome, moved.reason) == ("MANUAL_REVIEW", "judge_not_calibrated")


def test_the_cli_command_prints_and_records(project: tuple[Path, ScriptedJudgeServer]) -> None:
    from typer.testing import CliRunner

    from oloproof.cli import calibrate_cmd
    from oloproof.cli.main import app

    root, _ = project
    result = CliRunner().invoke(
        app,
        [
            "calibrate",
            "--evaluator",
            "groundedness",
            "--labels",
            str(root / "labels.jsonl"),
            "--config",
            str(root / "oloproof.yaml"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "sensitivity  100.0% [83.1%, 100.0%]  20 / 20" in result.output
    assert "Calibration event: sha256:" in result.output
    address = result.output.split("Calibration event: ")[1].split()[0]
    with open_ledger_in(root) as ledger:
        event = ledger.get(address)
        lines = calibrate_cmd.calibration_lines(address, event.body)
    assert "\n".join(lines) in result.output


def test_nothing_is_recorded_when_the_judge_judged_nothing(
    project: tuple[Path, ScriptedJudgeServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, server = project
    monkeypatch.delenv(KEY_ENV)
    with open_ledger_in(root) as ledger:
        with pytest.raises(ConfigError, match=f"judged none of the 40 examples.*{KEY_ENV}"):
            run_calibration(root / "oloproof.yaml", "groundedness", root / "labels.jsonl", ledger)
        assert len(ledger) == 0
    assert server.requests == []
