"""What a system reads while it runs through a library function imported under another name is
said when a run reuses its results.

The fingerprint tells what the code reads by the names it uses (``np.load``, ``os.getenv``):
``from numpy import load as np_load`` or ``from os import getenv as env`` hid them, and after
the index file or the variable changed the second run reused the old answers with no ``Not
seen by the code fingerprint`` line. A library function or class the code reads by another
name now counts by the name it was defined with too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support import echo_project, oloproof

NOT_SEEN = "Not seen by the code fingerprint (change system.version when they change): "
HIT = "Cache: execution 1 hit/0 miss; judgment 1 hit/0 miss"

CONFIG = """
system: {name: aliased, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: echoed, field: answer, expected_field: answer}
"""

APP = """
from pathlib import Path

{imports}

from oloproof import system

HERE = Path(__file__).parent


@system(name="aliased", version="1")
def answer(case):
    return {{"answer": case["q"] + {reads}}}
"""


def _save(value: int) -> Callable[[Path], dict[str, str]]:
    def save(root: Path) -> dict[str, str]:
        import numpy as np

        np.save(root / "index.npy", np.array([value]))
        return {}

    return save


def _variable(value: str) -> Callable[[Path], dict[str, str]]:
    return lambda root: {"SUFFIX": value}


# name: (imports, the expression, what is there before the first run, the change, what is said)
ALIASES = {
    "numpy.load": (
        "from numpy import load as np_load",
        'str(int(np_load(HERE / "index.npy")[0]))',
        _save(1),
        _save(2),
        "files it opens or reads while it runs (it uses load)",
    ),
    "os.getenv": (
        "from os import getenv as env",
        'env("SUFFIX", "")',
        _variable("first"),
        _variable("second"),
        "environment variables it reads while it runs (it uses getenv)",
    ),
}


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_a_read_through_an_aliased_library_function_is_said(tmp_path: Path, name: str) -> None:
    imports, reads, before, change, said = ALIASES[name]
    app = APP.format(imports=imports, reads=reads)
    root = echo_project(tmp_path / "aliased", app, CONFIG, ["q1"])
    first = oloproof("run", cwd=root, env=before(root))
    assert first.code == 0, first.out + first.err
    env = change(root)
    for shown in (
        oloproof("run", "--dry-run", cwd=root, env=env),
        oloproof("run", cwd=root, env=env),
    ):
        assert shown.code == 0, shown.out + shown.err
        (line,) = [line for line in shown.lines if line.startswith(NOT_SEEN)]
        assert said in line.removeprefix(NOT_SEEN).split("; "), line
    assert HIT in shown.lines, shown.out
