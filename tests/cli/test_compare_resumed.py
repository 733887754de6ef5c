"""A comparison is pinned to the case results it read: resuming an interrupted run afterwards
adds results, and must not make ``verify`` call the comparison stale.

Through the real CLI: a 10-case baseline; a candidate whose system interrupts the run as Ctrl-C
would when it reaches its 6th case, and sleeps (so that case never finishes); ``compare`` of
the partial candidate (5 paired, 5 only in the baseline); ``run --resume`` of the candidate;
then ``verify``. The candidate fails ``c7``, which the baseline passes: a flip the early
comparison never saw (``inspect`` and the viewer list none for it), and a comparison made
after the resume, which pairs all 10, lists.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import SERIAL_TOY_CONFIG, oloproof, write_project
from tests.view.support import fetch, serving

from ledger import Event
from oloproof import events as ev
from oloproof.store import open_project_ledger

APP = """
import os
import signal
import time
from pathlib import Path

from oloproof import system

ARMED = Path(__file__).with_name("armed")
VERSION = "1"


@system(name="toy", version="1")
def run(case):
    if case["q"] == "q5" and ARMED.exists():
        ARMED.unlink()
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(3600)  # never finishes: the interrupted run leaves it behind
    if case["q"] == "q2" or (case["q"] == "q7" and VERSION == "2"):
        return {"answer": "no"}
    return {"answer": case["q"]}
"""
POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.1}\n"
COMPARE = (
    "version: 1\nrules:\n  - id: not-worse\n    metric: echo\n    non_inferiority: {margin: 5}\n"
)


def comparison_of(out: str) -> str:
    first = out.splitlines()[0]
    assert first.startswith("Comparison sha256:"), out
    return first.split()[1]


def test_a_comparison_of_an_interrupted_run_still_verifies_once_the_run_is_resumed(
    tmp_path: Path,
) -> None:
    cases = (
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(10)
    )
    root = write_project(
        tmp_path / "p", app=APP, config=SERIAL_TOY_CONFIG, policy=POLICY, cases=cases
    )
    (root / "compare.yaml").write_text(COMPARE)
    baseline = oloproof("run", cwd=root)
    assert baseline.code == 0, baseline.err
    base_id = baseline.lines[0].split()[1]
    for name in ("oloproof.yaml", "app.py"):  # a new version: every case executes again
        path = root / name
        path.write_text(path.read_text().replace('"1"', '"2"'))
    (root / "armed").touch()
    stopped = oloproof("run", cwd=root)
    assert stopped.code == 130, stopped.out + stopped.err
    cand_id = stopped.err.split("--resume ")[1].split()[0]

    early = oloproof("compare", cand_id, base_id, "--policy", "compare.yaml", cwd=root)
    assert early.code == 3, early.err
    assert "· 5 paired cases" in early.lines[0]
    assert "not paired 5: only in baseline (c5, c6, c7, c8, c9)" in early.lines
    address = comparison_of(early.out)
    stored = json.loads(oloproof("inspect", address, "--json", cwd=root).out)
    assert (stored["candidate"]["results"], stored["baseline"]["results"]) == (5, 10)
    assert stored["flipped"] == []

    resumed = oloproof("run", "--resume", cand_id, cwd=root)
    assert resumed.code == 0, resumed.err
    everything = oloproof("verify", cwd=root)
    assert everything.code == 0, everything.out
    assert "re-derived 0 decision(s), 0 diagnosis(es) and 1 comparison(s)" in everything.out
    # The stored comparison still shows what it compared, and no flip it never paired.
    shown = oloproof("inspect", address, cwd=root)
    assert shown.lines[0] == early.lines[0]
    after = json.loads(oloproof("inspect", address, "--json", cwd=root).out)
    assert after["flipped"] == []
    # Compared again now, all ten pair, and c7 flips.
    late = oloproof("compare", cand_id, base_id, "--policy", "compare.yaml", cwd=root)
    assert late.code in (0, 1, 3), late.err
    assert "· 10 paired cases" in late.lines[0]
    again = json.loads(oloproof("inspect", comparison_of(late.out), "--json", cwd=root).out)
    assert [(f["case_id"], f["direction"]) for f in again["flipped"]] == [("c7", "regressed")]
    with serving(root) as url:
        _, early_page = fetch(f"{url}/comparisons/{address}")
        _, late_page = fetch(f"{url}/comparisons/{comparison_of(late.out)}")
    assert 'class="flip worse"' not in early_page
    assert late_page.count('class="flip worse"') == 1
    # A comparison recorded before it said how many results it read (schema 1) reads as
    # reading every one, and re-derives from all of them.
    with open_project_ledger(root, create=False) as ledger:
        event = ledger.get(comparison_of(late.out))
        body = ev.plain(event.body)
        for role in ("candidate", "baseline"):
            del body[role]["results"]
        old = ledger.put(Event(ev.COMPARISON, 1, body, event.refs))
    assert (
        json.loads(oloproof("inspect", old, "--json", cwd=root).out)["candidate"]["results"] is None
    )
    assert oloproof("verify", cwd=root).code == 0
