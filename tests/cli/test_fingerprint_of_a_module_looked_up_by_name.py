"""Code that reaches a project module's function through ``sys.modules``, the module's
``__dict__`` or ``inspect.getmembers`` is seen by the code fingerprint, through the real CLI.

The walk took these for what they are not: ``sys.modules["plugin_a"].f(q)``, ``plugin_a.
__dict__[NAME](q)`` and ``dict(inspect.getmembers(plugin_a))["f"](q)`` reached no code of
``plugin_a``, so an edit to ``f`` reused the old answers (``Cache: execution 1 hit/0 miss``)
with no ``Not seen by the code fingerprint`` line; and ``from sys import modules`` read the
whole of ``sys.modules`` as data, which stopped the walk (``the code could not be fingerprinted
(RuntimeError: dictionary changed size during iteration)``), so nothing was ever reused.

Each is now read as a name looked up by a string is (``getattr(plugin_a, name)``): every name
of the module it holds counts, and through ``sys.modules``, every project module loaded.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import answered_project, oloproof

APP = """
{imports}
from oloproof import system

NAME = "f"


@system(name="s", version="1")
def answer(case):
    return {{"answer": {call}(case["q"])}}
"""

LOOKUPS = {
    "sys.modules": ("import sys\nimport plugin_a", 'sys.modules["plugin_a"].f'),
    "modules imported from sys": (
        "from sys import modules\nimport plugin_a",
        'modules["plugin_a"].f',
    ),
    "the module's __dict__": ("import plugin_a", "plugin_a.__dict__[NAME]"),
    "inspect.getmembers": (
        "import inspect\nimport plugin_a",
        "dict(inspect.getmembers(plugin_a))[NAME]",
    ),
}


@pytest.mark.parametrize("lookup", list(LOOKUPS))
def test_an_edit_to_the_function_looked_up_executes_again(tmp_path: Path, lookup: str) -> None:
    imports, call = LOOKUPS[lookup]
    root = answered_project(tmp_path / "p", APP.format(imports=imports, call=call), cases=2)
    plugin = root / "plugin_a.py"
    plugin.write_text("def f(q):\n    return q\n")
    first = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in first.lines, first.err
    again = oloproof("run", cwd=root)
    assert "Cache: execution 2 hit/0 miss; judgment 2 hit/0 miss" in again.lines, again.out
    plugin.write_text("def f(q):\n    return q + '!'\n")

    dry = oloproof("run", "--dry-run", cwd=root)
    assert "  2 executions: code of f() in plugin_a.py changed" in dry.lines, dry.out
    rerun = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in rerun.lines, rerun.out
