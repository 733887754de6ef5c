"""The viewer's report of a run follows its writer: RUNNING while a process writes it, and what
the ledger holds once that process is gone, though a writer killed outright records nothing."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.cli.test_run_errors import project
from tests.support import interrupt_run, start_run

from oloproof.view import data


def test_a_resume_killed_outright_is_no_longer_shown_running(tmp_path: Path) -> None:
    root = project(tmp_path, ["fast", *[f"slow{i}" for i in range(30)]])
    code, out, err = interrupt_run(root, "sleeping\n", signal.SIGINT, {"TOY_SLEEP": "0.2"})
    assert code == 130, out + err
    run_id = err.split("--resume ")[1].split()[0]
    reader = data.Reader(root)
    try:
        assert data.run_page(reader, run_id).report.execution_state == "INTERRUPTED"
        proc = start_run(root, "sleeping\n", {"TOY_SLEEP": "60"}, args=("--resume", run_id))
        try:
            assert data.run_page(reader, run_id).report.execution_state == "RUNNING"
        finally:
            proc.kill()  # SIGKILL: no end record, no event at all
            proc.communicate(timeout=60)
        # The same reader, its report cached: the ledger holds what it held while RUNNING.
        assert data.run_page(reader, run_id).report.execution_state == "INTERRUPTED"
    finally:
        reader.close()
