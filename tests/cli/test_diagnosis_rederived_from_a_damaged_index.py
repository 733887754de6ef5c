"""A diagnosis is re-derived (``diagnose --verify``, ``verify``) from its parent run's list of
cases and from each child run's cases found by their ids (the ``run_case`` index). When one
flipped byte hides a case from either index, ``diagnose --verify`` refuses (exit 2), naming the
run and ``oloproof ledger rebuild-indexes``, and ``verify`` says the diagnosis cannot be
re-derived, for that reason; both said the stored diagnosis did not match what the ledger
re-derives (``case money_back: label stored 'RETRIEVAL_MISS', re-derived 'UNRESOLVED'``), as
if the diagnosis were wrong. After a rebuild it verifies again."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.ledger.tamper import hide_index_entry
from tests.support import GOLD_DIAGNOSIS, assert_diagnosis_verified, copy_example, oloproof

from oloproof import events as ev
from oloproof.metrics import case_result_of, stream_case_results
from oloproof.store import open_project_ledger

RUN_ID = re.compile(r"run_[0-9A-HJKMNP-TV-Z]{26}")


def _cases(root: Path, run_id: str) -> list[str]:
    with open_project_ledger(root, create=False) as ledger:
        return [body["case_id"] for body in stream_case_results(ledger, run_id)]


def _hidden(root: Path, run_id: str, case_id: str) -> bool:
    with open_project_ledger(root, create=False) as ledger:
        return case_result_of(ledger, run_id, case_id) is None


@pytest.mark.parametrize("damaged", ["child", "parent"])
def test_a_diagnosis_is_not_rederived_through_a_damaged_index(tmp_path: Path, damaged: str) -> None:
    root = copy_example("support_rag", tmp_path)
    run = oloproof("run", cwd=root)
    assert run.code == 3, run.err
    run_id = RUN_ID.findall(run.out)[0]
    diagnosed = oloproof("diagnose", run_id, *GOLD_DIAGNOSIS, cwd=root)
    assert diagnosed.code == 0, diagnosed.err
    address = re.findall(r"sha256:[0-9a-f]{64}", diagnosed.out.split("Diagnosis ", 1)[1])[0]
    child = RUN_ID.findall(next(x for x in diagnosed.lines if x.startswith("Child runs:")))[0]
    assert_diagnosis_verified(root, address)
    if damaged == "child":
        cases = _cases(root, child)
        hide_index_entry(
            root / ".oloproof", ev.RUN_CASE, f"{child}/{cases[0]}",
            lambda: _hidden(root, child, cases[0]),
        )  # fmt: skip
        problem = (
            f"the ledger's indexes disagree with run {child}: its index by case id misses 1 "
            f"of its {len(cases)} cases"
        )
    else:
        held = len(_cases(root, run_id))
        hide_index_entry(
            root / ".oloproof", "run_cases", run_id,
            lambda: len(_cases(root, run_id)) == held - 1,
        )  # fmt: skip
        problem = (
            f"the ledger's indexes disagree with run {run_id}: its end record counts {held} "
            f"cases (0 errored), its index finds {held - 1} (0 errored)"
        )
    refusal = (
        f"{problem}; rebuild them with: oloproof ledger rebuild-indexes (if they still "
        "disagree, the ledger lacks some of the run's events: oloproof verify lists them)"
    )

    refused = oloproof("diagnose", "--verify", address, cwd=root)
    assert (refused.code, refused.out, refused.err) == (2, "", f"error: {refusal}\n")
    checked = oloproof("verify", cwd=root)
    assert checked.code == 1
    stale = [line for line in checked.lines if line.startswith(f"StaleSummary {address}")]
    assert stale == [
        f"StaleSummary {address}: diagnosis: cannot re-derive it: LedgerAccessError: {refusal}"
    ], checked.out

    assert oloproof("ledger", "rebuild-indexes", cwd=root).code == 0
    assert_diagnosis_verified(root, address)
