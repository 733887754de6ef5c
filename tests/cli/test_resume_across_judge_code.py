"""A run that an earlier release left interrupted, judged by an older version of the judges'
code, is refused on resume for what it is: a change of Oloproof, not of the user's evaluators.

The probe: the judge_gate example run by the previous release (dceda63, judges' code version 3)
and killed midway, then ``run --resume`` by this one, nothing of the project changed. It said
``error: the evaluators changed since RUN started (its finished cases were judged by the ones it
recorded); start a new run instead``, which sends the user looking for a change they never made.
"""

from __future__ import annotations

import signal
from pathlib import Path

from tests.support import oloproof, serving_judge_gate, start_run

from oloproof.evaluators.judges import LLMJudge

ENV = {"JUDGE_GATE_KEY": "test-key"}

# The previous release: today's code with the judges' code at version 3 (its run of the same
# project recorded the same evaluators save each judge's ``version``).
VERSION_3 = """
from oloproof.evaluators import judges

judges.LLMJudge.VERSION = 3
from oloproof.cli.main import main

main()
"""

# The example's system, holding on the questions about the trash until killed.
HOLDING = """

import sys
import time

_answer = answer


def answer(case_input: dict) -> dict:
    if "trash" in case_input["question"]:
        # One write: two cases about the trash run at once, and print's two writes (the text,
        # then the line's end) from two threads could make "holdingholding".
        sys.stderr.write("holding\\n")
        sys.stderr.flush()
        time.sleep(600)
    return _answer(case_input)
"""


def test_a_run_judged_by_older_judge_code_is_refused_as_such(tmp_path: Path) -> None:
    with serving_judge_gate(tmp_path) as (root, _server):
        with (root / "app.py").open("a", encoding="utf-8") as app:
            app.write(HOLDING)
        proc = start_run(root, "holding\n", env=ENV, command=("-c", VERSION_3))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        run_id = oloproof("runs", cwd=root).lines[0].split()[0]
        resumed = oloproof("run", "--resume", run_id, cwd=root, env=ENV)
    assert (resumed.code, resumed.out) == (2, "")
    assert resumed.err == (
        f"error: {run_id} was started by an earlier release of oloproof, whose judges' code "
        f"(version 3) read the judges' replies otherwise than this one's (version {LLMJudge.VERSION}), so its "
        "cases left cannot be judged alike with those it finished; start a new run instead: "
        "oloproof run\n"
    )
