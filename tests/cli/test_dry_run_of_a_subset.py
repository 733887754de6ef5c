"""`oloproof run --dry-run` plans the cases and repeats the run would execute: through the real CLI.

The defect: the dry run read the whole cases file whatever `--limit`, `--sample`, `--filter`
or `--repeats` said. Over 10 cases of which a filtered run had executed the 5 `first` ones,
`run --dry-run --filter metadata.half=first` printed `Cases: 5 of 10 would execute; 5 reused`
(the run that followed executed none), `--limit 2` on a new project `10 of 10`, and
`--repeats 3` counted one execution a case where the run makes three. Nothing said the plan
covered a subset. Now the plan counts what the run does, and says which subset and how many
repeats, as the run's report does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support import halves_project, oloproof


def planned(root: Path, *args: str) -> tuple[list[str], dict[str, Any]]:
    text = oloproof("run", "--dry-run", *args, cwd=root)
    assert text.code == 0, text.err
    data = oloproof("run", "--dry-run", "--json", *args, cwd=root)
    assert data.code == 0, data.err
    return text.lines, json.loads(data.out)


def test_a_dry_run_plans_the_subset_the_run_would_execute(tmp_path: Path) -> None:
    root = halves_project(tmp_path / "p")
    lines, data = planned(root, "--limit", "2")
    assert lines[:3] == [
        "Dry run: nothing was executed, judged or recorded.",
        "Subset: 2 of 10 cases (the first 2)",
        "Cases: 2 of 2 would execute; 0 reused from the execution cache "
        "(no ledger yet, so nothing is cached)",
    ]  # was "Cases: 10 of 10 would execute", with no Subset line
    assert (data["cases"], data["would_execute"], data["cached"]) == (2, 2, 0)
    assert data["subset"] == {
        "limit": 2,
        "sample": None,
        "seed": None,
        "filters": [],
        "total": 10,
    }

    done = oloproof("run", "--filter", "metadata.half=first", cwd=root)
    assert done.code == 3, done.out + done.err
    lines, data = planned(root, "--filter", "metadata.half=first")
    assert lines[1:3] == [
        "Subset: 5 of 10 cases (metadata.half=first)",
        "Cases: 0 of 5 would execute; 5 reused from the execution cache",
    ]  # was "Cases: 5 of 10 would execute; 5 reused …"
    assert (data["cases"], data["would_execute"], data["cached"]) == (5, 0, 5)


def test_a_dry_run_counts_every_repeat(tmp_path: Path) -> None:
    root = halves_project(tmp_path / "p")
    assert oloproof("run", cwd=root).code == 0
    lines, data = planned(root, "--repeats", "3", "--sample", "4", "--seed", "1")
    # Repeat 0 is the execution the run made; repeats 1 and 2 are new.
    assert lines[1:4] == [
        "Subset: 4 of 10 cases (sample 4, seed 1)",
        "Repeats: each case executed 3 times; a case counts once, as the mean of its verdicts",
        "Executions: 8 of 12 would execute (4 cases × 3 repeats); 4 reused from the execution "
        "cache",
    ]  # was "Cases: 0 of 10 would execute; 10 reused …"
    assert (data["cases"], data["repeats"], data["would_execute"], data["cached"]) == (4, 3, 8, 4)
    # What the run then does.
    done = oloproof("run", "--repeats", "3", "--sample", "4", "--seed", "1", cwd=root)
    assert "Cache: execution 4 hit/8 miss;" in done.out, done.out
