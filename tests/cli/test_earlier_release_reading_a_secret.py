"""A run made by a release that read a secret into the code fingerprint, met by this one.

Releases before 7f4fc50 took the value of a key a module read from the environment (``KEY =
os.environ["SVC"]``, ``SVC`` declared under ``secrets:``) into the fingerprint as it was; this
release takes it as ``[redacted]``, so the key of the same code differs. The walk's number was
not raised for that change, and a run such a release left interrupted was refused as the user's
doing: ``oloproof run --resume`` said ``the system changed since RUN started (what differs:
code)``, and ``run --dry-run`` gave ``constant KEY in app.py changed`` as why every case would
execute, though neither the code nor the key had changed. Told now as what it is: an earlier
release read the code otherwise, and nothing the user changed is claimed.

The stand-in below runs today's CLI with what that release did otherwise put back (the secret
read as it is, the walk numbered 2): for this project, 7f4fc50^'s ``runs`` lists the run as
``code 5cb8aa74``, and so does the stand-in's.
"""

from __future__ import annotations

import signal
from pathlib import Path

from tests.support import oloproof, start_run, write_project

_SECRET_READ_RUN = """
from types import SimpleNamespace

from oloproof import fingerprint
from oloproof.fingerprint import _values

_values.redaction = SimpleNamespace(kept_out=lambda text: text)
fingerprint.WALK = 2

from oloproof.cli.main import main

main()
"""

_APP = """
import os
import sys
import time
from pathlib import Path

from oloproof import system

KEY = os.environ["SVC"]
HERE = Path(__file__).parent


@system(name="toy", version="1")
def run(case):
    assert KEY
    if case["q"] == "q2":
        print("holding", file=sys.stderr, flush=True)
        while not (HERE / "release").exists():
            time.sleep(0.05)
    return {"answer": case["q"]}
"""

_CONFIG = """\
system: {name: toy, version: "1", callable: app:run}
concurrency: 1
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
secrets: [SVC]
"""


def test_a_run_keyed_on_the_secret_is_refused_as_the_release_s_doing(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=_APP,
        config=_CONFIG,
        policy="version: 1\nrules:\n  - {id: a, metric: echo, min: 0.5}\n",
        cases=[
            {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}}
            for i in range(4)
        ],
    )
    env = {"SVC": "svc-Q7x9-hidden-old"}
    proc = start_run(root, "holding\n", env=env, command=("-c", _SECRET_READ_RUN))
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    (root / "release").touch()
    listed = oloproof("runs", cwd=root).lines[0]
    assert listed.endswith("code 5cb8aa74"), listed
    run_id = listed.split()[0]

    planned = oloproof("run", "--dry-run", cwd=root, env=env)
    assert (
        "  4 executions: an earlier release of oloproof fingerprinted it, reading the code "
        "otherwise" in planned.lines
    ), planned.out
    resumed = oloproof("run", "--resume", run_id, cwd=root, env=env)
    assert (resumed.code, resumed.out) == (2, "")
    assert resumed.err == (
        f"error: {run_id} was started by an earlier release of oloproof, which read the "
        "system's code otherwise to identify it, so whether the code changed since cannot be "
        "told; start a new run instead: oloproof run\n"
    )
