"""A staged or callable system calls a real HTTP model in one line, and the call is recorded.

The model is a scripted OpenAI-compatible server on 127.0.0.1; the systems reach it through
``oloproof.ModelClient``; the real CLI runs in a subprocess.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from tests.support import Result, oloproof

from oloproof.testing import ScriptedJudgeServer, answer

APP = """
import os

from oloproof import ModelClient, Passage, Retrieval, rag_system, system

LLM = ModelClient(
    provider="openai", model="tiny", base_url=os.environ["MODEL_URL"], api_key_env=None,
    price_per_input_token=0.001, price_per_output_token=0.002,
)
NOTES = [Passage(doc_id="kb-01", text="Notes sync every five minutes.")]


@rag_system(name="notes-rag", version="1", depth=1, top_k=1)
class NotesRag:
    def retrieve(self, case_input, depth):
        return Retrieval(query=case_input["question"], candidates=tuple(NOTES[:depth]))

    def generate(self, case_input, context):
        notes = " ".join(item.text for item in context.items)
        return {"answer": LLM.complete(f"{notes}\\nQuestion: {case_input['question']}")}


@system(name="notes-callable", version="1")
def ask(case_input):
    return {"answer": LLM.complete(case_input["question"], system="Be brief.")}
"""

CASES = [
    {
        "id": f"q{i}",
        "input": {"question": f"How often do notes sync? ({i})"},
        "expected": {"answer": "sync"},
    }
    for i in range(3)
]


def project(root: Path, system: dict[str, object]) -> Path:
    root.mkdir(exist_ok=True)
    (root / "app.py").write_text(APP)
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    config = {"system": system, "evaluators": [{"type": "contains", "criterion": "said"}]}
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config))
    return root


def run(root: Path, url: str, *args: str) -> Result:
    return oloproof(*args, cwd=root, env={"MODEL_URL": url})


def model_calls(root: Path, url: str, case_id: str) -> list[dict[str, object]]:
    shown = run(root, url, "inspect", "latest", "--case", case_id, "--json")
    assert shown.code == 0, shown.err
    return list(json.loads(shown.out)["artifacts"].get("model_call/v1", []))


def test_a_staged_generate_records_its_model_calls(tmp_path: Path) -> None:
    with ScriptedJudgeServer(default=answer("Every five minutes.", output_tokens=4)) as model:
        url = model.openai_base_url
        root = project(
            tmp_path / "rag",
            {"name": "notes-rag", "version": "1", "rag": {"object": "app:NotesRag"}},
        )
        first = run(root, url, "run")
        assert first.code == 0, first.err
        assert len(model.requests) == 3
        (call,) = model_calls(root, url, "q0")
        assert (call["provider"], call["model"], call["output_tokens"]) == ("openai", "tiny", 4)
        assert call["cost"] == call["input_tokens"] * 0.001 + 4 * 0.002
        # A new index version re-runs retrieve; the same context reuses generate from its
        # cache, and the output still names the call that made it.
        config = yaml.safe_load((root / "oloproof.yaml").read_text())
        config["system"]["rag"]["index_version"] = "2"
        (root / "oloproof.yaml").write_text(yaml.safe_dump(config))
        second = run(root, url, "run")
        assert "Stages: retrieve 0 hit/3 miss; generate 3 hit/0 miss" in second.lines, second.out
        assert len(model.requests) == 3
        assert model_calls(root, url, "q0") == [call]


def test_a_callable_system_records_its_model_calls(tmp_path: Path) -> None:
    with ScriptedJudgeServer(default=answer("Five minutes.")) as model:
        url = model.openai_base_url
        root = project(
            tmp_path / "callable", {"name": "notes-callable", "version": "1", "callable": "app:ask"}
        )
        assert run(root, url, "run").code == 0
        (call,) = model_calls(root, url, "q1")
        assert call["request_key"] and call["attempts"] == 1
        body = model.requests[0].json()
        assert body["messages"][0] == {"role": "system", "content": "Be brief."}
