"""A replay's Confirmed line counts apart the RANKED_OUT cases it gave no verdict on.

Through the real CLI. A retriever that ranks the relevant passage second under a cut of 1, so a
gold-context diagnosis labels both cases RANKED_OUT; then a reranker that raises on one case
and builds a passage with a NaN score on the other, so every case errors under it. The Control
line and the UNRESOLVED line said so, yet the Confirmed line read "0 of 2 RANKED_OUT cases also
recovered", as if both had been tried and had failed; it now adds that the 2 gave no verdict.
A diagnosis recorded before (schema 8) re-derives as it was made, without that count.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_diagnose_unchanged_context_replays import CASE, CONFIG, DETERMINISTIC_APP
from tests.support import GOLD_DIAGNOSIS, diagnosis_release, normalise, oloproof

RERANK = """
from oloproof import Passage


def broken(input, candidates):
    if input["question"].startswith("When"):
        raise RuntimeError("the reranking model went away")
    return [Passage(doc_id=c.doc_id, text=c.text, score=float("nan")) for c in candidates]
"""

RERANKER = ("--intervention", "reranker", "--reranker", "rerank:broken")
CRITERION = ("--criterion", "answer_correct")


def ranked_out_project(root: Path, command: tuple[str, ...] = ("-m", "oloproof")) -> str:
    """The run's id, once its gold-context diagnosis is made (by ``command``)."""
    root.mkdir()
    (root / "app.py").write_text(DETERMINISTIC_APP)
    (root / "rerank.py").write_text(RERANK)
    (root / "oloproof.yaml").write_text(CONFIG.replace("app:Flaky", "app:Ranked"))
    other = {**CASE, "id": "refund-2", "input": {"question": "How long do refund reviews take?"}}
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in (CASE, other)))
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    gold = oloproof("diagnose", "latest", *GOLD_DIAGNOSIS, cwd=root, command=command)
    assert gold.code == 0, gold.out + gold.err
    assert gold.lines[3] == (
        "RANKED_OUT: 2 of 2, recovered; relevant evidence was retrieved below the top-k cut"
    )
    return done.lines[0].split()[1]


def test_ranked_out_cases_without_a_verdict_are_counted_apart(tmp_path: Path) -> None:
    root = tmp_path / "p"
    run_id = ranked_out_project(root)
    done = oloproof("diagnose", run_id, *RERANKER, *CRITERION, cwd=root)
    assert done.code == 0, done.out + done.err
    assert normalise(done.out).splitlines()[1:5] == [
        "Control: 0 of 2 passed when re-executed without the intervention",
        "Recovered under reranker rerank:broken: 0 of 2",
        "UNRESOLVED: 2 of 2, the intervention gave no verdict (errored or missing)",
        "Confirmed under reranker rerank:broken: 0 of 2 RANKED_OUT cases also recovered; 2 gave "
        "no verdict (errored or missing)",
    ]
    address = done.lines[-1].split()[-1]
    body = json.loads(oloproof("inspect", address, "--json", cwd=root).out)["body"]
    assert body["summary"]["ranked_out_not_observed"] == 2
    verified = oloproof("diagnose", "--verify", address, cwd=root)
    assert verified.code == 0, verified.out + verified.err


def test_a_diagnosis_recorded_before_re_derives_as_it_was_made(tmp_path: Path) -> None:
    root = tmp_path / "p"
    earlier = diagnosis_release(8)
    run_id = ranked_out_project(root, earlier)
    done = oloproof("diagnose", run_id, *RERANKER, *CRITERION, cwd=root, command=earlier)
    assert done.code == 0, done.out + done.err
    assert done.lines[4] == (
        "Confirmed under reranker rerank:broken: 0 of 2 RANKED_OUT cases also recovered"
    )
    address = done.lines[-1].split()[-1]
    for check in (("diagnose", "--verify", address), ("verify",)):
        verified = oloproof(*check, cwd=root)
        assert verified.code == 0, verified.out + verified.err
