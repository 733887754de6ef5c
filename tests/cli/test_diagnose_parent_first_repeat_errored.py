"""A diagnosis reads a repeated case from the run's first repeat that ran to the end.

Through the real CLI, on BM25 (bm25s) over a small corpus. A run made with ``--repeats 2``
whose search service timed out in the first repeat of a case, and whose second repeat ranked
the relevant chunk second (below a top_k of 1) and failed, has that case selected: it failed
in the one repeat with a verdict. Its first repeat recorded no retrieval, and the diagnosis
read that one: the gold-context diagnosis said ``best relevant position none`` and ``Drifted:
1 of 1`` (every control retrieved something, so none matched "nothing"), and a top-k replay
replayed a retrieval of no candidates the run never made (``retrieval/v1: candidates: []`` in
its child run, ``context_unchanged``), so ``Recovered under top-k 2: 0 of 1``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.test_diagnose_parent_repeats_retrieved_differently import CASE, CONFIG, app
from tests.support import oloproof

ANSWER = ("--criterion", "answer_correct")
TIMES_OUT_FIRST = """
        if calls("retrieved") == 0:
            raise TimeoutError("the search service timed out")
"""


def ok(root: Path, *args: str) -> str:
    done = oloproof(*args, cwd=root)
    assert done.code == 0, done.out + done.err
    return done.out


def ranking(retrieval: dict[str, Any]) -> list[list[str]]:
    return [[c["doc_id"], c["chunk_id"]] for c in retrieval["candidates"]]


def shown(root: Path, *args: str) -> Any:
    return json.loads(ok(root, "inspect", *args, "--json"))


def test_a_first_repeat_that_errored_is_not_the_one_read(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "app.py").write_text(app(TIMES_OUT_FIRST))
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "cases.jsonl").write_text(json.dumps(CASE) + "\n")
    (root / "generated").write_text("2")  # past the model's one bad draw: it always answers
    done = oloproof("run", "--repeats", "2", cwd=root)
    assert done.code == 0, done.out + done.err
    assert "1 of 2 repeats errored: TimeoutError" in done.out
    # The second repeat's ranking: the relevant chunk second.
    second = shown(root, done.out.split()[1], "--case", "damage")["repeats"][1]["execution"]
    ranked = ranking(shown(root, second)["body"]["artifacts"]["retrieval/v1"][0])
    assert ranked[:2] == [["warranty", "c0"], ["warranty", "c1"]], ranked

    gold = ok(root, "diagnose", "latest", "--intervention", "gold-context", *ANSWER).splitlines()
    assert gold[:3] == [
        "Selected: 1 failed case with gold context (observed; no population claim)",
        "Control: 0 of 1 passed when re-executed without the intervention",
        "Recovered under gold context: 1 of 1",
    ]
    assert gold[3] == (
        "RANKED_OUT: 1 of 1, recovered; relevant evidence was retrieved below the top-k cut"
    )
    address = gold[-3].split()[1]
    assert ok(root, "inspect", address).splitlines()[0] == (
        "damage: RANKED_OUT, relevant_ranked_out, strength intervention_recovery, best relevant "
        "position 2"
    )

    replay = ok(root, "diagnose", "latest", "--intervention", "top-k", "--top-k", "2", *ANSWER)
    assert "Recovered under top-k 2: 1 of 1" in replay.splitlines()
    # The replay started from the retrieval the run recorded in its second repeat.
    child = replay.split("Child runs: ")[1].split(", ")[2].split()[-1]
    replayed = shown(root, child, "--case", "damage")["artifacts"]["retrieval/v1"][0]
    assert ranking(replayed) == ranked
    for args in (("diagnose", "--verify", address), ("verify",)):
        ok(root, *args)
