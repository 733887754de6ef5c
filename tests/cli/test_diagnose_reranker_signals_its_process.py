"""A reranker that stops its own process ends `oloproof diagnose`, through the real CLI.

The probe: a reranker that sent SIGTERM to its own process several times (as code that stops
its container does) made `oloproof diagnose` print `interrupted: no diagnosis was recorded`,
then hang for ever: the second signal ends a command at once, without its cleanup, and the
cleanup is what stopped the thread that writes a child run's finished cases while it runs. That
thread was left waiting for its next turn, and the process waited for it (killed after 30 s in
three tries out of three). Now the thread stops once the process is exiting, and diagnose exits
143 as on any SIGTERM.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support import copy_example, oloproof

SIGNALS = """
import os
import signal


def terminates(input, candidates):
    for _ in range(5):
        os.kill(os.getpid(), signal.SIGTERM)
    return candidates
"""


def test_a_reranker_that_terminates_its_process_ends_diagnose(tmp_path: Path) -> None:
    root = copy_example("support_rag", tmp_path)
    (root / "signals.py").write_text(SIGNALS, encoding="utf-8")
    assert oloproof("run", cwd=root).code == 3  # the example's gate blocks
    try:
        done = oloproof(
            *("diagnose", "latest", "--intervention", "reranker"),
            *("--reranker", "signals:terminates", "--criterion", "answer_correct"),
            cwd=root,
            timeout=60,
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"diagnose never ended: {exc.stderr!r}") from None
    assert done.code == 143, done.err
    assert done.err.startswith("interrupted: "), done.err
