"""A replay reads a role's context from its first repeat that ran to the end.

Through the real CLI. A system whose retriever finds one passage, under a cut of 1, with a
generate that stands in for a flaky model: it hangs past the case timeout on its second call
and is right on its fourth only (counted in a file beside it). Under ``--top-k 3 --repeats 2``
the intervention's first repeat (call 2) times out, its control's first repeat is wrong (call
3), the intervention's second repeat is right (call 4) and the control's second wrong (call 5):
both roles handed the model the same one passage. Whether the context changed was judged from
the first repeats alone, so the errored one skipped the check and the lucky pass read as a
recovery ("Recovered under top-k 3: 1 of 1"); it is now UNRESOLVED (``context_unchanged``). A
diagnosis recorded before (schema 8) re-derives as it was made.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_diagnose_unchanged_context_replays import CASE, CONFIG
from tests.support import diagnosis_release, normalise, oloproof

HANGING_APP = """
import time
from pathlib import Path

from oloproof import Context, Passage, Retrieval, rag_system

CALLS = Path(__file__).parent / "calls.txt"


@rag_system(name="hanging", version="1", depth=4, top_k=1)
class Hanging:
    def retrieve(self, input, depth):
        return Retrieval(query=input["question"], depth=depth, candidates=(
            Passage(doc_id="kb-A", text="Refunds are reviewed within two business days."),
        ))

    def generate(self, input, context: Context):
        n = int(CALLS.read_text()) + 1 if CALLS.exists() else 1
        CALLS.write_text(str(n))
        if n == 2:
            time.sleep(4)  # a model server that does not answer in time
        given = " ".join(item.text or "" for item in context.items)
        right = n == 4 and "two business days" in given
        return {"answer": "two business days" if right else "I am not sure."}
"""

TOP_K_3 = ("--intervention", "top-k", "--top-k", "3", "--repeats", "2")


def hanging_project(root: Path) -> Path:
    root.mkdir()
    (root / "app.py").write_text(HANGING_APP)
    config = CONFIG.replace("app:Flaky", "app:Hanging").replace("flaky", "hanging")
    (root / "oloproof.yaml").write_text(config + "timeout_s: 1\n")
    (root / "cases.jsonl").write_text(json.dumps(CASE) + "\n")
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err  # call 1: the case fails
    return root


def test_a_pass_after_an_errored_first_repeat_is_read_against_the_context(
    tmp_path: Path,
) -> None:
    root = hanging_project(tmp_path / "now")
    done = oloproof("diagnose", "latest", *TOP_K_3, "--criterion", "answer_correct", cwd=root)
    assert done.code == 0, done.out + done.err
    assert normalise(done.out).splitlines()[1:4] == [
        "Control: 0 of 1 passed in at least one of 2 re-executions without the intervention",
        "Recovered under top-k 3: 0 of 1",
        "UNRESOLVED: 1 of 1, the intervention gave the model the very context the control did "
        "(context_unchanged), so it tested nothing there; 1 passed under it all the same, which "
        "is the system's own variation, not a recovery",
    ]
    address = done.lines[-1].split()[-1]
    verified = oloproof("diagnose", "--verify", address, cwd=root)
    assert verified.code == 0, verified.out + verified.err


def test_a_diagnosis_recorded_before_re_derives_as_it_was_made(tmp_path: Path) -> None:
    root = hanging_project(tmp_path / "before")
    done = oloproof(
        "diagnose",
        "latest",
        *TOP_K_3,
        "--criterion",
        "answer_correct",
        cwd=root,
        command=diagnosis_release(8),
    )
    assert done.code == 0, done.out + done.err
    assert done.lines[2] == "Recovered under top-k 3: 1 of 1; 1 recovered in 1 of 2"
    address = done.lines[-1].split()[-1]
    for args in (("diagnose", "--verify", address), ("verify",)):
        verified = oloproof(*args, cwd=root)
        assert verified.code == 0, verified.out + verified.err
