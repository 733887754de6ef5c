"""`oloproof run --resume RUN --config FILE`, through the real CLI.

A resume read the ledger of the folder it ran in and the project file the run recorded, and
did nothing with `--config`:

- run from outside the project, `--config project/oloproof.yaml` named the project, yet the
  resume said `no ledger in <here> or any folder above it` (or, inside another project,
  `no run RUN in this ledger`), where the ledger and the run were beside the file named;
- `--config candidate.yaml --resume RUN` of a run started with `oloproof.yaml` resumed it with
  `oloproof.yaml`, exit 0, without a word that the file given was not read.

`--config` now names the project whose run is resumed, and a file other than the one the run
started with is refused, naming it.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import SERIAL_TOY_CONFIG, interrupted_while_held, oloproof, write_project

APP = """
import os
import sys
import time
from pathlib import Path

from oloproof import system


@system(name="toy", version="1")
def run(case):
    if case["q"] == "q2" and (Path(__file__).parent / "armed").exists():
        sys.stderr.write("holding\\n")
        sys.stderr.flush()
        while not (Path(__file__).parent / "release").exists():
            time.sleep(0.05)
        raise RuntimeError("released")
    return {"answer": case["q"]}
"""


def _interrupted(root: Path) -> str:
    cases = (
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(4)
    )
    write_project(root, app=APP, config=SERIAL_TOY_CONFIG, policy="", cases=cases)
    (root / "armed").touch()
    run_id = interrupted_while_held(root, "holding\n")
    (root / "armed").unlink()
    return run_id


def test_a_resume_reads_the_project_its_config_names(tmp_path: Path) -> None:
    root = tmp_path / "project"
    run_id = _interrupted(root)
    config = root / "oloproof.yaml"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    resumed = oloproof("run", "--resume", run_id, "--config", str(config), cwd=elsewhere)
    assert resumed.code == 0, resumed.out + resumed.err
    assert resumed.lines[0] == f"Run {run_id} [NO_POLICY/COMPLETE]"


def test_a_resume_refuses_a_config_other_than_the_runs(tmp_path: Path) -> None:
    root = tmp_path / "project"
    run_id = _interrupted(root)
    (root / "candidate.yaml").write_text(SERIAL_TOY_CONFIG.replace('version: "1"', 'version: "2"'))
    resumed = oloproof("run", "--resume", run_id, "--config", "candidate.yaml", cwd=root)
    assert (resumed.code, resumed.err) == (
        2,
        f"error: {run_id} was started with {root / 'oloproof.yaml'}, and --resume finishes "
        "a run with the project file it started with; give that file, or no --config\n",
    )
    assert oloproof("run", "--resume", run_id, cwd=root).code == 0
