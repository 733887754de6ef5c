"""`evaluate()` gives the program's own signal handlers back when it returns, SIGTERM's too.

The probe: a program with handlers of its own for SIGINT and SIGTERM called `evaluate()`;
afterwards SIGINT's was its own again but SIGTERM's was the default, so a later SIGTERM ended
the program without its handler running (the run's event loop, removing its handler, sets the
default, and only SIGINT's handler was put back).
"""

from __future__ import annotations

import signal
from pathlib import Path

from tests.support import toy_project

from oloproof import evaluate


def test_both_handlers_are_the_programs_again(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=3)

    def mine(signum: int, frame: object) -> None:
        raise AssertionError("not expected")

    before = {signum: signal.signal(signum, mine) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        report = evaluate(root / "oloproof.yaml")
        assert report.execution_state == "COMPLETE"
        assert signal.getsignal(signal.SIGINT) is mine
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
