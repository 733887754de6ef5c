"""The CLI as releases ran it before a case id had to show as itself (``dataset.id_problem``).

A cases file whose ids hold a control or a bidi mark is refused now, but a ledger written by
such a release, or an archive imported from one, still holds those ids: every renderer must
still show them escaped. Tests of those renderers record their runs through this.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import Result, oloproof

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
    return oloproof(*args, cwd=cwd, env=env, timeout=timeout, command=("-c", _EARLIER))
