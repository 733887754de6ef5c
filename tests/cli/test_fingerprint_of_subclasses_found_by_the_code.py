"""Classes the code finds through ``Base.__subclasses__()`` are seen by the code fingerprint,
through the real CLI.

A plugin pattern: ``impls.py`` defines ``class Upper(Base)``, the system imports it for that
alone and calls ``for cls in Base.__subclasses__(): cls().go(q)``. The walk reached ``Base``
and nothing below it (a class definition is no statement run at import it reads), so an edit to
``Upper.go`` reused the old answers (``Cache: execution 1 hit/0 miss``) with no ``Not seen by
the code fingerprint`` line. Once the code uses ``__subclasses__``, every subclass of a class
of the project it reaches now counts as a class it uses.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import answered_project, oloproof

APP = """
import impls
from base import Base
from oloproof import system


@system(name="s", version="1")
def answer(case):
    return {"answer": case["q"] + "".join(cls().go() for cls in Base.__subclasses__())}
"""


def test_an_edit_to_a_subclass_executes_again(tmp_path: Path) -> None:
    root = answered_project(tmp_path / "p", APP, cases=2)
    (root / "base.py").write_text("class Base:\n    def go(self):\n        return ''\n")
    impls = root / "impls.py"
    impls.write_text(
        "from base import Base\n\n\nclass Upper(Base):\n    def go(self):\n        return ''\n"
    )
    first = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in first.lines, first.err
    again = oloproof("run", cwd=root)
    assert "Cache: execution 2 hit/0 miss; judgment 2 hit/0 miss" in again.lines, again.out
    impls.write_text(impls.read_text().replace("return ''", "return '!'"))

    dry = oloproof("run", "--dry-run", cwd=root)
    assert "  2 executions: code of Upper.go() in impls.py changed" in dry.lines, dry.out
    rerun = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in rerun.lines, rerun.out
