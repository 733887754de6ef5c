"""An edit to a module that the system's code reaches only through another module's imports is
a change.

A module imported inside the system's function, and not loaded when the run is planned,
counted by its own file only: an edit to a module *it* imports (``from deep import f``) reused
every execution made with the old code, and the second run reported the old answers as the
new code's (``execution 1 hit``). So did a module held as data (``HANDLERS = {"a": mod_a}``),
counted by its file without the modules whose functions it calls. The run now executes again
and says why.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import bundle_cases, echo_project, oloproof

CONFIG = """
system: {name: lazy, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: echoed, field: answer, expected_field: answer}
"""

HEAD = "from oloproof import system\n\n"
ENTRY = '@system(name="lazy", version="1")\ndef answer(case):\n'
DEEP = "def f(q):\n    return q + ' WORDING'\n"

# name: (files, the file that holds DEEP, the reason the dry run gives)
PROJECTS = {
    "imported inside the function": (
        {
            "app.py": HEAD
            + ENTRY
            + "    from lazy import go\n    return {'answer': go(case['q'])}\n",
            "lazy.py": "import deep\n\ndef go(q):\n    return deep.f(q)\n",
        },
        "deep.py",
        "code of module deep (deep.py) changed",
    ),
    "a package's module imported inside the function": (
        {
            "app.py": HEAD
            + ENTRY
            + "    import pkg.mod\n    return {'answer': pkg.mod.go(case['q'])}\n",
            "pkg/__init__.py": "",
            "pkg/mod.py": "from .deep import f\n\ndef go(q):\n    return f(q)\n",
        },
        "pkg/deep.py",
        "code of module pkg.deep (pkg/deep.py) changed",
    ),
    "imported inside the function, its import loaded already": (
        {
            "app.py": HEAD
            + "import deep  # noqa: F401\n\n"
            + ENTRY
            + "    import lazy\n    return {'answer': lazy.go(case['q'])}\n",
            "lazy.py": "import deep\n\ndef go(q):\n    return deep.f(q)\n",
        },
        "deep.py",
        "code of f() in deep.py changed",
    ),
    "a module held as data": (
        {
            "app.py": HEAD
            + "import mod_a\n\nHANDLERS = {'a': mod_a}\n\n"
            + ENTRY
            + "    return {'answer': HANDLERS['a'].go(case['q'])}\n",
            "mod_a.py": "from deep import f\n\ndef go(q):\n    return f(q)\n",
        },
        "deep.py",
        "code of f() in deep.py changed",
    ),
}


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_an_edit_to_a_module_imported_by_what_the_code_imports_executes_again(
    tmp_path: Path, name: str
) -> None:
    files, deep, reason = PROJECTS[name]
    root = echo_project(tmp_path / "lazy", files["app.py"], CONFIG, ["q1"])
    for path, text in {**files, deep: DEEP.replace("WORDING", "first")}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.out + first.err
    (root / deep).write_text(DEEP.replace("WORDING", "second"))
    planned = oloproof("run", "--dry-run", cwd=root)
    assert "Cases: 1 of 1 would execute; 0 reused from the execution cache" in planned.lines
    assert reason in planned.out, planned.out
    again = oloproof("run", cwd=root)
    assert again.code == 0, again.out + again.err
    assert "Cache: execution 0 hit/1 miss; judgment 0 hit/1 miss" in again.lines, again.out
    (case,) = bundle_cases(root, again.out.split()[1])
    assert case["output"]["answer"] == "q1 second"
