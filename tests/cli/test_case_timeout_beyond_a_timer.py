"""A ``timeout_s`` longer than a case's deadline timer can be set to is refused at its line,
through the real CLI, before anything is recorded.

Before the fix ``timeout_s: 1.0e+10`` (or ``1.0e+300``) passed the config's checks, the run
was recorded as started, and its first case ended it in a traceback (``OverflowError:
timestamp out of range for platform time_t``, exit 1): the kernel timer that holds a case's
deadline cannot be set past about 9.2e9 seconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, oloproof, toy_project


@pytest.mark.parametrize("seconds", ["1.0e+10", "1.0e+300"])
def test_a_timeout_no_timer_can_hold_is_refused(tmp_path: Path, seconds: str) -> None:
    root = toy_project(tmp_path, config=TOY_CONFIG + f"timeout_s: {seconds}\n")
    result = oloproof("run", cwd=root)
    assert (result.code, result.out, result.err) == (
        2,
        "",
        f"error: {root}/oloproof.yaml, line 9: timeout_s: Input should be less than or equal "
        "to 1000000000\n",
    )
    assert not (root / ".oloproof").exists()


def test_the_longest_timeout_runs(tmp_path: Path) -> None:
    root = toy_project(tmp_path, config=TOY_CONFIG + "timeout_s: 1000000000\n", cases=30)
    result = oloproof("run", cwd=root)
    assert result.code == 0, result.err
