"""A judge's key in a system's output is kept out of the ledger from the run's first case on.

The key was registered for redaction when the judge made its first call, after the first case's
execution had been stored: a key whose variable is not named like a credential (``JUDGE_KEY``,
``OPENAI_KEY``) that a system repeated in its answer or a passage was stored as it is in that
execution (and its text events), and sent to the judge's server inside the prompt. The key is
now registered when the judge is made, before any case runs.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_judge_failures import case, write_project
from tests.support import oloproof

from ledger.codec import decode
from oloproof import events
from oloproof.store import open_project_ledger
from oloproof.testing import ScriptedJudgeServer, verdict

KEY = "sk-judge-0123456789abcdefXYZ"

# A system that repeats the key it can read in the passage it records. (An answer holding it
# errors its case, SecretInAnswer: tests/cli/test_answer_holding_a_secret.py.)
APP = """
import os

from oloproof import Context, ContextItem, current_case, system


@system(name="leaky", version="1", records=["context/v1"])
def answer(case_input):
    key = os.environ["JUDGE_KEY"]
    passage = ContextItem(doc_id="kb-01", text=f"Notes sync every five minutes (key {key}).")
    current_case().context(Context(items=(passage,)))
    return {"answer": case_input["answer"]}
"""


def stored_bodies(root: Path) -> str:
    """Every event's body in the project's ledger, as JSON text."""
    with open_project_ledger(root, create=False) as ledger:
        return "".join(
            json.dumps(decode(ledger.get_bytes(address))["body"], default=str)
            for kind in events.SCHEMAS
            for address, _ in ledger.events(kind)
        )


def test_a_judge_key_a_system_repeats_is_never_stored_nor_sent_in_a_prompt(
    tmp_path: Path,
) -> None:
    with ScriptedJudgeServer(default=verdict(True, "The passage says five minutes.")) as server:
        cases = [case("c0", "Every five minutes.")]
        root = write_project(tmp_path / "p", server.openai_base_url, cases, api_key_env="JUDGE_KEY")
        (root / "app.py").write_text(APP, encoding="utf-8")
        result = oloproof("run", cwd=root, env={"JUDGE_KEY": KEY})
        prompts = [request.body.decode() for request in server.requests]
    assert result.code == 0, result.out + result.err
    assert len(prompts) == 1
    # Before: the prompt held the key, and the execution and text events held it.
    assert KEY not in prompts[0]
    assert "(key [redacted])" in prompts[0]
    stored = stored_bodies(root)
    assert KEY not in stored
    assert "(key [redacted])" in stored
