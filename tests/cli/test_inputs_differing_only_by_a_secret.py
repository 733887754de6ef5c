"""Two cases whose inputs differ only in which secret they hold are two executions, through
the real CLI.

A case's input is stored with the secrets the project keeps out replaced by ``[redacted]``, and
its executions were keyed by that stored form. So two cases asking about two declared secrets
(``alpha12345`` and ``beta456``) were one input: the second was never executed, and was given
and judged on the first's answer (``Cache: execution 0 hit/1 miss/1 shared``; case b, whose
answer is 7, recorded ``10``, its length of the first's). An input holding a kept-out secret is
now keyed by its case as well: each case runs on its own input, and a later run of the same
case still takes its execution from the cache (a rotated key keeps it, as before). The stored
inputs still hold neither value.

A judgment is cached under digests of the case parts its evaluator reads. Those were digests of
the raw values, so an expected answer holding a declared secret put a plain digest of it in the
stored identity, against which a guess could be checked offline (the ledger allows that nowhere
else); it showed as a rotated secret judging every such case again. The parts are now digested
as stored, beside the case's id where a secret was replaced.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof

from ledger import open_ledger

APP = """
from oloproof import system

@system(name="length", version="1")
def length(case):
    return {"answer": str(len(case["q"]))}
"""
CONFIG = """\
system: {name: length, version: "1", callable: app:length}
evaluators:
  - {type: exact, criterion: right, field: answer, expected_field: answer}
secrets: [FIRST_SECRET, SECOND_SECRET]
"""
ENV = {"FIRST_SECRET": "alpha12345", "SECOND_SECRET": "beta456"}
CASES = [("a", "alpha12345", "10"), ("b", "beta456", "7"), ("c", "beta456", "7"), ("d", "x", "1")]


def project(
    root: Path, cases: list[tuple[str, str, str]] = CASES, app: str = APP, config: str = CONFIG
) -> Path:
    """``root`` holding ``app``, ``config`` and one case per (id, q, expected answer)."""
    root.mkdir(exist_ok=True)
    (root / "app.py").write_text(app)
    (root / "oloproof.yaml").write_text(config)
    (root / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "input": {"q": q}, "expected": {"answer": a}}) + "\n"
            for i, q, a in cases
        )
    )
    return root


def answers(root: Path, run_id: str) -> dict[str, tuple[object, object]]:
    found = {}
    for case_id, _, _ in CASES:
        shown = oloproof("inspect", run_id, "--case", case_id, "--json", cwd=root, env=ENV)
        assert shown.code == 0, shown.err
        case = json.loads(shown.out)
        found[case_id] = (case["input"]["q"], case["output"]["answer"])
    return found


def test_inputs_differing_only_by_a_secret_each_run_on_their_own(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    first = oloproof("run", "--json", cwd=root, env=ENV)
    assert first.code == 0, first.out + first.err
    report = json.loads(first.out)
    # Was: [0, 3, 1] (b shared a's execution) and 3 / 4 right.
    assert report["cache"]["execution"][:3] == [0, 4, 0], report["cache"]
    (right,) = report["metrics"]
    assert (right["observed"], right["estimate"]) == (4, 1.0), right
    assert answers(root, report["run_id"]) == {
        "a": ("[redacted]", "10"),
        "b": ("[redacted]", "7"),
        "c": ("[redacted]", "7"),
        "d": ("x", "1"),
    }
    again = oloproof("run", "--json", cwd=root, env=ENV)
    assert again.code == 0, again.out + again.err
    assert json.loads(again.out)["cache"]["execution"][:3] == [4, 0, 0]
    # A rotated key, in the environment and the cases alike: stored as before, the cases keep
    # their executions.
    cases = root / "cases.jsonl"
    cases.write_text(cases.read_text().replace("beta456", "gamma99"))
    rotated = oloproof("run", "--json", cwd=root, env={**ENV, "SECOND_SECRET": "gamma99"})
    assert rotated.code == 0, rotated.out + rotated.err
    assert json.loads(rotated.out)["cache"]["execution"][:3] == [4, 0, 0]
    with open_ledger(root / ".oloproof", readonly=True) as ledger:
        stored = "".join(repr(event) for _, event in ledger.events())
    assert "[redacted]" in stored
    assert all(value not in stored for value in ("alpha12345", "beta456", "gamma99"))


STAGED = """
from oloproof import Passage, Retrieval, rag_system

@rag_system(name="staged", version="1", depth=2, top_k=1, token_budget=100)
class Staged:
    def retrieve(self, input, depth):
        found = f"len{len(input['q'])}"
        return Retrieval(query="q", depth=depth, candidates=(
            Passage(doc_id=found, score=2.0, text=f"passage {found}"),
            Passage(doc_id="other", score=1.0, text="another passage"),
        ))

    def generate(self, input, context):
        return {"answer": context.items[0].doc_id[3:]}

    def count_tokens(self, passage):
        return len((passage.text or "").split())
"""
STAGED_CONFIG = """\
system: {name: staged, version: "1", rag: {object: app:Staged}}
concurrency: 1  # each case after the one before: a retrieval shared would be found
evaluators:
  - {type: exact, criterion: right, field: answer, expected_field: answer}
secrets: [FIRST_SECRET, SECOND_SECRET]
"""


def test_a_staged_systems_stages_are_not_shared_across_secrets(tmp_path: Path) -> None:
    root = project(tmp_path / "p", app=STAGED, config=STAGED_CONFIG)
    done = oloproof("run", "--json", cwd=root, env=ENV)
    assert done.code == 0, done.out + done.err
    report = json.loads(done.out)
    (right,) = report["metrics"]
    # Was: b and c given a's retrieval (the retrieve stage was keyed by the stored input).
    assert (right["observed"], right["estimate"]) == (4, 1.0), right
    assert answers(root, report["run_id"])["b"] == ("[redacted]", "7")


ECHO = APP.replace('str(len(case["q"]))', 'case["q"]')
CONTAINS = CONFIG.replace("type: exact", "type: contains")


def test_a_rotated_secret_keeps_the_judgments_that_read_it(tmp_path: Path) -> None:
    cases = [("b", "x", "alpha12345"), ("c", "x", "beta456")]
    root = project(tmp_path / "p", cases, ECHO, CONTAINS)
    first = oloproof("run", "--json", cwd=root, env=ENV)
    assert first.code == 0, first.out + first.err
    report = json.loads(first.out)
    # b and c share one answer, and each expects another secret: each has its own judgment.
    assert report["cache"] == {"execution": [0, 1, 1], "judgment": [0, 2, 0]}, report["cache"]
    (said,) = report["metrics"]
    assert (said["observed"], said["estimate"]) == (2, 0.0), said
    project(root, [("b", "x", "gamma99xx"), ("c", "x", "delta77")], ECHO, CONTAINS)
    env = {"FIRST_SECRET": "gamma99xx", "SECOND_SECRET": "delta77"}
    again = json.loads(oloproof("run", "--json", cwd=root, env=env).out)
    # Was: judgment [0, 2, 0]: their identities held a digest of the secret itself.
    assert again["cache"] == {"execution": [2, 0, 0], "judgment": [2, 0, 0]}, again["cache"]
