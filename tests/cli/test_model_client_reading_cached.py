"""Executions a callable or staged system made with ``ModelClient`` under an earlier reading of
replies are made again, through the real CLI.

A model system's identity says how its replies are read (``REPLIES``), so what it cached
before a reading changed (a reply beside the server's error taken whole, say) is asked again.
A callable system, or a staged system's ``generate``, that calls ``ModelClient`` had no such
thing: the answer an earlier release took from a reply beside an error was served from the
execution cache (and from the generate stage's) and judged as good by every later run, which
would now error that case.

Now the identity of a system, and of a stage, whose code reaches ``oloproof.models`` holds the
reading, so those executions are made again once; a retrieve that never calls a model keeps
its cache.
"""

from __future__ import annotations

import json
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
    def retrieve(self, case_input, depth):
        return Retrieval(query=case_input["question"], candidates=tuple(NOTES[:depth]))

    def generate(self, case_input, context):
        return {{"answer": LLM.complete(case_input["question"])}}
"""

# A release that read replies otherwise: it took a reply beside the server's error whole.
EARLIER_RELEASE = """
import json

from oloproof import models
from oloproof.providers._http import HttpProvider

models.REPLIES = 2
read = HttpProvider._parse


def taken_whole(self, content, headers):
    data = json.loads(content)
    data.pop("error", None)
    return read(self, json.dumps(data).encode(), headers)


HttpProvider._parse = taken_whole
from oloproof.cli.main import main

main()
"""


@pytest.fixture
def base() -> Iterator[str]:
    with serving() as url:
        yield url


def project(root: Path, base: str, system: dict[str, Any]) -> Path:
    return capitals(root, APP.format(base=base), system, ("good", "beside"))


def statuses(root: Path) -> dict[str, str]:
    found = {}
    for kind in ("good", "beside"):
        shown = oloproof("inspect", "latest", "--case", kind, "--json", cwd=root)
        assert shown.code == 0, shown.err
        found[kind] = json.loads(shown.out)["status"]
    return found


@pytest.mark.parametrize(
    ("system", "stages"),
    [
        ({"name": "asker", "version": "1", "callable": "app:ask"}, None),
        (
            {"name": "notes-rag", "version": "1", "rag": {"object": "app:NotesRag"}},
            # The errored generate stored no stage: one generate made, none taken.
            "Stages: retrieve 2 hit/0 miss; generate 0 hit/1 miss",
        ),
    ],
    ids=["callable", "staged"],
)
def test_an_execution_cached_under_an_earlier_reading_is_made_again(
    tmp_path: Path, base: str, system: dict[str, Any], stages: str | None
) -> None:
    root = project(tmp_path / "p", base, system)
    earlier = oloproof("run", cwd=root, command=("-c", EARLIER_RELEASE))
    assert earlier.code == 0, earlier.out + earlier.err
    assert "2 / 2 observed · 0 missing" in earlier.out, earlier.out
    planned = oloproof("run", "--dry-run", cwd=root)
    assert "  2 executions: how model replies are read changed" in planned.lines, planned.out
    asked = Replies.asked
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    # Was: `Cache: execution 2 hit/0 miss`, the answer beside the error served and passed.
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/1 miss" in done.lines, done.out
    if stages is not None:
        assert stages in done.lines, done.out
    assert Replies.asked == asked + 2
    assert statuses(root) == {"good": "ok", "beside": "errored"}
    # Made under this reading, the good answer is reused from now on.
    again = oloproof("run", cwd=root)
    assert "Cache: execution 1 hit/1 miss; judgment 1 hit/0 miss" in again.lines, again.out
