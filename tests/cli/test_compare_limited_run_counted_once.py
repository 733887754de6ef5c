"""A case one run of a comparison holds is never counted again as not run, through the real CLI.

The probe: a full baseline of a 30-case file against a candidate run with ``--limit 20`` that
was interrupted at its 16th case. ``compare`` listed c15-c29 as only in the baseline and, again,
c15-c19 as ``not run``: 35 cases paired or not of a 30-case file, and every metric 5 missing
pairs wider than the cases allow. The runs planned different cases, so each run's unfinished
cases were counted, though every case the candidate planned is one the full baseline planned
too. Now, when one run's plan holds the other's (the same cases file; the same selection, the
whole file, or two ``--limit`` of the same filters), a case counts as not run only when the
larger plan has it and neither run holds it: each unpaired case once, under the reason the
ledger can name it by.
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
    earlier_release,
    interrupted_while_held,
    oloproof,
    write_project,
)

from oloproof import events as ev

APP = (
    HOLDING_APP
    + """

@system(name="toy", version=os.environ.get("TOY_VERSION", "1"))
def run(case):
    if case["q"] == os.environ.get("HOLD"):  # the run is interrupted here
        hold("holding")
    return {"answer": case["q"]}
"""
)
POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"
CASES = 30


def _interrupted(root: Path, version: str, *args: str) -> str:
    """A run (with ``args``) of system version ``version`` interrupted (Ctrl-C) at c15, which
    it never records: its id."""
    return interrupted_while_held(root, "holding\n", {"TOY_VERSION": version, "HOLD": "q15"}, args)


def _run_id(root: Path, *args: str) -> str:
    done = oloproof("run", *args, cwd=root)
    assert done.code == 0, done.out + done.err
    return done.lines[0].split()[1]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    cases = (
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}}
        for i in range(CASES)
    )
    root = tmp_path_factory.mktemp("limited") / "p"
    write_project(root, app=APP, config=SERIAL_TOY_CONFIG, policy=POLICY, cases=cases)
    runs = {
        "full": _run_id(root),
        "limited": _run_id(root, "--limit", "20"),
        # Other system versions, so each executes its cases again and reaches c15.
        "limited_interrupted": _interrupted(root, "2", "--limit", "20"),
        "full_interrupted": _interrupted(root, "3"),
    }
    return root, runs


def _shown(lower: list[float], upper: list[float]) -> str:
    """The interval the line prints, from the differences at the missing pairs' worst for the
    candidate (``lower``) and at their best (``upper``), by the betting interval of
    statistics.md (``tests.betting_reference``)."""
    low, high = paired(lower)[0], paired(upper)[1]
    return f"[{math.floor(low * 1000) / 10:+.1f}, {math.ceil(high * 1000) / 10:+.1f}]"


def _compare(root: Path, candidate: str, baseline: str) -> tuple[list[str], dict[str, object]]:
    done = oloproof("compare", candidate, baseline, cwd=root)
    assert done.code == 0, done.out + done.err
    address = done.lines[0].split()[1]
    body = json.loads(oloproof("inspect", address, "--json", cwd=root).out)
    return done.lines[1:5], body


def test_an_interrupted_limited_run_against_a_full_one(
    project: tuple[Path, dict[str, str]],
) -> None:
    root, runs = project
    lines, body = _compare(root, runs["limited_interrupted"], runs["full"])
    # Was: "not paired 5: not run (…)" under this, and "[-80.6, +37.3] · 15 paired · 20
    # missing". The baseline passed c15-c29: at worst the candidate failed them, at best passed.
    shown = _shown([0.0] * 15 + [-1.0] * 15, [0.0] * 30)
    assert lines == [
        "not paired 15: only in baseline (c15, c16, c17, c18, c19 and 10 more)",
        f"echo: +0.0 points {shown} · 15 paired · 15 missing · 0 excluded",
        "  the interval counts the 15 missing against the candidate (lower bound) and for it "
        "(upper bound); the 15 paired alone give [-30.0, +30.0]",
        "  missing 15: only_in_baseline",
    ]
    assert "not_run" not in body
    # The other way round: the same cases, once each.
    lines, body = _compare(root, runs["full"], runs["limited_interrupted"])
    assert lines[0] == "not paired 15: only in candidate (c15, c16, c17, c18, c19 and 10 more)"
    assert lines[1].endswith(" · 15 paired · 15 missing · 0 excluded")
    assert "not_run" not in body


def test_a_limited_run_against_an_interrupted_full_one(
    project: tuple[Path, dict[str, str]],
) -> None:
    root, runs = project
    lines, body = _compare(root, runs["limited"], runs["full_interrupted"])
    # c20-c29: planned by the baseline, held by neither. Was: "not paired 15: not run", which
    # counted c15-c19 (only in the candidate) a second time. The candidate passed c15-c19;
    # neither side of c20-c29 is known.
    shown = _shown([0.0] * 20 + [-1.0] * 10, [0.0] * 15 + [1.0] * 15)
    assert lines[:3] == [
        "not paired 5: only in candidate (c15, c16, c17, c18, c19)",
        "not paired 10: not run (planned but never executed; the ledger holds no id)",
        f"echo: +0.0 points {shown} · 15 paired · 15 missing · 0 excluded",
    ]
    assert body["not_run"] == 10
    (row,) = body["metrics"]  # type: ignore[attr-defined]
    assert row["missing_reasons"] == {"not_run": 10, "only_in_candidate": 5}
    assert oloproof("verify", cwd=root).code == 0


# An earlier release (comparison schema 5), which counted each run's unfinished cases as not
# run whenever the plans differed: today's rule switched off, stored at its schema.
EARLIER_RELEASE = earlier_release({ev.COMPARISON: 5})


def test_an_earlier_releases_count_verifies_as_it_was_made(
    project: tuple[Path, dict[str, str]],
) -> None:
    root, runs = project
    earlier = oloproof(
        "compare",
        runs["limited_interrupted"],
        runs["full"],
        "--json",
        cwd=root,
        command=EARLIER_RELEASE,
    )
    assert earlier.code == 0, earlier.out + earlier.err
    made = json.loads(earlier.out)
    assert made["not_run"] == 5  # what it counted then
    # Read through its upcaster, it says how it counted, and is re-derived that way.
    stored = json.loads(oloproof("inspect", made["address"], "--json", cwd=root).out)
    assert (stored["counts_unrun_once"], stored["not_run"]) == (False, 5)
    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out + verified.err
