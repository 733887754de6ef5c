"""The CLI as releases ran it before a case id had to show as itself (``dataset.id_problem``).

A cases file whose ids hold a control or a bidi mark is refused now, but a ledger written by
such a release, or an archive imported from one, still holds those ids: every renderer must
still show them escaped. Tests of those renderers record their runs through this.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support import Result

_EARLIER = """
from oloproof import dataset

dataset.id_problem = lambda case_id: None

from oloproof.cli.main import main

main()
"""


def oloproof_unchecked_ids(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> Result:
    """``oloproof ARGS`` in ``cwd``, reading case ids as a release before the check did."""
    proc = subprocess.run(
        [sys.executable, "-c", _EARLIER, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)
