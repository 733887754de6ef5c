"""A ``system.callable`` naming a function its module does not hold suggests the closest name
there, through the real CLI.

The probe: ``callable: app:rnu`` for ``app:run`` was refused (exit 2) as ``module 'app' has
no 'rnu'``, leaving the reader to find the typo, where a misspelt key of the same file is
answered with ``did you mean``. The module's public names are now offered the same way; a name
like none of them gets no suggestion, and nothing is written in either case.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, oloproof, toy_project


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("app:rnu", "module 'app' has no 'rnu'; did you mean 'run'?"),
        ("app:elsewhere", "module 'app' has no 'elsewhere'"),
    ],
)
def test_the_closest_name_is_offered(tmp_path: Path, written: str, said: str) -> None:
    root = toy_project(tmp_path / "p", config=TOY_CONFIG.replace("app:run", written))
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    line = TOY_CONFIG.splitlines().index("  callable: app:run") + 1
    assert done.err == f"error: {root / 'oloproof.yaml'}, line {line}: system.callable: {said}\n"
    assert not (root / ".oloproof").exists()
