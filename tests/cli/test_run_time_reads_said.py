"""What a system reads while it runs, where no fingerprint can follow, is said when a run reuses
its results.

The names a system's code uses told of files and environment variables it reads (``open``,
``read_text``, ``os.environ``), but not of the ways RAG projects read most of their data: an
index loaded with ``np.load``, a SQLite database, a folder of documents listed with ``glob`` or
``os.walk``, a prompt shipped in a package and read with ``pkgutil.get_data``, a file opened
with ``io.FileIO``. Nor of the clock (a prompt that gives today's date) or the process's shared
random generator (``random.random()``, ``numpy.random.randint`` seeded at import). A second run
after the data changed reused the old answers and said nothing of any of it; a system holding
a numpy random function (``from numpy.random import randint``) could not be fingerprinted at
all, so nothing it produced was ever reused. Each now reuses and says what it cannot see.

Real CLI runs in a subprocess: run, change what the system reads, run again.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support import bundle_cases, oloproof

NOT_SEEN = "Not seen by the code fingerprint (change system.version when they change): "
HIT = "Cache: execution 1 hit/0 miss; judgment 1 hit/0 miss"

CONFIG = """
system: {name: reads, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""

HEAD = """
import glob
import io
import os
import pkgutil
import random
import sqlite3
import time
from datetime import datetime
from pathlib import Path

import numpy as np

from oloproof import system

HERE = Path(__file__).parent
"""


def _save_index(value: int) -> Callable[[Path], None]:
    def save(root: Path) -> None:
        import numpy as np

        np.save(root / "index.npy", np.array([value]))

    return save


def _store(value: str) -> Callable[[Path], None]:
    def store(root: Path) -> None:
        with sqlite3.connect(root / "kb.db") as db:
            db.execute("create table if not exists kb (text)")
            db.execute("delete from kb")
            db.execute("insert into kb values (?)", (value,))
        db.close()

    return store


def _write(name: str, text: str) -> Callable[[Path], None]:
    def write(root: Path) -> None:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)

    return write


def _nothing(root: Path) -> None:
    pass


# name: (the body of answer(case), what is there before the first run, the change, what is said)
READS = {
    "np.load": (
        'return {"answer": str(int(np.load(HERE / "index.npy")[0]))}',
        _save_index(1),
        _save_index(2),
        "files it opens or reads while it runs (it uses load)",
    ),
    "sqlite3.connect": (
        'db = sqlite3.connect(HERE / "kb.db")\n'
        '    (text,) = db.execute("select text from kb").fetchone()\n'
        "    db.close()\n"
        '    return {"answer": text}',
        _store("first"),
        _store("second"),
        "databases it connects to while it runs (it uses connect)",
    ),
    "glob": (
        'return {"answer": ",".join(sorted(p.name for p in (HERE / "docs").glob("*.txt")))}',
        _write("docs/a.txt", "a"),
        _write("docs/b.txt", "b"),
        "files it opens or reads while it runs (it uses glob)",
    ),
    "os.walk": (
        'return {"answer": ",".join(sorted(n for _, _, f in os.walk(HERE / "docs") for n in f))}',
        _write("docs/a.txt", "a"),
        _write("docs/b.txt", "b"),
        "files it opens or reads while it runs (it uses walk)",
    ),
    "pkgutil.get_data": (
        'return {"answer": pkgutil.get_data("prompts", "answer.txt").decode()}',
        _write("prompts/answer.txt", "first"),
        _write("prompts/answer.txt", "second"),
        "files it opens or reads while it runs (it uses get_data)",
    ),
    "io.FileIO": (
        'with io.FileIO(str(HERE / "prompt.txt")) as f:\n'
        '        return {"answer": f.readall().decode()}',
        _write("prompt.txt", "first"),
        _write("prompt.txt", "second"),
        "files it opens or reads while it runs (it uses FileIO)",
    ),
    "datetime.now": (
        'return {"answer": datetime.now().isoformat()}',
        _nothing,
        _nothing,
        "the clock it reads while it runs (it uses now)",
    ),
    "time.time": (
        'return {"answer": str(time.time())}',
        _nothing,
        _nothing,
        "the clock it reads while it runs (it uses time.time)",
    ),
    "random.random": (
        'return {"answer": str(random.random())}',
        _nothing,
        _nothing,
        "random.random: a random.Random object",
    ),
}


def _project(root: Path, body: str, before: Callable[[Path], None], head: str = HEAD) -> Path:
    root.mkdir()
    (root / "prompts").mkdir()
    (root / "prompts" / "__init__.py").write_text("")
    app = f'{head}\n\n@system(name="reads", version="1")\ndef answer(case):\n    {body}\n'
    (root / "app.py").write_text(app)
    (root / "oloproof.yaml").write_text(CONFIG)
    case = {"id": "c1", "input": {"q": "q1"}, "expected": {"answer": "q1"}}
    (root / "cases.jsonl").write_text(json.dumps(case) + "\n")
    before(root)
    return root


@pytest.mark.parametrize("use", sorted(READS))
def test_a_run_that_reuses_says_what_the_code_reads_while_it_runs(tmp_path: Path, use: str) -> None:
    body, before, change, said = READS[use]
    root = _project(tmp_path / "p", body, before)
    first = oloproof("run", cwd=root)
    assert first.code in (0, 1), first.out + first.err
    change(root)
    again = oloproof("run", cwd=root)
    assert again.code in (0, 1), again.out + again.err
    assert HIT in again.lines, again.out
    (line,) = [line for line in again.lines if line.startswith(NOT_SEEN)]
    assert said in line.removeprefix(NOT_SEEN).split("; "), line


# A seeded ``random.Random`` of the system's own is not the shared generator: nothing is said of
# ``random.random``, though the module is imported and the name is used (as the method's).
def test_a_generator_of_the_system_s_own_is_not_taken_for_the_shared_one(tmp_path: Path) -> None:
    body = 'return {"answer": str(random.Random(7).random())}'
    root = _project(tmp_path / "p", body, _nothing)
    assert oloproof("run", cwd=root).code in (0, 1)
    again = oloproof("run", cwd=root)
    assert HIT in again.lines, again.out
    assert not any(line.startswith(NOT_SEEN) for line in again.lines), again.out


# The shared numpy generator, seeded when the module is imported, through a function of numpy's
# compiled by Cython: the fingerprint failed on it ("could not be fingerprinted"), and nothing
# the system produced was ever reused.
NUMPY_HEAD = """
from numpy.random import randint, seed

from oloproof import system

seed(SEED)
"""


def test_a_numpy_random_function_is_fingerprinted_and_its_generator_said(tmp_path: Path) -> None:
    body = 'return {"answer": case["q"] + " " + str(randint(1000))}'
    root = _project(tmp_path / "p", body, _nothing, head=NUMPY_HEAD.replace("SEED", "1"))
    first = oloproof("run", cwd=root)
    assert first.code in (0, 1), first.out + first.err
    again = oloproof("run", cwd=root)
    assert HIT in again.lines, again.out
    said = f"{NOT_SEEN}app.randint: a numpy.random.mtrand.RandomState object"
    assert said in again.lines, again.out
    # The seed is set by a statement the module runs when imported: a new seed executes again.
    app = root / "app.py"
    app.write_text(app.read_text().replace("seed(1)", "seed(2)"))
    seeded = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/1 miss; judgment 0 hit/1 miss" in seeded.lines, seeded.out
    (case,) = bundle_cases(root, seeded.out.split()[1])
    (old,) = bundle_cases(root, first.out.split()[1])
    assert case["output"] != old["output"]
