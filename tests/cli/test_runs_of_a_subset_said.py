"""`oloproof runs` (and `--json`) says which runs covered a subset of their cases, through the
real CLI.

The defect: a run of `--filter metadata.half=first` over 5 of 10 cases listed as
`COMPLETE  PASS (exit 0)  5 of 5 observed · 0 missing`, its JSON row `planned: 5` and nothing
else, the same as a run of a 5-case suite: nothing in the listing said that 5 cases of the file
were left out. Now a row of a subset carries what chose its cases and the file's count
(`subset`, as `inspect --json` has it); a row of a whole run has none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support import halves_project, oloproof


def rows(root: Path) -> dict[str, dict[str, Any]]:
    listed = oloproof("runs", "--json", cwd=root)
    assert listed.code == 0, listed.err
    return {row["run_id"]: row for row in json.loads(listed.out)}


def run_id(root: Path, *args: str) -> str:
    done = oloproof("run", *args, cwd=root)
    assert done.code in (0, 3), done.out + done.err
    return done.lines[0].split()[1]


def test_a_subset_run_lists_as_one(tmp_path: Path) -> None:
    root = halves_project(tmp_path / "p")
    narrowed = run_id(root, "--filter", "metadata.half=first")
    limited = run_id(root, "--limit", "3")
    whole = run_id(root)
    found = rows(root)
    assert found[narrowed]["planned"] == 5
    assert found[narrowed]["subset"] == {
        "limit": None,
        "sample": None,
        "seed": None,
        "filters": ["metadata.half=first"],
        "total": 10,
    }  # was: no subset key at all
    assert found[limited]["subset"]["limit"] == 3 and found[limited]["subset"]["total"] == 10
    assert "subset" not in found[whole] and found[whole]["planned"] == 10
    # inspect --json says the same of the run.
    report = json.loads(oloproof("inspect", narrowed, "--json", cwd=root).out)
    assert report["subset"] == found[narrowed]["subset"]
    # The plain listing says it too (was: `5 of 5 observed · 0 missing`, as a 5-case suite).
    listed = {line.split()[0]: line for line in oloproof("runs", cwd=root).lines}
    said = "5 of 5 answered · 0 missing · subset: 5 of 10 cases (metadata.half=first)"
    assert said in listed[narrowed]
    assert "3 of 3 answered · 0 missing · subset: 3 of 10 cases (the first 3)" in listed[limited]
    assert "subset" not in listed[whole]
