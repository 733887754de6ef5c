"""What the system's code prints never reaches the report on standard output.

A system runs in Oloproof's process and shares its standard output: a `print` at import, in
each case, in a stage, or a child process it started wrote into the report. `oloproof run
--json > report.json` then held the system's lines before the JSON, which no reader can parse,
and a reader of the text report met the system's lines among its own. What the system's code writes goes
to standard error, beside Oloproof's own messages, and standard output holds the report alone.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import GOLD_DIAGNOSIS, answered_project, copy_example, oloproof

APP = """
import os
import subprocess
import sys

from oloproof import system

print("loading the index")


@system(name="s", version="1")
def answer(case):
    sys.stdout.write(f"answering {case['q']}\\n")  # a line in one write: cases run side by side
    sys.stdout.flush()
    os.write(1, b"written to fd 1\\n")
    # One write too: under PYTHONUNBUFFERED a child's print() writes its line end apart, and
    # another case's line could come between the two.
    child = "import os; os.write(1, b'from a child\\\\n')"
    subprocess.run([sys.executable, "-c", child], check=True)
    return {"answer": case["q"]}
"""

PRINTED = ("loading the index", "answering q1", "written to fd 1", "from a child")


def _printed_on_stderr(err: str) -> None:
    for line in PRINTED:
        assert line in err.splitlines(), err


def test_the_json_report_is_all_standard_output_holds(tmp_path: Path) -> None:
    root = answered_project(tmp_path / "p", APP)
    done = oloproof("run", "--json", cwd=root)
    assert done.code == 0, done.out + done.err
    report = json.loads(done.out)
    assert report["gate_label"] == "PASS"
    _printed_on_stderr(done.err)


def test_the_text_report_is_all_standard_output_holds(tmp_path: Path) -> None:
    root = answered_project(tmp_path / "p", APP)
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    assert done.lines[0].startswith("Run run_"), done.out
    assert "Gate: PASS (exit 0)" in done.lines, done.out
    assert not any(line in done.out for line in PRINTED), done.out
    _printed_on_stderr(done.err)


def test_the_dry_run_s_json_is_all_standard_output_holds(tmp_path: Path) -> None:
    root = answered_project(tmp_path / "p", APP)
    done = oloproof("run", "--dry-run", "--json", cwd=root)
    assert done.code == 0, done.out + done.err
    assert json.loads(done.out)["cases"] == 30
    assert "loading the index" in done.err.splitlines(), done.err


def test_a_diagnosis_s_json_is_all_standard_output_holds(tmp_path: Path) -> None:
    root = copy_example("support_rag", tmp_path)
    app = (root / "app.py").read_text()
    generate = "    def generate(self, input: dict, context: Context) -> dict:\n"
    assert generate in app
    (root / "app.py").write_text(
        app.replace(generate, generate + '        print("generating", flush=True)\n')
    )
    run = oloproof("run", cwd=root)
    assert run.code == 3, run.out + run.err  # the example's gate blocks, on purpose
    (listed,) = oloproof("runs", cwd=root).lines
    run_id = listed.split()[0]
    done = oloproof("diagnose", run_id, *GOLD_DIAGNOSIS, "--json", cwd=root)
    assert done.code == 0, done.out + done.err
    assert json.loads(done.out)["diagnosis"]["intervention"] == {"kind": "gold-context"}
    assert "generating" in done.err.splitlines(), done.err


SILENCES = """
import os
import sys

from oloproof import system

sys.stdout = open(os.devnull, "w")  # silences a chatty library, and is never put back
sys.stderr = open(os.devnull, "w")


@system(name="s", version="1")
def answer(case):
    return {"answer": case["q"]}
"""


def test_a_system_that_replaces_the_standard_streams_does_not_silence_the_report(
    tmp_path: Path,
) -> None:
    # The report went to the system's os.devnull: CI's log showed nothing of the gate, and a
    # --json reader found no document.
    root = answered_project(tmp_path / "p", SILENCES)
    done = oloproof("run", "--json", cwd=root)
    assert done.code == 0, done.out + done.err
    assert json.loads(done.out)["gate_label"] == "PASS"
    # An output the ledger cannot record stops the run, in a sentence on stderr.
    nan = SILENCES.replace('return {"answer": case["q"]}', 'return {"answer": float("nan")}')
    (root / "app.py").write_text(nan)
    stopped = oloproof("run", cwd=root)
    assert stopped.code == 2, stopped.out + stopped.err
    assert stopped.err.startswith("error: "), stopped.err
    assert "the output cannot be recorded" in stopped.err, stopped.err


CHATTY_THREAD = """
import threading
import time

from oloproof import system


def heartbeat():
    while True:
        print("still here", flush=True)
        time.sleep(0.001)  # often: some line falls while the report is printed


threading.Thread(target=heartbeat, name="heartbeat").start()


@system(name="s", version="1")
def answer(case):
    return {"answer": case["q"]}
"""


def test_a_thread_that_prints_after_the_report_prints_on_stderr(tmp_path: Path) -> None:
    # The thread never ends: the command exits 5 s after its report (with a warning), and all
    # the while the thread printed after the JSON document (or, as it was printed, into it),
    # which no reader could then parse.
    root = answered_project(tmp_path / "p", CHATTY_THREAD)
    done = oloproof("run", "--json", cwd=root, timeout=60)
    assert done.code == 0, done.out + done.err
    assert json.loads(done.out)["gate_label"] == "PASS"
    assert "still here" in done.err.splitlines(), done.err
    assert "warning: threads the system's code started were still running" in done.err
