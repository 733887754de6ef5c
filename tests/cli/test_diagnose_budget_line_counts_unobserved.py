"""The "Undone by the token budget" line says how many cases it could not look at, through the
real CLI on a real retriever (BM25 over the Python documentation, tests/fixtures/pydocs_rag).

Whether the budget dropped a passage a replay admitted is read from the context the replay
assembled, which the ledger holds only for an execution that ran to the end. The probe: the
same top-k 20 replay of the same recorded retrievals printed 'Undone by the token budget: 27 of
87' for the project's system and '... 7 of 87' for one whose generate raised on every context
holding a passage past the run's cut (65 of the 87 cases); the cases it raised on vanished from
the count without a word, so "the budget undid 7" read as the whole finding. Now the line names
them: '...; 65 more not observed (no execution of theirs under the intervention ran to the
end), so whether the budget undid it there is unknown' (diagnosis schema 13; a diagnosis of
schema 12 reads and re-derives as it was made).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support import REPO, diagnosis_release, oloproof, stored_event

FIXTURE = REPO / "tests" / "fixtures" / "pydocs_rag"

# The project's system, with a generate that raises on any context holding a passage past the
# run's own cut of 5: under a wider cut it errors exactly where the cut admitted something.
RAISES_PAST_THE_CUT = """


@rag_system(name="pydocs-bm25", version="1", depth=20, top_k=5, token_budget=150)
class RaisesPastTheCut(PyDocsRag):
    def generate(self, input: dict[str, Any], context: Context) -> dict[str, Any]:
        if any(item.position > 5 for item in context.items):
            raise RuntimeError("a passage from past the run's cut")
        return answer(input["question"], [(i.doc_id, i.text or "") for i in context.items])
"""

TOP_K_20 = ("--intervention", "top-k", "--top-k", "20", "--criterion", "answer_correct")
UNDONE = re.compile(
    r"Undone by the token budget: (\d+) of (\d+), .*?(?:; (\d+) more not observed|$)"
)


def project(dest: Path, system: str = "") -> Path:
    """The fixture project run once, its system ``PyDocsRag`` or, given, one added to app.py."""
    root = shutil.copytree(FIXTURE, dest, ignore=shutil.ignore_patterns("__pycache__", ".oloproof"))
    if system:
        with (root / "app.py").open("a", encoding="utf-8") as app:
            app.write(system)
        config = root / "oloproof.yaml"
        config.write_text(config.read_text().replace("app:PyDocsRag", "app:RaisesPastTheCut"))
    subprocess.run([sys.executable, "make_cases.py"], cwd=root, check=True, timeout=120)
    assert oloproof("run", cwd=root, timeout=600).code in (0, 1, 3)
    return root


def diagnosed(
    root: Path, command: tuple[str, ...] = ("-m", "oloproof")
) -> tuple[str, dict[str, int], str]:
    """The Undone line of a top-k 20 diagnosis of ``root``'s run, its numbers and its address."""
    done = oloproof("diagnose", "latest", *TOP_K_20, cwd=root, timeout=600, command=command)
    assert done.code == 0, done.err
    undone = [line for line in done.lines if line.startswith("Undone by the token budget")]
    assert len(undone) == 1, done.out
    found = UNDONE.match(undone[0])
    assert found is not None, undone[0]
    unresolved = re.search(r"UNRESOLVED: (\d+) of \d+, the intervention gave no verdict", done.out)
    address = done.out.split("Diagnosis ")[1].split()[0]
    return (
        undone[0],
        {
            "undone": int(found[1]),
            "selected": int(found[2]),
            "unobserved": int(found[3] or 0),
            "errored": int(unresolved[1]) if unresolved else 0,
        },
        address,
    )


def test_the_cases_the_budget_line_could_not_read_are_counted(tmp_path: Path) -> None:
    raising = project(tmp_path / "raising", RAISES_PAST_THE_CUT)
    _, seen, _ = diagnosed(project(tmp_path / "plain"))
    assert seen["errored"] == seen["unobserved"] == 0

    line, partly, address = diagnosed(raising)
    assert partly["selected"] == seen["selected"]  # the same failures: the run's cut is kept
    # Every case the generate raised on is said to be unobserved, and the rest are counted as
    # the plain system's are: together they account for every case the budget undid there.
    assert partly["errored"] > 0
    assert partly["unobserved"] == partly["errored"], line
    assert partly["undone"] < seen["undone"] <= partly["undone"] + partly["unobserved"]
    assert line.endswith(
        f"; {partly['unobserved']} more not observed (no execution of theirs under the "
        "intervention ran to the end), so whether the budget undid it there is unknown"
    ), line
    stored = json.loads(oloproof("inspect", address, "--json", cwd=raising).out)
    assert stored["schema"] == 14
    assert stored["body"]["summary"]["budget_not_observed"] == partly["unobserved"]
    assert oloproof("diagnose", "--verify", address, cwd=raising).code == 0


def test_a_diagnosis_recorded_before_re_derives_as_it_was_made(tmp_path: Path) -> None:
    raising = project(tmp_path / "raising", RAISES_PAST_THE_CUT)
    line, partly, address = diagnosed(raising, command=diagnosis_release(12))
    assert partly["errored"] > 0 and partly["unobserved"] == 0, line
    schema, body = stored_event(raising, "oloproof.diagnosis")
    assert schema == 12
    assert "budget_not_observed" not in body["summary"]
    verified = oloproof("diagnose", "--verify", address, cwd=raising)
    assert verified.code == 0, verified.out
    everything = oloproof("verify", cwd=raising, timeout=600)
    assert everything.code == 0, everything.out + everything.err
