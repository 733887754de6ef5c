"""A resumed run's model-call totals add its goes together, each call counted once.

A model system of four cases, run one case at a time against a scripted model server on
127.0.0.1 that answers two calls (100 input and 10 output tokens each) and then hangs on the
third: the run is interrupted there (Ctrl-C), and `run --resume` finishes it. The resumed run
says what both goes spent, as one run that was never interrupted says it: four calls, 400 input
and 40 output tokens, cost 0.00048. The call the interrupt cut short got no reply, so it is in
no total; its case is asked again by the resume.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.cli.test_system_model_spend import ENV, SPENT, project
from tests.support import oloproof

from oloproof.testing import ScriptedJudgeServer, answer, hang


def test_a_resumed_run_counts_the_calls_of_both_goes_once(tmp_path: Path) -> None:
    billed = answer("x", input_tokens=100, output_tokens=10)
    with ScriptedJudgeServer(billed, billed, hang(60), default=billed) as server:
        root = project(tmp_path / "p", server.url)
        config = root / "oloproof.yaml"
        config.write_text(config.read_text() + "concurrency: 1\n")
        proc = subprocess.Popen(
            [sys.executable, "-m", "oloproof", "run"],
            cwd=root,
            env={**os.environ, **ENV},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 60
            while len(server.requests) < 3 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(server.requests) == 3, proc.poll()
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
        assert proc.returncode == 130, out + err
        run_id = err.split("--resume ")[1].split()[0]
        resumed = oloproof("run", "--resume", run_id, cwd=root, env=ENV)
        assert resumed.code == 0, resumed.out + resumed.err
        # c0 and c1 answered in the first go; c2 (cut short) and c3 asked in the second.
        assert len(server.requests) == 5
    assert SPENT in resumed.out.splitlines(), resumed.out
    shown = oloproof("inspect", run_id, cwd=root)
    assert SPENT in shown.out.splitlines(), shown.out
    totals = json.loads(oloproof("inspect", run_id, "--json", cwd=root).out)["model_calls"]
    assert (totals["calls"], totals["input_tokens"], totals["output_tokens"]) == (4, 400, 40)
