"""The public functions of ``oloproof`` from Python, each given a ref (``latest``), a run id
and an address prefix where it takes a run; and ``evaluate`` with its report as data."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import oloproof

# The decorators (system, rag_system, current_case) are exercised by the example projects these
# tests run: support_rag's class is a @rag_system; blackbox_rag's adapter a @system that
# records through current_case().
FUNCTIONS = {
    "compare_runs",
    "current_case",
    "diagnose",
    "evaluate",
    "execute_run",
    "load_config",
    "load_dataset",
    "open_project_ledger",
    "plan_run",
    "rag_system",
    "read_run_report",
    "system",
}


@pytest.fixture
def in_support(support: Path) -> Iterator[Path]:
    before = Path.cwd()
    os.chdir(support)
    try:
        yield support
    finally:
        os.chdir(before)


def test_the_functions_tested_here_are_every_public_function() -> None:
    public = {n for n in oloproof.__all__ if callable(getattr(oloproof, n)) and n[0].islower()}
    assert public == FUNCTIONS


def test_evaluate_runs_the_project_and_returns_its_report(in_support: Path) -> None:
    report = oloproof.evaluate("oloproof.yaml")
    assert isinstance(report, oloproof.RunReport)
    assert (report.gate_label, report.exit_code, report.cases) == ("BLOCK", 3, 13)
    frame = report.to_dataframe()
    assert isinstance(frame, pd.DataFrame)
    row = frame.set_index("criterion").loc["answer_correct"]
    assert (row.successes, row.observed) == (9, 13)
    assert list(report.to_dataframe("rules").outcome) == [r.outcome for r in report.rules]
    assert len(report.to_dataframe("slices")) == len(report.slices)
    assert report.to_json()["run_id"] == report.run_id
    with pytest.raises(ValueError, match="unknown table 'cases'"):
        report.to_dataframe("cases")


def test_evaluate_takes_a_subset_and_repeats(in_support: Path) -> None:
    report = oloproof.evaluate(
        "oloproof.yaml", sample=3, seed=3, filters=["metadata.topic=billing"], repeats=2
    )
    assert report.repeats == 2 and report.subset is not None
    assert report.subset["seed"] == 3 and report.planned_cases == 3


def test_evaluate_refuses_a_sample_larger_than_its_cases(in_support: Path) -> None:
    # The example has 4 billing cases: a sample of 5 of them would be all 4, and no sample.
    with pytest.raises(oloproof.ConfigError) as refused:
        oloproof.evaluate("oloproof.yaml", sample=5, filters=["metadata.topic=billing"])
    assert str(refused.value) == (
        "evaluate(): sample=5 asks for more cases than the 4 selected by "
        "filters=['metadata.topic=billing']; drop sample to run them all"
    )
    assert not (in_support / ".oloproof").exists()


def test_evaluate_refuses_bad_input_with_an_oloproof_error(in_support: Path) -> None:
    with pytest.raises(oloproof.ConfigError, match="no such file"):
        oloproof.evaluate("missing.yaml")


def test_run_functions_take_refs_ids_and_prefixes(in_support: Path) -> None:
    config = oloproof.load_config(Path("oloproof.yaml"))
    assert config.system.name == "support-rag"
    assert len(oloproof.load_dataset(Path("cases.jsonl")).cases) == 13
    plan = oloproof.plan_run(Path("oloproof.yaml"))
    ledger = oloproof.open_project_ledger(in_support)
    try:
        first = asyncio.run(oloproof.execute_run(ledger, plan))
        second = asyncio.run(oloproof.execute_run(ledger, oloproof.plan_run(Path("oloproof.yaml"))))
        prefix = first.run_address[: len("sha256:") + 12]
        for name in ("latest", second.run_id, second.run_address):
            report = oloproof.read_run_report(ledger, name)
            assert (report.run_id, report.execution_state) == (second.run_id, "COMPLETE")
        assert oloproof.read_run_report(ledger, prefix).run_id == first.run_id
        assert oloproof.read_run_report(ledger, prefix[len("sha256:") :]).run_id == first.run_id
        comparison = oloproof.compare_runs(ledger, "latest", prefix)
        assert comparison.body["candidate"]["run_id"] == second.run_id
        assert comparison.body["baseline"]["run_id"] == first.run_id
        diagnosis = oloproof.diagnose(
            ledger, "latest", intervention="gold-context", criterion="answer_correct"
        )
        again = oloproof.diagnose(
            ledger, second.run_id, intervention="gold-context", criterion="answer_correct"
        )
        assert diagnosis.body["run"] == again.body["run"] == second.run_address
        with pytest.raises(oloproof.UnknownIdError, match="oloproof runs"):
            oloproof.read_run_report(ledger, "run_NOSUCHRUN")
    finally:
        ledger.close()
