"""``diagnose`` re-executes the diagnosed project's code, importing it with the project's folder
first on ``sys.path``, and gives the caller's import path back as it was when it returns or
raises, as ``evaluate`` does: the folder stayed first, so the caller's next ``import helper``
got the project's ``helper.py``. The call runs in a Python process of its own, as a user's
script would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.cli.test_diagnose_interventions import write_project

SCRIPT = """
import json, sys, oloproof
from pathlib import Path

project = Path("p").resolve()
oloproof.evaluate(project / "oloproof.yaml")
before = list(sys.path)
gold = dict(intervention="gold-context", criterion="answer_correct")
with oloproof.open_project_ledger(project, create=False) as ledger:
    diagnosis = oloproof.diagnose(ledger, "latest", **gold)
    print(json.dumps([diagnosis.state, str(project) in sys.path, sys.path == before]))
    try:
        oloproof.diagnose(ledger, "latest", intervention="reranker", reranker="rerank:nothing",
                          criterion="answer_correct")  # refused once the project's code is imported
    except oloproof.ConfigError as refused:
        print(json.dumps([type(refused).__name__, str(project) in sys.path, sys.path == before]))
"""


def test_the_project_folder_leaves_the_import_path_after_diagnose(tmp_path: Path) -> None:
    write_project(tmp_path / "p", ["q1", "q2"])
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    said = [json.loads(line) for line in done.stdout.splitlines()]
    assert said == [["complete", False, True], ["ConfigError", False, True]]
