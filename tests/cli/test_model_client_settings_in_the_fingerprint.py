"""A ``ModelClient`` the system's code holds (a module's constant, a staged class's attribute,
as models.md shows it) is part of the code's identity by its settings, through the real CLI.

It was an object of a library's type to the fingerprint, whose state cannot be seen: changing
its model (or its temperature) served every answer the old model gave from the execution cache
and the generate stage's, the run saying only that a ``ModelClient`` object was not seen.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.cli.test_errored_model_calls_kept import Replies, capitals, serving
from tests.support import oloproof

APP = """
from oloproof import ModelClient, Passage, Retrieval, rag_system, system

LLM = ModelClient(provider="openai", model="m", base_url="{base}/v1", api_key_env=None)
NOTES = [Passage(doc_id="kb-01", text="Paris is the capital of France.")]


@system(name="asker", version="1")
def ask(case_input):
    return {{"answer": LLM.complete(case_input["question"])}}


@rag_system(name="notes-rag", version="1", depth=1, top_k=1)
class NotesRag:
    llm = ModelClient(provider="openai", model="m", base_url="{base}/v1", api_key_env=None)

    def retrieve(self, case_input, depth):
        return Retrieval(query=case_input["question"], candidates=tuple(NOTES[:depth]))

    def generate(self, case_input, context):
        return {{"answer": self.llm.complete(case_input["question"])}}
"""


@pytest.fixture
def base() -> Iterator[str]:
    with serving() as url:
        yield url


@pytest.mark.parametrize(
    ("system", "changed", "cached"),
    [
        (
            {"name": "asker", "version": "1", "callable": "app:ask"},
            "constant LLM in app.py changed",
            ["Cache: execution 0 hit/1 miss; judgment 0 hit/1 miss"],
        ),
        (
            {"name": "notes-rag", "version": "1", "rag": {"object": "app:NotesRag"}},
            "class attribute NotesRag.llm in app.py changed",
            [
                "Cache: execution 0 hit/1 miss; judgment 0 hit/1 miss",
                "Stages: retrieve 1 hit/0 miss; generate 0 hit/1 miss",
            ],
        ),
    ],
    ids=["callable", "staged"],
)
@pytest.mark.parametrize("edit", ['model="m2"', 'model="m", temperature=0.5'])
def test_a_changed_client_asks_the_model_again(
    tmp_path: Path, base: str, system: dict[str, Any], changed: str, cached: list[str], edit: str
) -> None:
    root = capitals(tmp_path / "p", APP.format(base=base), system, ("good",))
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.out + first.err
    assert Replies.asked == 1
    app = root / "app.py"
    app.write_text(app.read_text().replace('model="m"', edit))

    dry = oloproof("run", "--dry-run", cwd=root)
    assert f"  1 executions: {changed}" in dry.lines, dry.out + dry.err
    assert not [line for line in dry.lines if "ModelClient" in line], dry.out
    second = oloproof("run", cwd=root)
    assert second.code == 0, second.out + second.err
    assert [line for line in second.lines if line.startswith(("Cache:", "Stages:"))] == cached
    assert Replies.asked == 2
