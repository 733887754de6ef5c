"""The module-level names a class's field annotations use (an alias ``Mode = Literal[...]``, a
class in ``list[Doc]``, a forward reference ``"Mode"``, a name under ``from __future__ import
annotations``) are part of the code's identity, through the real CLI.

A pydantic model validates against its annotations, but a class counted by its source, its
attributes and its fields' defaults: editing ``Mode = Literal["a", "b"]`` to ``Literal["a",
"c"]`` changed what ``Settings`` accepts and the run served every old answer from the execution
cache (execution 2 hit/0 miss), its dry run saying 0 of 2 would execute and nothing unseen.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import answered_project, oloproof

PYDANTIC = """
from typing import Literal
from pydantic import BaseModel
from oloproof import system

Mode = Literal["a", "b"]


class Settings(BaseModel):
    mode: {annotation} = "a"


SETTINGS = Settings()


@system(name="s", version="1")
def answer(case):
    return {{"answer": case["q"] + SETTINGS.mode[:0]}}
"""

DATACLASS = """
from __future__ import annotations

import dataclasses
from typing import Literal

from oloproof import system

Mode = Literal["a", "b"]


@dataclasses.dataclass
class Settings:
    mode: Mode = "a"


SETTINGS = Settings()


@system(name="s", version="1")
def answer(case):
    return {"answer": case["q"] + SETTINGS.mode[:0]}
"""

PROJECTS = {
    "pydantic alias": PYDANTIC.format(annotation="Mode"),
    "pydantic forward reference": PYDANTIC.format(annotation='"Mode"'),
    "pydantic Optional[alias]": PYDANTIC.format(annotation="Optional[Mode]").replace(
        "import Literal", "import Literal, Optional"
    ),
    "dataclass, postponed annotations": DATACLASS,
}

DOCS = """
from pydantic import BaseModel
from oloproof import system


class Doc(BaseModel):
    text: str


class Answer(BaseModel):
    docs: list[Doc] = []


@system(name="s", version="1")
def answer(case):
    return {"answer": case["q"] + str(Answer.model_validate({"docs": []}).docs)[:0]}
"""


def _first_run(root: Path) -> None:
    first = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in first.lines, first.err
    again = oloproof("run", cwd=root)
    assert "Cache: execution 2 hit/0 miss; judgment 2 hit/0 miss" in again.lines, again.out
    assert "Not seen" not in again.out, again.out


def _edit(path: Path, before: str, after: str) -> None:
    text = path.read_text()
    assert text.count(before) == 1, text
    path.write_text(text.replace(before, after))


@pytest.mark.parametrize("project", list(PROJECTS))
def test_editing_an_alias_a_field_is_annotated_with_executes_again(
    tmp_path: Path, project: str
) -> None:
    root = answered_project(tmp_path / "p", PROJECTS[project], cases=2)
    _first_run(root)
    _edit(root / "app.py", 'Mode = Literal["a", "b"]', 'Mode = Literal["a", "c"]')

    dry = oloproof("run", "--dry-run", cwd=root)
    assert "Cases: 2 of 2 would execute; 0 reused from the execution cache" in dry.lines, dry.out
    assert "  2 executions: constant Mode in app.py changed" in dry.lines, dry.out
    second = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in second.lines, second.out


def test_an_alias_imported_from_another_module_counts(tmp_path: Path) -> None:
    app = PYDANTIC.format(annotation="Mode").replace(
        'Mode = Literal["a", "b"]', "from kinds import Mode"
    )
    root = answered_project(tmp_path / "p", app, cases=2)
    (root / "kinds.py").write_text('from typing import Literal\n\nMode = Literal["a", "b"]\n')
    _first_run(root)
    _edit(root / "kinds.py", '"b"', '"c"')

    second = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in second.lines, second.out


def test_editing_a_class_named_in_an_annotation_executes_again(tmp_path: Path) -> None:
    root = answered_project(tmp_path / "p", DOCS, cases=2)
    _first_run(root)
    _edit(root / "app.py", "    text: str", "    text: str\n    score: float")

    dry = oloproof("run", "--dry-run", cwd=root)
    assert "  2 executions: code of class Doc in app.py changed" in dry.lines, dry.out


def test_a_literal_value_is_not_a_name(tmp_path: Path) -> None:
    """``Literal["model"]`` holds text: a module-level ``model`` edited changes nothing the
    class does, and the run still reuses its results."""
    app = PYDANTIC.format(annotation='Literal["a", "model"]').replace(
        'Mode = Literal["a", "b"]', 'model = "small"'
    )
    root = answered_project(tmp_path / "p", app, cases=2)
    _first_run(root)
    _edit(root / "app.py", 'model = "small"', 'model = "large"')

    second = oloproof("run", cwd=root)
    assert "Cache: execution 2 hit/0 miss; judgment 2 hit/0 miss" in second.lines, second.out


ANNOTATED = """
from typing import Annotated
from pydantic import AfterValidator, BaseModel, Field
from oloproof import system

LIMIT = 10


def check(value):
    return value


class Settings(BaseModel):
    n: Annotated[int, Field(le=LIMIT), AfterValidator(check)] = 1


@system(name="s", version="1")
def answer(case):
    return {"answer": case["q"] + str(Settings.model_validate({"n": 2}).n)[:0]}
"""


@pytest.mark.parametrize(
    ("before", "after", "reason"),
    [
        ("LIMIT = 10", "LIMIT = 1", "constant LIMIT in app.py changed"),
        ("    return value", "    return value + 1", "code of check() in app.py changed"),
    ],
)
def test_editing_what_annotated_validates_with_executes_again(
    tmp_path: Path, before: str, after: str, reason: str
) -> None:
    """Pydantic keeps ``Annotated``'s constraints and validators in its fields' metadata, which
    the fingerprint never read: ``Field(le=LIMIT)`` and ``AfterValidator(check)`` edited reused
    every answer."""
    root = answered_project(tmp_path / "p", ANNOTATED, cases=2)
    _first_run(root)
    _edit(root / "app.py", before, after)

    dry = oloproof("run", "--dry-run", cwd=root)
    assert f"  2 executions: {reason}" in dry.lines, dry.out
