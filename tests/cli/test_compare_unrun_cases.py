"""Planned cases neither run executed count against a comparison, through the real CLI.

The probe: two runs of 300 planned cases, each interrupted after its first 150. ``compare``
paired the 150 both reached, reported ``0 missing`` and PASSed a 5-point non-inferiority rule
(exit 0), saying nothing of the 150 cases neither run executed, while each run's own gate
counted them as missing (exit 3). Here: 100 cases, each run interrupted after 50, and a margin
of 15 points that the 50 paired cases alone would clear. ``compare latest`` never meets such a run (``latest`` names
only a run that finished); named by its id, it now counts each planned case neither run holds a
result for as a missing pair with neither side known (``missing 50: not_run``), as every other
missing pair counts, and a run still running is compared the same way.

The bounds are checked against the betting interval of statistics.md, written out below and
solved with scipy's brentq, on the completions worked out here by hand.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from tests.betting_reference import paired
from tests.support import (
    HOLDING_APP,
    SERIAL_TOY_CONFIG,
    interrupted_while_held,
    oloproof,
    run_in_progress,
    write_project,
)

PLANNED, REACHED = 100, 50

APP = (
    HOLDING_APP
    + """

@system(name="toy", version=os.environ.get("TOY_VERSION", "1"))
def run(case):
    if case["q"] == "q50":  # the run is interrupted here, or still running
        hold("sleeping")
    return {"answer": case["q"]}
