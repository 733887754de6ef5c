"""An output that is a dict of a class of the project's own whose `items()` fails (or gives no
pairs) stops the run naming the case, as any other mapping's does, through the real CLI.

The probe: a system returning `Lazy(answer="x")`, a dict subclass whose `items()` raises.
`oloproof run` ended in Python's traceback (`RuntimeError: items boom`, exit 1, as if a rule
had failed), where a mapping that is not a dict gets one sentence naming the case and exit 2:
a dict's items were read through its own `items()` outside the reader that catches user code.
Now a dict's subclass is read as other mappings are.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, oloproof, toy_project

APP = """
from oloproof import system


class Lazy(dict):
    def items(self):
        ITEMS


@system(name="toy", version="1")
def run(case):
    return Lazy(answer=case["q"])
"""


@pytest.mark.parametrize(
    ("items", "why"),
    [
        ('raise RuntimeError("items boom")', "RuntimeError: items boom"),
        ("return [1, 2]", "TypeError: cannot convert dictionary update sequence element #0 "),
    ],
    ids=["raises", "no-pairs"],
)
def test_a_dict_whose_items_fail_stops_the_run_naming_the_case(
    tmp_path: Path, items: str, why: str
) -> None:
    root = toy_project(tmp_path / "p", config=TOY_CONFIG.replace("policy: policy.yaml\n", ""))
    (root / "app.py").write_text(APP.replace("ITEMS", items))
    done = oloproof("run", cwd=root)
    assert "Traceback" not in done.err  # was Python's traceback, exit 1
    assert done.code == 2, done.err
    assert done.err.startswith(
        "error: case 'c1': the output cannot be recorded: output is a value of type Lazy, "
        f"whose items could not be read: {why}"
    ), done.err
