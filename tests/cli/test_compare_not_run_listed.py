"""Every missing pair a comparison counts is listed as not paired, unrun cases included.

The probe: two runs of 30 planned cases, each interrupted at its 16th case, with a case excluded
(no expected answer), a case errored in each run alone and one errored in both. Under the metric
the comparison said ``18 missing`` (``missing 15: not_run`` among them), but its ``not paired``
lines named only the 3 errored cases: 15 of the cases it counted were in no line, in the
terminal, in ``inspect`` or on the viewer's page. Now a ``not paired N: not run`` line counts
them, so the lines below the header add up to every metric's missing count.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import (
    HOLDING_APP,
    SERIAL_TOY_CONFIG,
    interrupted_while_held,
    oloproof,
    write_project,
)
from tests.view.support import fetch, serving

PLANNED, STOP = 30, 15

APP = (
    HOLDING_APP
    + """

@system(name="toy", version=os.environ["TOY_VERSION"])
def run(case):
    q, candidate = case["q"], os.environ["TOY_VERSION"] == "2"
    if q == "q15":  # the run is interrupted here
        hold("sleeping")
    if (q == "q5" and candidate) or (q == "q6" and not candidate) or q == "q7":
        raise RuntimeError("boom")
    if q == "q8" and candidate:
        return {"answer": "wrong"}
    return {"answer": q}
"""
)
POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"
COMPARE = (
    "version: 1\nrules:\n  - id: not-worse\n    metric: echo\n    non_inferiority: {margin: 15}\n"
)


def _interrupted(root: Path, version: str) -> str:
    """A run of ``root`` interrupted (Ctrl-C) at case c15: its id."""
    return interrupted_while_held(root, "sleeping\n", {"TOY_VERSION": version})


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    cases = [
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}}
        for i in range(PLANNED)
    ]
    cases[3]["expected"] = {}  # excluded: nothing to compare its answer with
    root = tmp_path_factory.mktemp("listed") / "p"
    write_project(root, app=APP, config=SERIAL_TOY_CONFIG, policy=POLICY, cases=cases)
    (root / "compare.yaml").write_text(COMPARE)
    return root, _interrupted(root, "2"), _interrupted(root, "1")


def test_the_not_paired_lines_add_up_to_the_missing_count(
    project: tuple[Path, str, str],
) -> None:
    root, cand_id, base_id = project
    done = oloproof("compare", cand_id, base_id, "--policy", "compare.yaml", "--cases", cwd=root)
    assert done.code == 3, done.out + done.err
    body = json.loads(oloproof("inspect", done.lines[0].split()[1], "--json", cwd=root).out)
    # Whether the interrupted case c15 was recorded (errored in both) is the runner's timing.
    reached = body["candidate"]["results"]
    assert reached in (STOP, STOP + 1) and body["baseline"]["results"] == reached
    in_both = "c7, c15" if reached > STOP else "c7"
    unrun = PLANNED - reached
    missing = 2 + len(in_both.split(", ")) + unrun
    (echo,) = [line for line in done.lines if line.startswith("echo: ")]
    interval = echo.split(" points ")[1].split(" · ")[0]  # as test_compare_unrun_cases checks it
    assert done.lines[1:11] == [
        "not paired 1: errored in candidate (c5)",
        "not paired 1: errored in baseline (c6)",
        f"not paired {missing - 2 - unrun}: errored in both ({in_both})",
        # Was absent: the 15 (or 14) cases below counted under echo, and listed nowhere.
        f"not paired {unrun}: not run (planned but never executed; the ledger holds no id)",
        f"echo: -9.1 points {interval} · 11 paired · {missing} missing · 1 excluded",
        f"  the interval counts the {missing} missing against the candidate (lower bound) and "
        "for it (upper bound); the 11 paired alone give [-51.4, +34.0]",
        "  missing 1: errored_in_baseline",
        f"  missing {missing - 2 - unrun}: errored_in_both",
        "  missing 1: errored_in_candidate",
        f"  missing {unrun}: not_run",
    ]
    listed = sum(int(line.split()[2].rstrip(":")) for line in done.lines if "not paired" in line)
    (row,) = body["metrics"]
    assert listed == row["missing"] == missing
    assert body["not_run"] == unrun
    assert sum(u["count"] for u in body["unpaired"]) + body["not_run"] == row["missing"]
    # `inspect` prints the lines `compare` printed (without --cases' listing).
    shown = oloproof("inspect", done.lines[0].split()[1], cwd=root)
    assert shown.lines[:6] == done.lines[:6]


def test_the_viewer_lists_them_too(project: tuple[Path, str, str]) -> None:
    root, cand_id, base_id = project
    done = oloproof("compare", cand_id, base_id, "--json", cwd=root)
    assert done.code == 0, done.err
    body = json.loads(done.out)
    with serving(root) as url:
        status, page = fetch(f"{url}/comparisons/{body['address']}")
    assert status == 200
    assert "not paired 1: errored in candidate (" in page
    # Was absent: the page counted them under the metric, and listed them nowhere.
    assert f"not paired {body['not_run']}: not run (planned but never executed" in page


def test_finished_runs_print_no_not_run_line(tmp_path: Path) -> None:
    cases = (
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(4)
    )
    root = write_project(
        tmp_path / "p", app=APP, config=SERIAL_TOY_CONFIG, policy=POLICY, cases=cases
    )
    first = oloproof("run", cwd=root, env={"TOY_VERSION": "1"})
    second = oloproof("run", cwd=root, env={"TOY_VERSION": "3"})
    ids = [r.lines[0].split()[1] for r in (second, first)]
    done = oloproof("compare", *ids, cwd=root)
    assert done.code == 0, done.err
    assert not any("not paired" in line for line in done.lines)
    assert done.lines[1] == "echo: +0.0 points [-71.4, +71.4] · 4 paired · 0 missing · 0 excluded"
