"""A case's verdicts are shown from its judgments, never from the copy alone.

A case result carries a copy of each verdict, for tallies. ``inspect --case``, ``inspect
--failures`` and ``export`` show a case in full, so they read the judgments behind it: when a
judgment's bytes no longer hash to its address, they refuse with one sentence naming it (exit
2), as they refuse a corrupt execution, instead of printing the copy's "passed".
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.ledger.tamper import flip_byte_of
from tests.support import copy_example, oloproof

from ledger import Event, FormatError
from oloproof.inspect import case_detail
from oloproof.metrics import case_result_body, case_results
from oloproof.store import open_project_ledger


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = copy_example("blackbox_rag", tmp_path_factory.mktemp("judged"))
    done = oloproof("run", cwd=root)
    assert done.code in (1, 3), done.err
    run_id = json.loads(oloproof("runs", "--json", cwd=root).out)[0]["run_id"]
    return root, run_id


def damaged(sound: tuple[Path, str], tmp_path: Path, case_id: str, criterion: str) -> Path:
    """A copy of the project whose judgment of ``criterion`` for ``case_id`` is corrupt."""
    root = tmp_path / "project"
    shutil.copytree(sound[0], root, ignore=shutil.ignore_patterns("lock.mdb"))
    with open_project_ledger(root, create=False) as ledger:
        (body,) = [b for _, b in case_results(ledger, sound[1]) if b["case_id"] == case_id]
        stored = ledger.get_bytes(body["judgments"][criterion])
    flip_byte_of(root / ".oloproof", stored)
    return root


def refused(done_code: int, err: str, what: str) -> None:
    assert done_code == 2, (done_code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "corrupt" in lines[0] and what in lines[0], lines[0]


def first_case(root: Path, run_id: str, verdict: str) -> tuple[str, str, str]:
    """The id of the first case with a ``verdict`` judgment, that criterion and its address."""
    with open_project_ledger(root, create=False) as ledger:
        for _, body in case_results(ledger, run_id):
            for criterion, copy in body["verdicts"].items():
                if copy["s"] == verdict:
                    return body["case_id"], criterion, body["judgments"][criterion]
    raise AssertionError(f"the example run has no {verdict} judgment")


def test_a_passing_case_whose_judgment_is_corrupt_is_not_shown_as_passed(
    sound: tuple[Path, str], tmp_path: Path
) -> None:
    case_id, criterion, judgment = first_case(*sound, "pass")
    before = oloproof("inspect", sound[1], "--case", case_id, cwd=sound[0])
    assert before.code == 0 and f"{criterion}: passed" in before.out, before.out
    root = damaged(sound, tmp_path, case_id, criterion)

    done = oloproof("inspect", sound[1], "--case", case_id, cwd=root)
    refused(done.code, done.err, judgment)
    assert "passed" not in done.out
    done = oloproof("export", sound[1], cwd=root)
    refused(done.code, done.err, judgment)
    assert oloproof("verify", cwd=root).code == 1


def test_a_failing_case_whose_judgment_is_corrupt_stops_the_failures_list(
    sound: tuple[Path, str], tmp_path: Path
) -> None:
    listed = oloproof("inspect", sound[1], "--failures", cwd=sound[0])
    assert listed.code == 0, listed.err
    case_id, criterion, judgment = first_case(*sound, "fail")
    assert case_id in listed.out
    root = damaged(sound, tmp_path, case_id, criterion)
    done = oloproof("inspect", sound[1], "--failures", cwd=root)
    refused(done.code, done.err, judgment)


def test_a_verdict_copy_its_judgment_does_not_bear_out_is_refused(
    sound: tuple[Path, str], tmp_path: Path
) -> None:
    # A second writer's case result whose copy says fail where its judgment says pass: shown
    # in full, it is refused rather than printed from the copy.
    case_id, criterion, judgment = first_case(*sound, "pass")
    root = tmp_path / "project"
    shutil.copytree(sound[0], root, ignore=shutil.ignore_patterns("lock.mdb"))
    with open_project_ledger(root) as ledger:
        results = case_results(ledger, sound[1])
        address, body = next((a, b) for a, b in results if b["case_id"] == case_id)
        event = ledger.get(address)
        forged_body = json.loads(json.dumps(event.body))
        forged_body["verdicts"][criterion] = {"s": "fail"}
        forged = ledger.put(Event(event.type, event.schema, forged_body, event.refs))
        with pytest.raises(FormatError) as refusal:
            case_detail(ledger, forged, case_result_body(ledger.get(forged)))
        assert str(refusal.value) == (
            f"case {case_id}: its {criterion} verdict is not what judgment {judgment} says; "
            "`oloproof verify` lists what else is damaged"
        )
        assert case_detail(ledger, address, body).verdicts[criterion] == {"s": "pass"}
