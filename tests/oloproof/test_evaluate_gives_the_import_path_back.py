"""``evaluate`` puts the project's folder first on ``sys.path`` while it imports the project's
code, and gives the caller's import path back as it was when it returns or raises: the folder
stayed first, so the caller's next ``import helper`` got the project's ``helper.py``. A folder
the caller had on the path itself stays where the caller put it. Each call runs in a Python
process of its own, as a user's script would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support import toy_project

SCRIPT = """
import json, sys, oloproof
from pathlib import Path

project = Path("toy").resolve()
config = project / "oloproof.yaml"

def where():
    return sys.path.index(str(project)) if str(project) in sys.path else None

before = list(sys.path)
print(json.dumps([oloproof.evaluate(config).gate_label, where(), sys.path == before]))
try:
    oloproof.evaluate(config, sample=50)  # refused once the project's code is imported
except oloproof.ConfigError as refused:
    print(json.dumps([type(refused).__name__, where(), sys.path == before]))
sys.path.append(str(project))  # the caller's own entry, last
before = list(sys.path)
oloproof.evaluate(config)
print(json.dumps([where() == len(sys.path) - 1, sys.path == before]))
"""


def test_the_project_folder_leaves_the_import_path_after_evaluate(tmp_path: Path) -> None:
    toy_project(tmp_path / "toy", cases=2)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    said = [json.loads(line) for line in done.stdout.splitlines()]
    assert said == [["BLOCK", None, True], ["ConfigError", None, True], [True, True]]
