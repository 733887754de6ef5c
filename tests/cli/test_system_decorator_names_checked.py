"""The name, version and records of ``@system`` and ``@rag_system`` are checked as
oloproof.yaml's are, through the real CLI.

The probes: ``@system(name="toy", version=object())`` stopped ``oloproof run`` with ``error:
cannot encode a value of type object: allowed are None, bool, …``, naming neither the decorator
nor the setting (and ``oloproof.evaluate`` raised the ledger's ``CodecError``, no
``OloproofError``); ``version=1.10`` was taken and recorded in the system's identity as the
number 1.1; ``records="retrieval/v1"`` was read one character a kind (``unknown artifact kind
'r'``). Each is now refused at the import of the system's module, naming the decorator and the
setting, exit 2, nothing written.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import TOY_APP, oloproof, toy_project

RAG_APP = """
from oloproof import Passage, Retrieval, rag_system

@rag_system(name="rag", {settings}, depth=2, top_k=1)
class Rag:
    def retrieve(self, input, depth):
        return Retrieval(candidates=(Passage(doc_id="d1", text="x"),))

    def generate(self, input, context):
        return {{"answer": "x"}}
"""

RAG_CONFIG = """\
system: {name: rag, version: "1", rag: {object: "app:Rag"}}
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
policy: policy.yaml
"""


@pytest.mark.parametrize(
    ("declared", "said"),
    [
        ('name=None, version="1"', "@system(name=None): name must be text (a str, not empty)"),
        (
            'name="toy", version=1.10',
            "@system(version=1.1): version must be text (a str, not empty)",
        ),
        ('name="toy", version=""', "@system(version=''): version must be text (a str, not empty)"),
        (
            'name="toy", version="1", records="retrieval/v1"',
            "@system(records='retrieval/v1'): records is a list of artifact kinds, not one str: "
            "give records=('retrieval/v1',)",
        ),
    ],
)
def test_a_system_decorator_setting_that_is_no_text_is_refused(
    tmp_path: Path, declared: str, said: str
) -> None:
    root = toy_project(tmp_path / "p")
    app = TOY_APP.replace('name="toy", version="1"', declared)
    assert app != TOY_APP
    (root / "app.py").write_text(app)
    result = oloproof("run", cwd=root)
    assert (result.code, result.out) == (2, ""), result.err
    assert result.err.startswith(
        f"error: {root}/oloproof.yaml, line 4: system.callable: importing 'app' failed: {said}"
    ), result.err
    assert len(result.err.splitlines()) == 1, result.err
    assert not (root / ".oloproof").exists()


def test_a_system_version_that_is_no_object_the_ledger_records_is_refused(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p")
    (root / "app.py").write_text(TOY_APP.replace('version="1"', "version=object()"))
    result = oloproof("run", cwd=root)
    assert (result.code, result.out) == (2, ""), result.err
    assert "@system(version=<object object at " in result.err, result.err
    assert "version must be text (a str, not empty), as in oloproof.yaml" in result.err
    assert not (root / ".oloproof").exists()


@pytest.mark.parametrize(
    ("settings", "refused"),
    [
        ('version=2, index_version="i"', "version=2"),
        ('version="1", index_version=3', "index_version=3"),
    ],
)
def test_a_rag_system_name_that_is_no_text_is_refused(
    tmp_path: Path, settings: str, refused: str
) -> None:
    root = toy_project(tmp_path / "p", config=RAG_CONFIG)
    (root / "app.py").write_text(RAG_APP.format(settings=settings))
    result = oloproof("run", cwd=root)
    name = refused.split("=")[0]
    assert (result.code, result.out) == (2, ""), result.err
    assert result.err == (
        f"error: {root}/oloproof.yaml, line 1: system.rag.object: importing 'app' failed: "
        f"@rag_system({refused}): {name} must be text (a str, not empty), as in oloproof.yaml\n"
    )
    assert not (root / ".oloproof").exists()
