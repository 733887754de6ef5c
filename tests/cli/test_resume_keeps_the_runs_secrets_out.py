"""`oloproof run --resume` keeps out of the ledger the secrets the run declared when it started,
through the real CLI.

A run started with `secrets: [SEARCH_SERVICE]` stored `[redacted]` for the value in the cases
it finished. Interrupted, its project file edited to take the name out of `secrets:`, and
resumed, the cases the resume wrote held the value as it was: one run, whose recorded project
file still lists the secret, with it kept out of half its cases. A resume now keeps out the
secrets its run recorded as well as those the project file lists now.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.support import oloproof, write_project

VALUE = "https://search.internal.example/k3y-7f3a9c21"
APP = """
import os
import signal
import time
from pathlib import Path

from oloproof import system

ARMED = Path(__file__).with_name("armed")


@system(name="leaky", version="1")
def run(case):
    if case["q"] == "q2" and ARMED.exists():
        ARMED.unlink()
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(3600)  # never finishes: the interrupted run leaves it behind
    return {"answer": case["q"] + " via " + os.environ["SEARCH_SERVICE"]}
"""
CONFIG = """\
system: {name: leaky, version: "1", callable: "app:run"}
dataset: cases.jsonl
concurrency: 1
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
"""
SECRETS = "secrets: [SEARCH_SERVICE]\n"


def _interrupted(root: Path) -> str:
    """The id of a run of a project in ``root`` (made here) declaring SEARCH_SERVICE a secret,
    interrupted on its third case; the project file then lists no secret."""
    cases = (
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(5)
    )
    write_project(root, app=APP, config=CONFIG + SECRETS, policy="", cases=cases)
    (root / "armed").touch()
    stopped = oloproof("run", cwd=root, env={"SEARCH_SERVICE": VALUE})
    assert stopped.code == 130, stopped.out + stopped.err
    (root / "oloproof.yaml").write_text(CONFIG)
    return stopped.err.split("--resume ")[1].split()[0]


def test_a_resume_keeps_out_a_secret_taken_out_of_the_project_file_since(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    run_id = _interrupted(root)
    resumed = oloproof("run", "--resume", run_id, cwd=root, env={"SEARCH_SERVICE": VALUE})
    assert resumed.code == 0, resumed.out + resumed.err
    # Read without the variable set, so that nothing hides the value as it is printed.
    assert "SEARCH_SERVICE" not in os.environ
    answers = []
    for i in range(5):
        shown = oloproof("inspect", run_id, "--case", f"c{i}", "--json", cwd=root)
        assert shown.code == 0, shown.err
        # An answer holding a secret errors its case, its error giving the answer as stored.
        error = json.loads(shown.out)["error"]
        assert error["type"] == "SecretInAnswer", error
        answers.append(error["message"].split("Its start, as stored: ")[1])
    assert answers == [f"{{answer: q{i} via [redacted]}}" for i in range(5)]


def test_a_resume_whose_secret_became_too_short_to_keep_out_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "p"
    run_id = _interrupted(root)
    resumed = oloproof("run", "--resume", run_id, cwd=root, env={"SEARCH_SERVICE": "abc"})
    assert (resumed.code, resumed.err) == (
        2,
        f"error: {run_id} keeps SEARCH_SERVICE out as a secret (it was under secrets: when "
        "the run started), but its value is now shorter than 6 characters, too short to be "
        "kept out; give it a longer value, or start a new run instead\n",
    )
