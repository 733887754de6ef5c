"""A pair one run's output alone excluded counts as missing in a comparison, not as excluded.

The probe: a baseline ranked the relevant passage first in each of 240 cases; the candidate
recorded no retrieval at all in 40 of them (its retriever broke there). Those 40 were
`excluded: no_retrieval_recorded` and dropped from the pairs, so the comparison read 200 pairs
with no difference, and non-inferiority by 5 points passed (`Gate: PASS`): the candidate lost
the cases it would have failed from the comparison. A labelled case without a retrieval is now
missing in the run itself (`test_unrecorded_retrieval_counts_against`), so the pair is missing
as any pair with a missing verdict is. Exclusions an output still decides (no citations
recorded, where citations are not required) are checked here with `citation_validity`: such an
exclusion is that run's alone, and counts as a missing pair (the other run's observed value
kept) as a missing verdict does. Both runs excluding a pair by their outputs still exclude it.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, write_project

APP = """
from oloproof import Context, ContextItem, Passage, Retrieval, current_case, system

KB = Context(items=(ContextItem(doc_id="kb-1", text="Refunds take 14 days."),))


def _ranked(case):
    docs = ("d1", "x", "y")
    current_case().retrieval(Retrieval(query="q", depth=3, candidates=tuple(
        Passage(doc_id=d, text=d) for d in docs)))
    return {"answer": "x"}


def _cited(case, cite):
    current_case().context(KB)
    if cite:
        current_case().citations(["kb-1" if case["n"] % 2 else "kb-999"])
    return {"answer": "x"}


@system(name="citer", version="1", records=("context/v1", "citations/v1"))
def cite_base(case):
    return _cited(case, case["n"] >= case["both"])


@system(name="citer", version="2", records=("context/v1", "citations/v1"))
def cite_cand(case):
    return _cited(case, case["n"] >= case["broken"])


@system(name="ranker", version="1", records=("retrieval/v1",))
def base(case):
    if case["n"] < case["both"]:
        return {"answer": "x"}  # records no retrieval, as the candidate does on these
    return _ranked(case)


@system(name="ranker", version="2", records=("retrieval/v1",))
def cand(case):
    if case["n"] < case["broken"]:
        return {"answer": "x"}  # the retriever broke: nothing recorded
    return _ranked(case)
"""
CONFIG = """\
system: {{name: {name}, version: "{version}", callable: "app:{callable}"}}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {{type: {evaluator}}}
"""
# The system, its two versions' callables and the evaluator of each probe.
RANKER = ("ranker", "base", "cand", "hit_rate, k: 1", "hit_rate_at_1")
CITER = ("citer", "cite_base", "cite_cand", "citation_validity", "citations_valid")


def _compared(
    tmp_path: Path, broken: int, both: int, probe: tuple[str, ...] = RANKER
) -> tuple[int, dict[str, object], str]:
    """Exit code, --json and text of the comparison of the candidate (nothing recorded in its
    first ``broken`` cases) with the baseline (nothing in its first ``both``)."""
    name, base, cand, evaluator, metric = probe

    def config(version: str, callable_: str) -> str:
        return CONFIG.format(name=name, version=version, callable=callable_, evaluator=evaluator)

    root = write_project(
        tmp_path / "p",
        app=APP,
        config=config("1", base),
        policy=f"version: 1\nrules:\n  - {{id: floor, metric: {metric}, min: 0.1}}\n",
        cases=(
            {
                "id": f"c{n}",
                "input": {"n": n, "broken": broken, "both": both},
                "expected": {"relevant": [{"doc_id": "d1"}]},
            }
            for n in range(240)
        ),
    )
    (root / "compare.yaml").write_text(
        f"version: 1\nrules:\n  - {{id: not-worse, metric: {metric}, "
        "non_inferiority: {margin: 5}}\n"
    )
    baseline = json.loads(oloproof("run", "--json", cwd=root).out)["run_id"]
    (root / "oloproof.yaml").write_text(config("2", cand))
    candidate = json.loads(oloproof("run", "--json", cwd=root).out)["run_id"]
    args = ("compare", candidate, baseline, "--policy", "compare.yaml")
    done = oloproof(*args, cwd=root)
    as_json = json.loads(oloproof(*args, "--json", cwd=root).out)
    assert oloproof("verify", cwd=root).code == 0
    return done.code, as_json, done.out


def test_a_candidate_that_stops_recording_retrievals_does_not_pass(tmp_path: Path) -> None:
    code, as_json, out = _compared(tmp_path, broken=40, both=0)
    assert code == 3, out  # was 0: non-inferior on the 200 cases it still recorded
    (row,) = as_json["metrics"]  # type: ignore[misc]
    assert (row["paired"], row["missing"], row["excluded"]) == (200, 40, 0)
    assert row["missing_reasons"] == {"no_retrieval_recorded": 40}
    # Each of the 40 counted at its worst for the candidate: baseline 1, candidate 0.
    assert row["difference"]["lower"] < -40 / 240
    assert "  missing 40: no_retrieval_recorded" in out.splitlines()
    # Its 200 recorded pairs alone would pass; the 40 it lost may all be misses.
    (rule,) = as_json["decisions"]  # type: ignore[misc]
    assert (rule["outcome"], rule["reason"]) == ("INSUFFICIENT_EVIDENCE", "missing_cases_decide")
    assert rule["detail"]["observed_only"]["outcome"] == "PASS"


def test_cases_neither_run_retrieved_for_are_missing_on_both_sides(tmp_path: Path) -> None:
    # Was excluded (and PASS): two runs whose retrievers broke on the same cases said nothing.
    code, as_json, out = _compared(tmp_path, broken=40, both=40)
    (row,) = as_json["metrics"]  # type: ignore[misc]
    assert (row["paired"], row["missing"], row["excluded"]) == (200, 40, 0)
    assert row["missing_reasons"] == {"no_retrieval_recorded": 40}
    assert code == 3, out


def test_a_candidate_that_stops_recording_citations_does_not_pass(tmp_path: Path) -> None:
    code, as_json, out = _compared(tmp_path, broken=40, both=0, probe=CITER)
    assert code == 3, out
    (row,) = as_json["metrics"]  # type: ignore[misc]
    assert (row["paired"], row["missing"], row["excluded"]) == (200, 40, 0)
    assert row["missing_reasons"] == {"no_citations_recorded in the candidate": 40}
    assert "  missing 40: no_citations_recorded in the candidate" in out.splitlines()
    (rule,) = as_json["decisions"]  # type: ignore[misc]
    assert (rule["outcome"], rule["reason"]) == ("INSUFFICIENT_EVIDENCE", "missing_cases_decide")
    assert rule["detail"]["observed_only"]["outcome"] == "PASS"


def test_a_pair_both_outputs_excluded_is_still_excluded(tmp_path: Path) -> None:
    code, as_json, out = _compared(tmp_path, broken=40, both=40, probe=CITER)
    (row,) = as_json["metrics"]  # type: ignore[misc]
    assert (row["paired"], row["missing"], row["excluded"]) == (200, 0, 40)
    assert row["excluded_reasons"] == {"no_citations_recorded": 40}
    assert code == 0, out
