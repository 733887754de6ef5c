"""The defaults of a pydantic model's fields are part of the code's identity, through the real
CLI.

Pydantic keeps a field's default out of its class's attributes, where the fingerprint read a
class's values, and the class's source names only what the default is spelled as: a default
read from another module (``answer_suffix: str = SUFFIX``) could change and every answer made
under the old one was served from the execution cache.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import answered_project, oloproof

APP = """
from oloproof import system
from settings import Settings


@system(name="s", version="1")
def answer(case):
    return {"answer": case["q"] + Settings().answer_suffix}
"""

SETTINGS = """
from pydantic import BaseModel, Field
from defaults import SUFFIX, suffix


class Settings(BaseModel):
    answer_suffix: str = {field}
"""


@pytest.mark.parametrize(
    "field", ["SUFFIX", "Field(default=SUFFIX)", "Field(default_factory=suffix)"]
)
def test_editing_a_default_in_another_module_executes_again(tmp_path: Path, field: str) -> None:
    root = answered_project(tmp_path / "p", APP, cases=2)
    (root / "settings.py").write_text(SETTINGS.format(field=field))
    defaults = root / "defaults.py"
    defaults.write_text('SUFFIX = ""\n\n\ndef suffix():\n    return ""\n')
    first = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in first.lines, first.err
    defaults.write_text('SUFFIX = "!"\n\n\ndef suffix():\n    return "!"\n')

    dry = oloproof("run", "--dry-run", cwd=root)
    assert "Cases: 2 of 2 would execute; 0 reused from the execution cache" in dry.lines, dry.out
    second = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in second.lines, second.out