"""
)
POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"
COMPARE = (
    "version: 1\nrules:\n  - id: not-worse\n    metric: echo\n    non_inferiority: {margin: 15}\n"
)


def _interrupted(root: Path, version: str) -> str:
    """A run of ``root`` interrupted (Ctrl-C) at its 51st case, which then raises: its id."""
    return interrupted_while_held(root, "sleeping\n", {"TOY_VERSION": version})


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    cases = (
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}}
        for i in range(PLANNED)
    )
    root = tmp_path_factory.mktemp("unrun") / "p"
    write_project(root, app=APP, config=SERIAL_TOY_CONFIG, policy=POLICY, cases=cases)
    (root / "compare.yaml").write_text(COMPARE)
    # Two system versions, so the candidate executes every case again.
    return root, _interrupted(root, "2"), _interrupted(root, "1")


def test_cases_neither_interrupted_run_executed_are_missing_pairs(
    project: tuple[Path, str, str],
) -> None:
    root, cand_id, base_id = project
    done = oloproof("compare", cand_id, base_id, "--policy", "compare.yaml", cwd=root)
    # Was: "50 paired · 1 missing" (c50, which the interrupt errored in both), PASS
    # interval_above_margin, exit 0.
    assert done.code == 3, done.out + done.err
    unrun = PLANNED - REACHED - 1
    # Both runs answered their 50 alike (d = 0); each missing pair is at its worst a candidate
    # fail against a baseline pass (d = -1), at its best the other way round (d = +1).
    lower, _ = paired([0.0] * REACHED + [-1.0] * (unrun + 1))
    _, upper = paired([0.0] * REACHED + [1.0] * (unrun + 1))
    shown = f"[{math.floor(lower * 1000) / 10:+.1f}, {math.ceil(upper * 1000) / 10:+.1f}]"
    assert done.lines[1:6] == [
        "not paired 1: errored in both (c50)",
        f"not paired {unrun}: not run (planned but never executed; the ledger holds no id)",
        f"echo: +0.0 points {shown} · {REACHED} paired · {unrun + 1} missing · 0 excluded",
        f"  the interval counts the {unrun + 1} missing against the candidate (lower bound) and "
        f"for it (upper bound); the {REACHED} paired alone give [-10.4, +10.4]",
        "  missing 1: errored_in_both",
    ]
    assert done.lines[6] == f"  missing {unrun}: not_run"
    assert (
        f"    {unrun + 1} missing pairs decide it: on the {REACHED} paired alone it would be PASS "
        "(interval_above_margin)"
    ) in done.lines
    body = json.loads(oloproof("inspect", done.lines[0].split()[1], "--json", cwd=root).out)
    assert body["not_run"] == unrun
    assert (body["candidate"]["results"], body["baseline"]["results"]) == (REACHED + 1,) * 2
    (row,) = body["metrics"]
    assert row["missing_reasons"] == {"errored_in_both": 1, "not_run": unrun}
    diff = row["difference"]
    assert diff["lower"] == pytest.approx(lower, abs=1e-7)
    assert diff["upper"] == pytest.approx(upper, abs=1e-7)
    alone = paired([0.0] * REACHED)
    assert (diff["observed_lower"], diff["observed_upper"]) == pytest.approx(alone, abs=1e-7)
    (decision,) = body["decisions"]
    assert alone[0] > -0.15 > lower  # the paired alone would PASS; the missing decide it
    assert (decision["outcome"], decision["reason"]) == (
        "INSUFFICIENT_EVIDENCE",
        "missing_cases_decide",
    )
    assert decision["detail"]["missing"] == unrun + 1
    assert oloproof("verify", cwd=root).code == 0


def test_a_run_still_running_counts_what_it_has_not_reached(
    project: tuple[Path, str, str],
) -> None:
    root, _, base_id = project
    with run_in_progress(root, "sleeping\n", env={"TOY_VERSION": "3"}):
        cand_id = oloproof("runs", cwd=root).lines[0].split()[0]  # the newest
        done = oloproof("compare", "--json", cand_id, base_id, cwd=root)
        (root / "release").touch()  # let it go on (and be stopped)
    (root / "release").unlink()
    assert done.code == 0, done.out + done.err  # no policy: nothing decided
    body = json.loads(done.out)
    assert body["candidate"]["run_id"] == cand_id != base_id
    # The running candidate had written `read` of the 50 cases it answered (it writes them
    # in batches); the baseline's other cases are only in the baseline, and the 49 after c50
    # (in flight) neither run reached.
    read = body["candidate"]["results"]
    assert 0 <= read <= REACHED
    assert body["paired_cases"] == read
    assert body["not_run"] == PLANNED - REACHED - 1
    (row,) = body["metrics"]
    assert row["missing_reasons"] == {
        "not_run": PLANNED - REACHED - 1,
        "only_in_baseline": REACHED + 1 - read,
    }


def test_finished_runs_keep_their_comparison(tmp_path: Path) -> None:
    # Nothing unrun: no not_run in the body, and the line reads as it always did.
    cases = (
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(4)
    )
    root = write_project(
        tmp_path / "p", app=APP, config=SERIAL_TOY_CONFIG, policy=POLICY, cases=cases
    )
    first = oloproof("run", cwd=root)
    second = oloproof("run", "--no-cache", cwd=root)
    ids = [r.lines[0].split()[1] for r in (second, first)]
    done = oloproof("compare", *ids, "--json", cwd=root)
    assert done.code == 0, done.err
    body = json.loads(done.out)
    assert "not_run" not in body and body["metrics"][0]["missing"] == 0


# An earlier release, which counted no planned case that never ran: its rule put back in
# place of today's, then the command run as the console script runs it.
EARLIER_RELEASE = """
import sys

import oloproof.compare as compare

compare._not_run = lambda *args: 0
from oloproof.cli.main import command

sys.argv = ["oloproof", *sys.argv[1:]]
command()
"""


def test_verify_reads_an_earlier_releases_comparison_as_it_was_made(
    project: tuple[Path, str, str],
) -> None:
    import subprocess
    import sys

    root, cand_id, base_id = project
    earlier = subprocess.run(
        [sys.executable, "-c", EARLIER_RELEASE, "compare", cand_id, base_id, "--json"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert earlier.returncode == 0, earlier.stdout + earlier.stderr  # the probe's PASS
    assert "not_run" not in json.loads(earlier.stdout)
    checked = oloproof("verify", cwd=root)
    assert checked.code == 0, checked.out + checked.err  # not damage: another release's rule
