"""The parts of a fingerprint a module's import and an installed package's files add.

Which top-level statements count (those that act on something else, never definitions, imports,
plain assignments or the ``__main__`` block), how ``changes`` names them and a package
installed again with other files, and that the key stays the same from process to process.
The CLI tests (tests/cli/test_import_time_statements.py, test_installed_files.py) show what
each changes for a run.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from tests.support import printed_under_hash_seeds

from oloproof.fingerprint import changes
from oloproof.fingerprint._toplevel import top_level

QUIET = """
'''A module that only defines.'''
from __future__ import annotations

import os
from typing import TYPE_CHECKING

try:
    import orjson as json
except ImportError:
    import json

if TYPE_CHECKING:
    from collections.abc import Iterator

LIMIT: int = 3
A, B = 1, 2
__all__ = ["answer"]
__all__ += ["other"]
PROMPT = '''
Use (the) context, e.g. the passages.
'''


@staticmethod
def answer(case):
    return case


class Holder:
    value = 1


sys.path.insert(0, str(Path(__file__).parent / "src"))

if __name__ == "__main__":
    print(answer({}))
"""

# kind: (the statement, an edit of it)
ACTING = {
    "a call": ("random.seed(1)", "random.seed(2)"),
    "an attribute": ("Settings.llm = 'gpt-4o-mini'", "Settings.llm = 'gpt-4o'"),
    "an item": ("os.environ['MODEL'] = 'small'", "os.environ['MODEL'] = 'large'"),
    "an augmented attribute": ("Settings.retries += 1", "Settings.retries += 2"),
    "a del": ("del os.environ['MODEL']", "del os.environ['OTHER']"),
    "a loop": (
        "for key in ('a', 'b'):\n    os.environ[key] = 'x'",
        "for key in ('a', 'b'):\n    os.environ[key] = 'y'",
    ),
    "a with": (
        "with open('x') as f:\n    CONFIG.update(f)",
        "with open('y') as f:\n    CONFIG.update(f)",
    ),
    "a guarded call": (
        "if os.environ.get('SEED'):\n    random.seed(int(os.environ['SEED']))",
        "if os.environ.get('SEED'):\n    random.seed(int(os.environ['SEED']) + 1)",
    ),
}


def test_a_module_that_only_defines_has_nothing_to_count(tmp_path: Path) -> None:
    path = tmp_path / "quiet.py"
    path.write_text(QUIET)
    assert top_level(str(path)) is None


@pytest.mark.parametrize("kind", sorted(ACTING))
def test_a_statement_that_acts_counts_by_its_syntax(tmp_path: Path, kind: str) -> None:
    statement, edit = ACTING[kind]
    versions = {
        "acting.py": QUIET + "\n" + statement + "\n",
        "moved.py": "# a comment moves every line below it\n\n" + QUIET + "\n" + statement + "\n",
        "edited.py": QUIET + "\n" + edit + "\n",
    }
    found = {}
    for name, text in versions.items():
        (tmp_path / name).write_text(text)
        found[name] = top_level(str(tmp_path / name))
    assert found["acting.py"] is not None
    assert found["moved.py"] == found["acting.py"]  # line numbers are not part of it
    assert found["edited.py"] != found["acting.py"]


def test_the_assignment_of_a_name_it_uses_counts_with_it(tmp_path: Path) -> None:
    path = tmp_path / "app.py"
    path.write_text('lm = make("gpt-4o-mini")\nUNUSED = make("x")\nconfigure(lm=lm)\n')
    found = top_level(str(path))
    assert found is not None
    assert "gpt-4o-mini" in found.dump and "'x'" not in found.dump
    assert {"lm", "configure", "make"} <= set(found.names)


def test_changes_name_what_a_module_does_when_imported_and_a_reinstalled_package() -> None:
    before = {
        "key": "1",
        "entry": "app:answer",
        "code": {"app:answer": ["f", "app.py", "a"], "app:<top level>": ["t", "app.py", "b"]},
        "dists": {"ragcore": "1.0", "numpy": "2.0"},
        "dist_files": {"ragcore": "f1", "numpy": "n1"},
    }
    after = {
        **before,
        "key": "2",
        "code": {"app:answer": ["f", "app.py", "a"], "app:<top level>": ["t", "app.py", "B"]},
        "dist_files": {"ragcore": "f2", "numpy": "n1"},
    }
    assert changes(before, after) == [
        "the statements app.py runs when imported changed",
        "installed ragcore 1.0 changed (installed again with other files)",
    ]
    # A record made without the files of its packages (an earlier release) names no package.
    older = {k: v for k, v in before.items() if k != "dist_files"}
    assert changes(older, {**older, "key": "3"}) == ["the code changed"]


APP = """
import random
import seeding

import handlers

STRATEGY = "short"
lm = "-".join(["gpt", "4o"])
random.seed(len(lm))


def answer(question):
    return getattr(handlers, STRATEGY)(question) + str(random.randrange(10))
"""


def test_the_key_does_not_depend_on_the_process(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "app.py").write_text(APP)
    (project / "seeding.py").write_text("import random\n\nrandom.seed(3)\n")
    (project / "handlers.py").write_text(
        textwrap.dedent("""
        def short(q):
            return (lambda: q)()


        def long(q):
            return (lambda: q * 2)()
        """)
    )
    script = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); import app; "
        "from oloproof.fingerprint import of_callable; "
        "fp = of_callable(app.answer, base_dir=Path(sys.argv[1])); "
        "print(fp.key, sorted(fp.code))"
    )
    found = printed_under_hash_seeds(script, str(project))
    assert len(found) == 1, found
    (line,) = found
    assert "'app:<top level>'" in line and "'seeding:<top level>'" in line
    assert "'handlers:long'" in line  # picked by name: every function of the module counts
