"""A Ctrl-C while the command is still loading its modules says `interrupted`, exit 130: the
real CLI.

The probe: `oloproof run` on a project of 3,000 cases, sent SIGINT 0.1 s to 0.7 s after it
started (on a busy machine the command takes that long to import what it needs), printed
Python's traceback of the import it stopped (`File ".../oloproof/cli/compare_cmd.py" ...
KeyboardInterrupt`, some 40 lines) and ended by the signal, where a Ctrl-C a moment later
prints `interrupted` and exits 130. Now a Ctrl-C there ends the same way. Here the moment is
held rather than timed: a `sitecustomize` module makes the import of one module say
`loading` on stderr and wait until the signal arrives, once while `oloproof.cli.main` itself
loads, once while it loads the modules of the commands (where the CLI's own SIGINT handler is
already in place).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support import REPO, toy_project

# Holds the import of the module named by HOLD_IMPORT: says `loading` on stderr and waits for
# the signal the test sends then.
SITECUSTOMIZE = """
import os
import sys
import time


class Hold:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ.get("HOLD_IMPORT"):
            sys.stderr.write("loading\\n")
            sys.stderr.flush()
            time.sleep(60)
        return None


sys.meta_path.insert(0, Hold())
"""


@pytest.mark.parametrize("held", ["oloproof.cli.main", "oloproof.cli.run_cmd"])
def test_ctrl_c_while_loading_says_interrupted(tmp_path: Path, held: str) -> None:
    root = toy_project(tmp_path / "p", cases=3)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
    proc = subprocess.Popen(
        [sys.executable, "-m", "oloproof", "run"],
        cwd=root,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(hook), str(REPO / "src")]),
            "HOLD_IMPORT": held,
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        assert proc.stderr.readline() == "loading\n"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert (proc.returncode, out, err) == (130, "", "interrupted\n")
    assert not (root / ".oloproof").exists()
