"""Commands that read a run another process is still writing say so, through the CLI.

The probe: a run interrupted (Ctrl-C) after 2 of its 6 cases, then resumed, the resume held on
its fifth case. While it was held, ``compare`` of it against a finished run printed (and
recorded) its comparison with nothing saying the candidate was still being written,
``ledger export`` of it warned of nothing, and ``inspect --json`` still carried the earlier
go's ``stop_reason`` (``interrupted before every case finished``) beside ``RUNNING``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.support import (
    HELD_TOY_APP,
    HELD_TOY_CONFIG,
    interrupted_while_held,
    oloproof,
    start_run,
    write_project,
)

POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"
COMPARE_POLICY = (
    "version: 1\nrules:\n  - {id: keeps, metric: echo, non_inferiority: {margin: 50}}\n"
)


def test_reads_of_a_run_being_resumed_say_it_is_running(tmp_path: Path) -> None:
    cases = (
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(6)
    )
    root = write_project(
        tmp_path / "p", app=HELD_TOY_APP, config=HELD_TOY_CONFIG, policy=POLICY, cases=cases
    )
    (root / "compare.yaml").write_text(COMPARE_POLICY)
    baseline = oloproof("run", "--json", cwd=root)
    assert baseline.code == 0, baseline.out + baseline.err
    base_id = json.loads(baseline.out)["run_id"]
    run_id = interrupted_while_held(root, "holding\n", {"HOLD": "q2"}, ("--no-cache",))

    resumed = start_run(root, "holding\n", {"HOLD": "q4"}, ("--resume", run_id, "--no-cache"))
    try:
        for _ in range(600):  # the 2 cases before the held one are written within seconds
            shown = oloproof("inspect", run_id, "--json", cwd=root)
            assert shown.code == 0, shown.out + shown.err
            report = json.loads(shown.out)
            if report["cases"] == 4:
                break
            time.sleep(0.2)
        running = (
            f"{run_id} is still running (4 of 6 cases so far; another process "
            f"(pid {resumed.pid}) is writing it)"
        )
        # Was: "stop_reason": "interrupted before every case finished", the earlier go's.
        assert report["execution_state"] == "RUNNING"
        assert report["stop_reason"] is None

        compared = oloproof("compare", run_id, base_id, "--policy", "compare.yaml", cwd=root)
        # Was: no note. The 2 cases not yet written count against the candidate: it blocks.
        assert compared.err == (
            f"note: {running}; this comparison reads the cases written so far\n"
        ), compared.err
        assert compared.code == 3, compared.out + compared.err
        assert compared.lines[1] == "not paired 2: only in baseline (c4, c5)"
        as_json = oloproof("compare", run_id, base_id, "--json", cwd=root)
        assert as_json.code == 0, as_json.out + as_json.err
        assert json.loads(as_json.out)["still_running"] == [
            {"run_id": run_id, "cases": 4, "planned_cases": 6}
        ]

        exported = oloproof("ledger", "export", run_id, "--to", "run.oloarchive", cwd=root)
        assert exported.code == 0, exported.out + exported.err
        # Was: no warning.
        assert exported.err == (
            f"warning: {running}; the archive holds the cases written so far\n"
        ), exported.err
        (root / "release").touch()
        out, err = resumed.communicate(timeout=120)
    finally:
        resumed.kill()
    assert resumed.returncode == 0, out + err
    # Once it has ended, nothing more is said.
    exported = oloproof("ledger", "export", run_id, "--to", "run.oloarchive", cwd=root)
    assert exported.code == 0 and exported.err == "", exported.err
    compared = oloproof("compare", run_id, base_id, "--json", cwd=root)
    assert compared.code == 0 and compared.err == "", compared.err
    assert "still_running" not in json.loads(compared.out)
