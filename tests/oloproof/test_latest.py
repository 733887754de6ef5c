"""``latest`` moves by compare-and-swap: a run finishing beside a newer one never takes it back.

Real ledgers in a temp dir. The other process is played by a step put between the look at
``latest`` and the move, where a second ``oloproof run`` finishing at that moment would act.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ledger import Ledger
from oloproof import events as ev
from oloproof import latest
from oloproof.run_list import newest_first
from oloproof.store import open_project_ledger


def finished_run(ledger: Ledger, run_id: str, created_at: str) -> tuple[str, dict[str, Any]]:
    body = {"run_id": run_id, "created_at": created_at, "planned_cases": 1}
    address = ledger.put(ev.make(ev.RUN, body))
    ledger.put(ev.make(ev.RUN_END, {"run_id": run_id, "state": "complete"}, [address]))
    return address, body


def test_a_run_finishing_beside_a_newer_one_leaves_latest_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = open_project_ledger(tmp_path)
    try:
        older, older_body = finished_run(ledger, "run_01A", "2026-12-04T10:00:00+00:00")
        newer, _ = finished_run(ledger, "run_01B", "2026-12-04T10:00:05+00:00")
        ledger.set_ref(latest.LATEST, older)
        looked = latest.latest_run
        raced: list[str] = []

        def racing(store: Ledger) -> str | None:
            found = looked(store)
            if not raced:  # the newer run finishes now, and moves latest to itself
                raced.append(newer)
                store.set_ref(latest.LATEST, newer)
            return found

        monkeypatch.setattr(latest, "latest_run", racing)
        latest.move_latest(ledger, older, older_body)
        assert raced and ledger.get_ref(latest.LATEST) == newer
    finally:
        ledger.close()


def test_within_one_second_the_run_started_later_is_newer(tmp_path: Path) -> None:
    ledger = open_project_ledger(tmp_path)
    try:
        # Run ids begin with their creation time: 01B was made after 01A, in the same second.
        first, first_body = finished_run(ledger, "run_01A", "2026-12-04T10:00:00+00:00")
        second, second_body = finished_run(ledger, "run_01B", "2026-12-04T10:00:00+00:00")
        latest.move_latest(ledger, second, second_body)
        latest.move_latest(ledger, first, first_body)  # resumed to its end afterwards
        assert ledger.get_ref(latest.LATEST) == second
        latest.move_latest(ledger, second, second_body)
        assert ledger.get_ref(latest.LATEST) == second
    finally:
        ledger.close()


def test_runs_lists_within_one_second_by_run_id_not_by_arrival() -> None:
    # An older run imported after a newer local one that started in the same second was
    # listed first: ties went to the order the ledger recorded them in.
    recorded = [
        ("2026-12-04T10:00:00+00:00", "run_01B"),  # the local run, made second
        ("2026-12-04T10:00:00+00:00", "run_01A"),  # imported afterwards, made first
        ("2026-12-04T09:59:59+00:00", "run_01Z"),  # a second earlier, whatever its id
    ]
    assert newest_first(recorded, lambda run: run) == [recorded[0], recorded[1], recorded[2]]
    assert newest_first(recorded[::-1], lambda run: run) == [recorded[0], recorded[1], recorded[2]]
