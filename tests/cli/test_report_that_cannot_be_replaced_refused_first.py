"""A report path whose earlier report cannot be replaced is refused before the run, not after.

The probe: `oloproof run --junit report.xml` passed (exit 0), and `report.xml` was then made
immutable (`chattr +i`; a file of another user's in a sticky folder such as /tmp is the same:
it can be read, but not renamed over). The same command again was let through its path checks,
ran every case and recorded its gate (BLOCK, exit 3), and only then ended with exit 2 (`cannot
write report.xml: Operation not permitted`), the passing run's report still in place. docs/ci.md
says a bad path is exit 2 before any work, rather than a recorded gate followed by a failed
write. The command replaces an earlier report by one saying it has not ended before it starts
(for a kill); when that cannot be done, the command is now refused there, having run nothing,
and the other report says why.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

PASSING = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.05}\n"
BLOCKING = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"  # 3 cases: too few


@contextmanager
def immutable(path: Path) -> Iterator[None]:
    made = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot make a file immutable here: {made.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=False)


def test_a_report_that_cannot_be_replaced_refuses_the_run_first(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", policy=PASSING, cases=3)
    reports = ("--junit", "report.xml", "--summary", "summary.md")
    assert oloproof("run", *reports, cwd=root).code == 0
    (root / "policy.yaml").write_text(BLOCKING)
    with immutable(root / "report.xml"):
        refused = oloproof("run", *reports, cwd=root)
        assert refused.code == 2, refused.out + refused.err
        why = f"cannot write {root / 'report.xml'}: Operation not permitted"
        assert refused.err == f"error: {why}\n", refused.err
        # Was: a second run recorded (BLOCK, exit 3) before the write failed.
        assert len(json.loads(oloproof("runs", "--json", cwd=root).out)) == 1
    summary = (root / "summary.md").read_text()
    assert summary.startswith(f"### Oloproof run\n\n**No gate** (exit 2): {why}"), summary
