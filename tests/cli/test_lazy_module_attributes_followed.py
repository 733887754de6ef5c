"""An edit to what a module's ``__getattr__`` hands out is a change.

A module (or a package's ``__init__``) that makes some of its names only when they are asked
for, through a module-level ``__getattr__`` (PEP 562: ``return _clean``, or a submodule
imported by ``importlib.import_module(".impl", __name__)``), was fingerprinted without that
function: ``helper.clean`` is not a name the module holds, so nothing was followed, and an edit
to the code it hands out reused every execution made with the old code (``execution 1 hit``).
So did a package imported inside the function, counted by its file, whose
``importlib.import_module`` calls were never read. The run now executes again and says why.
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
CLEAN = "def clean(q):\n    return q + ' WORDING'\n"
IMPORTING = (
    "import importlib\n\n"
    "def __getattr__(name):\n"
    "    return getattr(importlib.import_module('.impl', __name__), name)\n"
)

# name: (files, the file that holds CLEAN, the reason the dry run gives)
PROJECTS = {
    "a module's __getattr__": (
        {
            "app.py": HEAD
            + "import helper\n\n"
            + ENTRY
            + "    return {'answer': helper.clean(case['q'])}\n",
            "helper.py": "def __getattr__(name):\n"
            "    if name == 'clean':\n        return _clean\n    raise AttributeError(name)\n",
        },
        "helper.py",
        "code of _clean() in helper.py changed",
    ),
    "a package's __getattr__ importing a submodule": (
        {
            "app.py": HEAD
            + "import pkg\n\n"
            + ENTRY
            + "    return {'answer': pkg.clean(case['q'])}\n",
            "pkg/__init__.py": IMPORTING,
        },
        "pkg/impl.py",
        "code of module pkg.impl (pkg/impl.py) changed",
    ),
    "the package imported inside the function": (
        {
            "app.py": HEAD
            + ENTRY
            + "    from pkg import clean\n    return {'answer': clean(case['q'])}\n",
            "pkg/__init__.py": IMPORTING,
        },
        "pkg/impl.py",
        "code of module pkg.impl (pkg/impl.py) changed",
    ),
}


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_an_edit_to_what_a_module_s_getattr_hands_out_executes_again(
    tmp_path: Path, name: str
) -> None:
    files, edited, reason = PROJECTS[name]
    root = echo_project(tmp_path / "lazy", files["app.py"], CONFIG, ["q1"])
    # helper.py holds what its __getattr__ hands out; a package's __getattr__ imports impl.py.
    clean = CLEAN.replace("clean", "_clean") if edited == "helper.py" else CLEAN
    files = {**files, edited: files.get(edited, "") + clean.replace("WORDING", "first")}
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.out + first.err
    (root / edited).write_text(files[edited].replace("first", "second"))
    planned = oloproof("run", "--dry-run", cwd=root)
    assert "Cases: 1 of 1 would execute; 0 reused from the execution cache" in planned.lines
    assert reason in planned.out, planned.out
    again = oloproof("run", cwd=root)
    assert again.code == 0, again.out + again.err
    assert "Cache: execution 0 hit/1 miss; judgment 0 hit/1 miss" in again.lines, again.out
    (case,) = bundle_cases(root, again.out.split()[1])
    assert case["output"]["answer"] == "q1 second"
