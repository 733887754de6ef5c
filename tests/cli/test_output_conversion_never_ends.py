"""An output whose conversion to plain data never ends (an array-like object whose `tolist()`
gives back itself, a model whose `model_dump()` gives back a model) stops the run naming the
case and the object, through the real CLI.

The probe: a system answering `{"answer": Odd()}`, `Odd` having a `dtype` and a `tolist()` that
returns `self`. `oloproof run` converted it again and again until Python's recursion limit
ended the run in a traceback (`RecursionError: maximum recursion depth exceeded`). Now after
100 conversions in a row the object is refused, as an output the ledger cannot record is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, oloproof, toy_project

APP = """
from oloproof import system


class Odd:
    dtype = "float64"

    def tolist(self):
        return self

    def model_dump(self, mode):
        return Odd()


@system(name="toy", version="1")
def run(case):
    return {"answer": Odd()}
"""


@pytest.mark.parametrize(("drop", "how"), [("dtype", "model_dump()"), ("model_dump", "tolist()")])
def test_a_conversion_that_never_ends_stops_the_run_naming_the_object(
    tmp_path: Path, drop: str, how: str
) -> None:
    root = toy_project(tmp_path / "p", config=TOY_CONFIG.replace("policy: policy.yaml\n", ""))
    app = APP.replace('    dtype = "float64"\n', "") if drop == "dtype" else APP
    if drop == "model_dump":
        app = app.replace("    def model_dump(self, mode):\n        return Odd()\n", "")
    (root / "app.py").write_text(app)
    done = oloproof("run", cwd=root)
    assert "Traceback" not in done.err  # was RecursionError's traceback
    assert done.code == 2, done.err
    assert done.err.startswith("error: case 'c1': the output cannot be recorded: "), done.err
    assert (
        f"is a value of type Odd, whose {how} gave back an object to convert again 100 times "
        "in a row, never plain data"
    ) in done.err
