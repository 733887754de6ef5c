"""A project file named like a module of Python's standard library does not break a run.

The project's folder goes first on the import path, as Python puts a script's folder, so that the
system's own modules are found. Oloproof loads some libraries only once a run needs them (scipy
when it decides the gate, httpx when a judge is called): with a `pprint.py`, `argparse.py` or
`unittest.py` of the project's beside the system (names a project may well use), those libraries
imported it in place of Python's own, and the run ended after every case had run, with a
traceback and exit code 1, which reads as a FAILed rule.

Each test puts a file of every standard module's name in the project folder, each raising as it
is imported: Oloproof must import none of them, and must say which of them an `import` in the
system's code could no longer load (the standard module being loaded already), since such a file
would silently not run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from tests.support import (
    ANSWERED_CONFIG,
    GOLD_DIAGNOSIS,
    Result,
    answered_project,
    copy_example,
    serving_judge_gate,
)

# The command as installed (``python -m oloproof`` has a test of its own below).
OLOPROOF = str(Path(sys.executable).with_name("oloproof"))

APP = """
from oloproof import system


@system(name="s", version="1")
def answer(case):
    return {"answer": case["q"]}
"""

# With a json_schema evaluator too: jsonschema is loaded as the run is planned.
SCHEMA = "  - {type: json_schema, criterion: shaped, schema: {type: object, required: [answer]}}\n"


def _said_unreachable(root: Path, err: str) -> None:
    """``err`` is one warning naming the project files that an import cannot load: ``json.py``
    (Oloproof loads json as it starts) and ``pprint.py`` (SciPy does), not ``test.py``."""
    (line,) = err.splitlines()
    assert line.startswith(f"warning: {root}: "), line
    named = line.split(": ")[2].split(", ")
    assert {"json.py", "pprint.py", "unittest.py"} <= set(named), named
    assert "test.py" not in named and "antigravity.py" not in named, named
    assert line.endswith(
        ": named like modules of Python's standard library, which are loaded already; an "
        "import of one of these names in your code gets Python's module, not the file (rename "
        "the file to use it)"
    ), line


def _cli(*args: str, cwd: Path) -> Result:
    done = subprocess.run([OLOPROOF, *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    return Result(done.returncode, done.stdout, done.stderr)


# Names a project may use that Oloproof imports as it starts (with all the others, Python's own
# start under -m would fail first: runpy imports importlib from the working folder).
STARTING = ("email", "json", "typing", "logging", "pprint", "argparse", "unittest", "decimal")


def _shadowed(root: Path, names: Sequence[str] = ()) -> Path:
    """``root`` with a ``NAME.py`` for each of ``names`` (default: every public standard
    module name), each refusing to be imported."""
    names = names or [name for name in sys.stdlib_module_names if not name.startswith("_")]
    assert {"pprint", "argparse", "unittest"} <= set(names)
    for name in names:
        (root / f"{name}.py").write_text(f"raise RuntimeError('the project file {name}.py')\n")
    return root


def _project(root: Path, names: Sequence[str] = ()) -> Path:
    answered_project(root, APP)
    (root / "oloproof.yaml").write_text(ANSWERED_CONFIG + SCHEMA)
    return _shadowed(root, names)


def test_a_run_decides_its_gate_and_writes_its_reports(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    done = _cli("run", "--json", "--junit", "gate.xml", "--summary", "summary.md", cwd=root)
    assert done.code == 0, done.out + done.err
    _said_unreachable(root, done.err)
    assert json.loads(done.out)["gate_label"] == "PASS"
    assert 'name="answers (answered)"' in (root / "gate.xml").read_text()
    assert "PASS" in (root / "summary.md").read_text()


def test_a_dry_run_plans(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    done = _cli("run", "--dry-run", cwd=root)
    assert done.code == 0, done.out + done.err
    _said_unreachable(root, done.err)


def test_a_staged_run_and_its_diagnosis(tmp_path: Path) -> None:
    root = _shadowed(copy_example("support_rag", tmp_path))
    run = _cli("run", cwd=root)
    assert run.code == 3, run.out + run.err  # the example's gate blocks, on purpose
    assert "Gate: BLOCK (exit 3)" in run.lines, run.out
    _said_unreachable(root, run.err)
    done = _cli("diagnose", "latest", *GOLD_DIAGNOSIS, cwd=root)
    assert done.code == 0, done.out + done.err
    _said_unreachable(root, done.err)
    assert "Recovered under gold context: 3 of 4" in done.out, done.out


def test_a_run_judged_over_http(tmp_path: Path) -> None:
    with serving_judge_gate(tmp_path) as (root, _):
        done = _cli("run", cwd=_shadowed(root))
    assert done.code in (0, 3), done.out + done.err
    _said_unreachable(root, done.err)
    assert any(line.startswith("Gate: ") for line in done.lines), done.out


def test_python_dash_m_starts_as_the_console_command_does(tmp_path: Path) -> None:
    # `python -m oloproof` puts the working folder first on the import path before Oloproof is
    # imported: a project's json.py (or typing.py, email.py...) was imported by Oloproof itself
    # as it started, and the command ended in a traceback, exit 1.
    root = _project(tmp_path / "p", names=STARTING)
    done = subprocess.run(
        [sys.executable, "-m", "oloproof", "run", "--json"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["gate_label"] == "PASS"
    (line,) = done.stderr.splitlines()  # the warning, naming what Oloproof had loaded already
    files = ", ".join(sorted(f"{name}.py" for name in STARTING))
    assert line.startswith(f"warning: {root}: {files}: named like modules"), line
