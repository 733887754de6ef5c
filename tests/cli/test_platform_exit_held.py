"""A system that ends the process through the platform module's ``_exit`` (``posix._exit``,
the function ``os._exit`` is) costs only its case, as ``os._exit`` does: it neither ends
``oloproof run`` with the status it chose (0 reading as a passing gate) nor leaves the run
unfinished."""

from __future__ import annotations

from pathlib import Path

from tests.support import answered_project, oloproof

# Every answer is wrong (the gate FAILs), and q3 ends the process with status 0.
APP = """
import posix

from oloproof import system


@system(name="s", version="1")
def answer(case):
    if case["q"] == "q3":
        posix._exit(0)
    return {"answer": "wrong"}
"""


def test_posix_exit_in_a_system_errors_its_case_and_the_gate_still_fails(
    tmp_path: Path,
) -> None:
    root = answered_project(tmp_path / "p", APP)
    result = oloproof("run", cwd=root)
    assert result.code == 1, result.out + result.err
    assert "Gate: BLOCK (exit 1)" in result.lines
    run_id = result.lines[0].split()[1]
    case = oloproof("inspect", run_id, "--case", "q3", cwd=root)
    assert "error: HardExit: it called os._exit(0)" in case.out, case.out


def test_posix_exit_at_import_time_is_refused_naming_the_module(tmp_path: Path) -> None:
    root = answered_project(tmp_path / "p", "import posix\nposix._exit(0)\n")
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out + result.err
    assert result.err.endswith("importing 'app' failed: it called os._exit(0)\n"), result.err
    assert not (root / ".oloproof").exists()
