"""With repeats, a recovery's "k of K" says how many of the other repeats had no verdict.

Through the real CLI. A staged system whose relevant passage is ranked below its cut of 1 fails
its one case; under ``--repeats 3`` the gold context makes its answer right, but the model
server times out on every gold-context call after the first. The diagnosis printed
``Recovered under gold context: 1 of 1; 1 recovered in 1 of 3`` and ``inspect`` ``recovered in
1 of 3``, read by anyone as one pass and two failures: the two other repeats errored, and
nothing said so. Both now say ``2 without a verdict``. The same holds for an unstable case:
``the control passed in 1 of 3`` whose two other control repeats errored. A diagnosis recorded
before (schema 13) re-derives as it was made.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_diagnose_parent_repeats_retrieved_differently import CASE, CORPUS
from tests.support import assert_diagnosis_verified, diagnosis_release, oloproof

APP = """
from pathlib import Path

from oloproof import Passage, Retrieval, rag_system

HERE = Path(__file__).parent
CORPUS = CORPUS_TWO


def calls(name):
    \"\"\"How many times ``name`` was called before (counted in a file beside the app).\"\"\"
    counter = HERE / name
    done = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(done + 1))
    return done


@rag_system(name="fixed", version="1", depth=2, top_k=1)
class Fixed:
    def retrieve(self, input, depth):
        ranked = [
            Passage(doc_id=d, chunk_id=c, score=float(2 - i), text=t)
            for i, (d, c, t) in enumerate(CORPUS)
        ]
        return Retrieval(query=input["question"], depth=depth, candidates=tuple(ranked))

    def generate(self, input, context):
        gold = any(p.chunk_id == "c1" for p in context.items)
        TWIST
        return {"answer": " ".join(p.text for p in context.items)}
"""

# The gold-context calls after the first time out: one recovery, two repeats without a verdict.
GOLD_TIMES_OUT = """if gold and calls("gold") >= 1:
            raise TimeoutError("the model server timed out")"""

# The control's first call is answered from the gold text (a lucky draw), its others time out.
CONTROL_LUCKY_ONCE = """if not gold:
            n = calls("control")
            if n == 1:  # the parent run made call 0
                return {"answer": "Accidental damage is not covered."}
            if n > 1:
                raise TimeoutError("the model server timed out")"""

CONFIG = """
system: {name: fixed, version: "1", rag: {object: app:Fixed}}
dataset: cases.jsonl
concurrency: 1
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
  - {type: hit_rate, k: 1, relevance_unit: chunk}
"""


GOLD = ("--intervention", "gold-context", "--criterion", "answer_correct", "--repeats", "3")


def project(root: Path, twist: str) -> Path:
    """The project, its one case run once (and failed: its relevant chunk is ranked second)."""
    root.mkdir()
    # The warranty document's two chunks, the relevant one second
    app = APP.replace("CORPUS_TWO", repr(CORPUS[:2])).replace("TWIST", twist)
    (root / "app.py").write_text(app)
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "cases.jsonl").write_text(json.dumps(CASE) + "\n")
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    return root


def diagnosed(root: Path, command: tuple[str, ...] = ("-m", "oloproof")) -> tuple[list[str], str]:
    """What ``diagnose`` (run as ``command``) printed, and what ``inspect`` prints of its
    case."""
    done = oloproof("diagnose", "latest", *GOLD, cwd=root, command=command)
    assert done.code == 0, done.out + done.err
    address = next(w for w in done.out.split() if w.startswith("sha256:"))
    assert_diagnosis_verified(root, address)
    shown = oloproof("inspect", address, cwd=root)
    assert shown.code == 0, shown.out + shown.err
    return done.out.splitlines(), shown.out.strip()


def test_a_recovery_says_how_many_repeats_had_no_verdict(tmp_path: Path) -> None:
    lines, case = diagnosed(project(tmp_path / "p", GOLD_TIMES_OUT))
    assert lines[2] == (
        "Recovered under gold context: 1 of 1; 1 recovered in 1 of 3 (2 without a verdict)"
    )
    assert lines[3] == (
        "RANKED_OUT: 1 of 1, recovered; relevant evidence was retrieved below the top-k cut"
    )
    assert case == (
        "damage: RANKED_OUT, relevant_ranked_out, recovered in 1 of 3 (2 without a verdict), "
        "strength intervention_recovery, best relevant position 2"
    )


def test_an_unstable_case_says_how_many_control_repeats_had_no_verdict(
    tmp_path: Path,
) -> None:
    lines, case = diagnosed(project(tmp_path / "p", CONTROL_LUCKY_ONCE))
    assert lines[1] == (
        "Control: 1 of 1 passed in at least one of 3 re-executions without the intervention"
    )
    assert case == (
        "damage: UNRESOLVED, passes_under_control, the control passed in 1 of 3 (2 without a "
        "verdict), strength control_recovery, best relevant position 2"
    )


def test_a_diagnosis_recorded_before_the_count_reads_as_it_was_made(tmp_path: Path) -> None:
    root = project(tmp_path / "p", GOLD_TIMES_OUT)
    lines, case = diagnosed(root, diagnosis_release(13))
    assert lines[2] == "Recovered under gold context: 1 of 1; 1 recovered in 1 of 3"
    assert "recovered in 1 of 3, strength" in case
