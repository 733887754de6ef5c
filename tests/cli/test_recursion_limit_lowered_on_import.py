"""A system module that lowers Python's recursion limit as it is imported is refused, by name.

The probe: `sys.setrecursionlimit(120)` at the top of the system's module. `oloproof run`
printed a RecursionError traceback from deep inside the import machinery; at 50 it said
`error: cannot encode value: maximum recursion depth exceeded…`, naming no cause. Oloproof's own
calls (the command, its event loop, the ledger's encoding) run beneath the system's and need the
frames the limit had. The import is refused now, in one sentence naming the module and the two
limits, and nothing is written; in a process of the Python API the limit is given back.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.support import TOY_APP, oloproof, toy_project


@pytest.mark.parametrize("lowered", [120, 50])
def test_a_module_lowering_the_limit_is_refused(tmp_path: Path, lowered: int) -> None:
    root = toy_project(tmp_path / "p")
    (root / "app.py").write_text(f"import sys\nsys.setrecursionlimit({lowered})\n{TOY_APP}")
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.err
    assert done.err == (
        f"error: {root / 'oloproof.yaml'}, line 4: system.callable: importing 'app' failed: it "
        f"lowered Python's recursion limit from 1000 to {lowered} (sys.setrecursionlimit), "
        "which oloproof's own calls around the system's need; leave it at 1000 or more\n"
    )
    assert not (root / ".oloproof").exists()


def test_the_python_api_gives_the_limit_back(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p")
    (root / "app.py").write_text(f"import sys\nsys.setrecursionlimit(120)\n{TOY_APP}")
    script = (
        "import sys, oloproof\n"
        "try:\n"
        f"    oloproof.evaluate({str(root / 'oloproof.yaml')!r})\n"
        "except oloproof.OloproofError as exc:\n"
        "    print(type(exc).__name__, sys.getrecursionlimit())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.stdout == "ConfigError 1000\n", done.stdout + done.stderr
