"""A replay diagnosis advises a gold-context diagnosis only where one can be run. On a ranking
criterion (hit_rate) a reranker replay said "No gold-context diagnosis of this run yet; run one
to label the cases.", in ``diagnose`` and on the viewer's page of it alike, and the gold-context
diagnosis it asked for is refused (exit 2): gold context never touches the ranking. Now no such
line; on a criterion that reads the answer the advice stays, and following it works."""

from __future__ import annotations

import re
from pathlib import Path

from tests.cli.test_diagnose_interventions import run, write_project
from tests.support import oloproof
from tests.view.support import fetch, serving

ADVICE = "No gold-context diagnosis of this run yet; run one to label the cases."
ADDRESS = re.compile(r"sha256:[0-9a-f]{64}")


def diagnosed(root: Path, run_id: str, criterion: str, *intervention: str) -> tuple[int, str]:
    done = oloproof("diagnose", run_id, *intervention, "--criterion", criterion, cwd=root)
    return done.code, done.out + done.err


def test_no_gold_context_advice_on_a_ranking_criterion(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", [f"q{i:02}" for i in range(4)])
    run_id = run(root)
    reranker = ("--intervention", "reranker", "--reranker", "rerank:swap")
    code, out = diagnosed(root, run_id, "hit_rate_at_1", *reranker)
    assert code == 0, out
    assert "Recovered under reranker rerank:swap: 4 of 4" in out
    assert ADVICE not in out
    with serving(root) as url:
        status, page = fetch(f"{url}/diagnoses/{ADDRESS.findall(out)[0]}")
    assert status == 200 and "Recovered under reranker rerank:swap: 4 of 4" in page
    assert ADVICE not in page
    # The advice, had it been followed, is refused.
    code, out = diagnosed(root, run_id, "hit_rate_at_1", "--intervention", "gold-context")
    assert code == 2 and "--intervention gold-context cannot change hit_rate_at_1" in out

    # On a criterion that reads the answer, the advice stays, and it can be followed.
    code, out = diagnosed(root, run_id, "answer_correct", *reranker)
    assert code == 0 and ADVICE in out, out
    code, out = diagnosed(root, run_id, "answer_correct", "--intervention", "gold-context")
    assert code == 0, out
