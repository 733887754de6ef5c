"""What the system's modules do when they are imported is part of its code identity.

The fingerprint followed the functions a system's entry point reaches and the values they read,
never the statements a module runs at import that set state elsewhere, which is how RAG
projects pick their model and seed: ``dspy.configure(lm=dspy.LM("gpt-4o-mini"))``,
``Settings.llm = OpenAI(model=...)`` (LlamaIndex), ``os.environ["OPENAI_MODEL"] = ...`` read
by a library, ``random.seed(1)`` in a module imported only for that. Changing any of them
reused every answer made with the old model or seed, and the run said nothing. Each now executes
again; an edit an import never runs (the ``__main__`` block, a comment) still reuses.

The library is a small package in a ``site-packages`` folder on PYTHONPATH, so it is installed
code to the fingerprint, as ``dspy`` or ``llama_index`` would be. Real CLI runs in a subprocess.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.support import bundle_cases, oloproof

CONFIG = """
system: {name: configured, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""

# A library in the style of dspy and llama_index: settings held in the library, set by the
# project at import, read by the library's own code when the system calls it.
LIBRARY = """
import os

SETTINGS = {"lm": "default"}


def configure(lm):
    SETTINGS["lm"] = lm


class Settings:
    llm = "default"


class Predict:
    def __call__(self, question):
        model = os.environ.get("LIBRARY_MODEL", "-")
        return f"{question} {SETTINGS['lm']} {Settings.llm} {model}"
"""

APP = """
import os
import random

import lmlib
{imports}
from oloproof import system

{statement}


@system(name="configured", version="1")
def answer(case):
    return {{"answer": lmlib.Predict()(case["q"]) + " " + str(random.randrange(1000))}}


if __name__ == "__main__":
    print(answer({{"q": "main"}}))
"""

SEEDING = "import random\n\nrandom.seed(1)\n"

# name: (the import-time statement of the first run, the one of the second)
STATEMENTS = {
    "a library's configure call": ('lmlib.configure(lm="first")', 'lmlib.configure(lm="second")'),
    "a library's settings attribute": (
        'lmlib.Settings.llm = "first"',
        'lmlib.Settings.llm = "2nd"',
    ),
    "an environment variable a library reads": (
        'os.environ["LIBRARY_MODEL"] = "first"',
        'os.environ["LIBRARY_MODEL"] = "second"',
    ),
    "a value made before the call that uses it": (
        'lm = "-".join(["first", "mini"])\nlmlib.configure(lm=lm)',
        'lm = "-".join(["second", "mini"])\nlmlib.configure(lm=lm)',
    ),
    "a seed set by the module": ("random.seed(1)", "random.seed(2)"),
}


def _project(root: Path, statement: str, imports: str = "") -> tuple[Path, dict[str, str]]:
    root.mkdir()
    library = root / "env" / "site-packages" / "lmlib"
    library.mkdir(parents=True)
    (library / "__init__.py").write_text(LIBRARY)
    info = library.parent / "lmlib-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lmlib\nVersion: 1.0\n")
    (root / "app.py").write_text(APP.format(imports=imports, statement=statement))
    (root / "seeding.py").write_text(SEEDING)
    (root / "oloproof.yaml").write_text(CONFIG)
    case = {"id": "c1", "input": {"q": "q1"}, "expected": {"answer": "q1"}}
    (root / "cases.jsonl").write_text(json.dumps(case) + "\n")
    path = [str(library.parent), *filter(None, [os.environ.get("PYTHONPATH")])]
    return root, {"PYTHONPATH": os.pathsep.join(path)}


def _answer(root: Path, out: str) -> str:
    (case,) = bundle_cases(root, out.split()[1])
    return str(case["output"]["answer"])


@pytest.mark.parametrize("kind", sorted(STATEMENTS))
def test_a_change_to_what_a_module_does_when_imported_executes_again(
    tmp_path: Path, kind: str
) -> None:
    statement, edited = STATEMENTS[kind]
    root, env = _project(tmp_path / "p", statement)
    first = oloproof("run", cwd=root, env=env)
    assert first.code == 0, first.out + first.err
    app = root / "app.py"
    app.write_text(app.read_text().replace(statement, edited))
    planned = oloproof("run", "--dry-run", cwd=root, env=env)
    said = "  1 executions: the statements app.py runs when imported changed"
    assert any(line.startswith(said) for line in planned.lines), planned.out
    again = oloproof("run", cwd=root, env=env)
    assert again.code == 0, again.out + again.err
    assert "Cache: execution 0 hit/1 miss; judgment 0 hit/1 miss" in again.lines, again.out
    assert _answer(root, again.out) != _answer(root, first.out)


def test_a_module_imported_only_for_what_it_does_is_part_of_it(tmp_path: Path) -> None:
    root, env = _project(tmp_path / "p", "", imports="import seeding  # noqa: F401  (seeds)")
    first = oloproof("run", cwd=root, env=env)
    assert first.code == 0, first.out + first.err
    (root / "seeding.py").write_text(SEEDING.replace("seed(1)", "seed(2)"))
    again = oloproof("run", cwd=root, env=env)
    assert "Cache: execution 0 hit/1 miss; judgment 0 hit/1 miss" in again.lines, again.out
    assert _answer(root, again.out) != _answer(root, first.out)


def test_what_an_import_never_runs_keeps_the_cache(tmp_path: Path) -> None:
    root, env = _project(tmp_path / "p", 'lmlib.configure(lm="first")')
    first = oloproof("run", cwd=root, env=env)
    assert first.code == 0, first.out + first.err
    app = root / "app.py"
    edited = app.read_text().replace('{"q": "main"}', '{"q": "other"}')
    app.write_text(edited.replace("import lmlib\n", "import lmlib  # the model's library\n"))
    again = oloproof("run", cwd=root, env=env)
    assert "Cache: execution 1 hit/0 miss; judgment 1 hit/0 miss" in again.lines, again.out
