"""`oloproof run --resume` after a setting under `system:` that the system's identity leaves
out was changed, through the real CLI against a real HTTP server.

An HTTP system's identity (what its cache is keyed by) leaves out its headers, its timeout and
its retries: a new token must not make every cached answer useless. Resuming compared only that
identity, so a run started with `X-Variant: A`, interrupted, and resumed after the header was
edited to `B` finished with exit 0 and no word of it, its first cases answered by variant A and
the rest by variant B in one gate. A resume is now refused, naming the setting, as it is for an
edited system version or evaluator.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import ClassVar

from tests.support import QuietHandler, http_server, oloproof

CONFIG = """\
system:
  name: web
  version: "1"
  http:
    url: {url}
    output_path: result
    retries: 0
    headers: {{X-Variant: {variant}}}
dataset: cases.jsonl
concurrency: 1
evaluators:
  - {{type: contains, criterion: answer_ok, field: answer, expected_field: answer}}
"""
QUESTIONS = ["a", "b", "stop", "c", "d"]


class _Variants(QuietHandler):
    """Answers the question under variant A and a wrong one under any other; on the case
    `stop`, the first time, it interrupts the run (Ctrl-C) and answers only once the run has
    taken it."""

    run_pid: ClassVar[int] = 0

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if body["q"] == "stop" and type(self).run_pid:
            os.kill(type(self).run_pid, signal.SIGINT)
            type(self).run_pid = 0
            time.sleep(1)
        right = self.headers.get("X-Variant") == "A"
        answer = body["q"] if right else "wrong"
        self.reply(200, json.dumps({"result": {"answer": answer}}).encode())


def _interrupted(root: Path) -> str:
    """The id of a run of ``root`` interrupted at its case `stop`."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "oloproof", "run"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _Variants.run_pid = proc.pid
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, out + err
    return err.split("--resume ")[1].split()[0]


def test_a_resume_after_an_http_header_changed_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "web"
    root.mkdir()
    lines = [json.dumps({"id": q, "input": {"q": q}, "expected": {"answer": q}}) for q in QUESTIONS]
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n")
    with http_server(_Variants) as base:
        config = root / "oloproof.yaml"
        config.write_text(CONFIG.format(url=base + "/answer", variant="A"))
        run_id = _interrupted(root)
        config.write_text(CONFIG.format(url=base + "/answer", variant="B"))
        resumed = oloproof("run", "--resume", run_id, cwd=root)
        assert (resumed.code, resumed.err) == (
            2,
            f"error: the system changed since {run_id} started (its settings differ: "
            "system.http.headers.X-Variant); start a new run instead\n",
        )
        # Put back as it was, the run resumes and every case is answered by variant A.
        config.write_text(CONFIG.format(url=base + "/answer", variant="A"))
        finished = oloproof("run", "--resume", run_id, "--json", cwd=root)
    assert finished.code == 0, finished.out + finished.err
    (metric,) = json.loads(finished.out)["metrics"]
    assert (metric["successes"], metric["observed"]) == (len(QUESTIONS), len(QUESTIONS))
