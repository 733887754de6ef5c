"""``verify`` derives each case result's slice labels again, from the execution it links and
the case's expected values, through the real CLI.

A case result stores its ``relevant_position`` and ``context_truncated`` labels, and the slice
reports read them as stored. ``verify`` checked the verdict copies beside them but not the
labels: a run whose case results claimed another position (copied from a real run, one label
changed, as a second tool could write it) verified clean while ``inspect`` sliced by the claim.

The staged project is ``test_diagnose_relevance_unit``'s: under ``relevance_unit: chunk`` its
two failing cases sit at ``below_top_k`` and ``not_retrieved``, where reading relevance by
document puts both at ``1``. A release before the slice read the run's unit labelled them so,
at the same schemas; a run recorded before the run event said which reading its labels follow
(``oloproof.run`` schema 1) verifies with either reading, and a run recorded since with its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from tests.cli.test_diagnose_relevance_unit import as_json, project
from tests.support import oloproof

from ledger import Event, new_ulid
from oloproof import events as ev
from oloproof.metrics import case_results
from oloproof.store import open_project_ledger
from oloproof.stored_runs import load_run

BY_CHUNK = {"chunk_ranked_out": "below_top_k", "chunk_not_retrieved": "not_retrieved", "ok": "1"}
BY_DOCUMENT = {"chunk_ranked_out": "1", "chunk_not_retrieved": "1", "ok": "1"}


@pytest.fixture
def honest(tmp_path: Path) -> tuple[Path, str]:
    """The project, run: (its folder, the run's id)."""
    root = project(tmp_path / "p")
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    return root, done.lines[0].split()[1]


def copied_run(
    root: Path,
    run_id: str,
    labels: Mapping[str, Mapping[str, str]],
    *,
    run_schema: int = ev.SCHEMAS[ev.RUN],
) -> tuple[str, dict[str, str]]:
    """A copy of ``run_id`` under a new id, its case results holding ``labels`` by case id, as
    another writer could store it: (the new run id, each case's result address). At run
    schema 1 the run event says nothing of how its labels were made."""
    new_id = f"run_{new_ulid()}"
    with open_project_ledger(root) as ledger:
        run = load_run(ledger, run_id)
        body: dict[str, Any] = {**ev.plain(run.body), "run_id": new_id}
        if run_schema == 1:
            body.pop("positions_in_unit", None)
        run_address = ledger.put(Event(ev.RUN, run_schema, body))
        ledger.set_ref(new_id, run_address, expected=None)
        results = {}
        for address, result in case_results(ledger, run_id):
            event = ledger.get(address)
            copied = {
                **ev.plain(result),
                "run_id": new_id,
                "labels": dict(labels[result["case_id"]]),
            }
            refs = [run_address if ref == run.address else ref for ref in event.refs]
            # Schema 1, the form with the case's values and addresses in the body.
            results[result["case_id"]] = ledger.put(Event(ev.CASE_RESULT, 1, copied, refs))
    return new_id, results


def positions(root: Path, run_id: str) -> dict[str, int]:
    """``{relevant_position value: cases}`` of the run's hit_rate_at_2 slice rows."""
    report = as_json(root, "inspect", run_id)
    return {
        s["value"]: s["metric"]["observed"]
        for s in report["slices"]
        if s["metric"]["criterion"] == "hit_rate_at_2"
    }


def stale_lines(root: Path) -> list[str]:
    done = oloproof("verify", cwd=root)
    stale = [line for line in done.lines if line.startswith("StaleSummary")]
    assert done.code == (1 if stale else 0), done.out + done.err
    return stale


def labelled(positions_by_case: Mapping[str, str], truncated: str = "false") -> dict[str, Any]:
    return {
        case_id: {"context_truncated": truncated, "relevant_position": position}
        for case_id, position in positions_by_case.items()
    }


def test_the_honest_run_verifies(honest: tuple[Path, str]) -> None:
    root, run_id = honest
    assert positions(root, run_id) == {"1": 1, "below_top_k": 1, "not_retrieved": 1}
    assert stale_lines(root) == []


def test_a_label_its_execution_does_not_bear_out_is_named(honest: tuple[Path, str]) -> None:
    root, run_id = honest
    claims = labelled(BY_DOCUMENT)  # the failing cases claimed to have the chunk in the cut
    claims["ok"] = {"context_truncated": "true", "relevant_position": "1"}
    forged_id, results = copied_run(root, run_id, claims)
    assert positions(root, forged_id) == {"1": 3}  # the slice report reads the claim
    stale = stale_lines(root)
    assert sorted(stale) == sorted(
        [
            f"StaleSummary {results['chunk_ranked_out']}: case_result: labels: stored "
            "relevant_position '1', its execution and expected values give 'below_top_k'",
            f"StaleSummary {results['chunk_not_retrieved']}: case_result: labels: stored "
            "relevant_position '1', its execution and expected values give 'not_retrieved'",
            f"StaleSummary {results['ok']}: case_result: labels: stored context_truncated "
            "'true', its execution and expected values give 'false'",
        ]
    )


def test_a_run_recorded_before_its_labels_said_their_reading_verifies_by_either(
    honest: tuple[Path, str],
) -> None:
    root, run_id = honest
    # Labelled by document, as a release before the slice read the run's unit did.
    by_document, _ = copied_run(root, run_id, labelled(BY_DOCUMENT), run_schema=1)
    # Labelled by chunk, as a release since did, at the same run schema.
    by_chunk, _ = copied_run(root, run_id, labelled(BY_CHUNK), run_schema=1)
    assert positions(root, by_document) == {"1": 3}
    assert positions(root, by_chunk) == {"1": 1, "below_top_k": 1, "not_retrieved": 1}
    # Neither reading gives a position of 2.
    _, results = copied_run(root, run_id, labelled({**BY_CHUNK, "ok": "2"}), run_schema=1)
    assert stale_lines(root) == [
        f"StaleSummary {results['ok']}: case_result: labels: stored relevant_position '2', its "
        "execution and expected values give '1'"
    ]
    # Where the readings differ, the refusal names both.
    claims = labelled({**BY_CHUNK, "chunk_ranked_out": "2"})
    _, results = copied_run(root, run_id, claims, run_schema=1)
    named = (
        f"StaleSummary {results['chunk_ranked_out']}: case_result: labels: stored "
        "relevant_position '2', its execution and expected values give 'below_top_k' ('1' read "
        "by document, as a release before the run said which reading did)"
    )
    assert named in stale_lines(root)
