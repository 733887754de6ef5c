"""What a module imported inside the system's function reads while it runs is said when a run
reuses its results.

A module the function imports (``import loader``), not loaded when the run is planned, counts
by its whole file, but the names its code uses were never read: a ``loader.read()`` that opens
a data file, or runs a script of the project, reused the old answers after the file or the
script changed, with no ``Not seen by the code fingerprint`` line on the run or on
``--dry-run``. Its source's names now count as a walked function's do.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import echo_project, oloproof

NOT_SEEN = "Not seen by the code fingerprint (change system.version when they change): "
HIT = "Cache: execution 1 hit/0 miss; judgment 1 hit/0 miss"

CONFIG = """
system: {name: lazy, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: echoed, field: answer, expected_field: answer}
"""

APP = """
from oloproof import system


@system(name="lazy", version="1")
def answer(case):
    import loader

    return {"answer": loader.read(case["q"])}
"""

# name: (loader.py, the file it reads or runs, its text with WORDING, what is said)
LOADERS = {
    "a data file": (
        "from pathlib import Path\n\n"
        "def read(q):\n"
        "    return q + (Path(__file__).parent / 'data.txt').read_text()\n",
        "data.txt",
        " WORDING",
        "files it opens or reads while it runs (it uses read_text)",
    ),
    "a script": (
        "import sys\nfrom pathlib import Path\nfrom subprocess import check_output\n\n"
        "def read(q):\n"
        "    script = str(Path(__file__).parent / 'w.py')\n"
        "    return q + check_output([sys.executable, script], text=True).rstrip()\n",
        "w.py",
        "print(' WORDING')\n",
        "programs it starts while it runs (it uses check_output, subprocess)",
    ),
}


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_what_a_module_imported_inside_the_function_reads_is_said(
    tmp_path: Path, name: str
) -> None:
    loader, read, text, said = LOADERS[name]
    root = echo_project(tmp_path / "lazy", APP, CONFIG, ["q1"])
    (root / "loader.py").write_text(loader)
    (root / read).write_text(text.replace("WORDING", "first"))
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.out + first.err
    (root / read).write_text(text.replace("WORDING", "second"))
    for shown in (oloproof("run", "--dry-run", cwd=root), oloproof("run", cwd=root)):
        assert shown.code == 0, shown.out + shown.err
        (line,) = [line for line in shown.lines if line.startswith(NOT_SEEN)]
        assert said in line.removeprefix(NOT_SEEN).split("; "), line
    assert HIT in shown.lines, shown.out
