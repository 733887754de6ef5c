"""Every child run of a diagnosis generates its answers itself, the intervention as its control.

A system that answers right, given a case's gold passage, only the first time it is asked (as a
model at a non-zero temperature may) is diagnosed twice in a row through the real CLI. The
second diagnosis asks again and recovers nothing; it used to read the first one's answers from
the stage cache and print the same recoveries, as if it had observed them again. With
``--reuse-generations`` the intervention reads the stored answers, and the output says how many
and how to generate them afresh.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.support import GOLD_RETRIEVE, child_run_reports, gold_context_project, oloproof

APP = (
    '''
from pathlib import Path

from oloproof import Passage, Retrieval, rag_system

ASKED = Path(__file__).parent / "asked"


def times_asked(question):
    """How many times generate has been given this question's gold passage, this call included."""
    ASKED.mkdir(exist_ok=True)
    count = ASKED / question
    n = int(count.read_text()) + 1 if count.exists() else 1
    count.write_text(str(n))
    return n


@rag_system(name="once", version="1", depth=2, top_k=1, index_version="k")
class Once:'''
    + GOLD_RETRIEVE
    + """
    def generate(self, input, context):
        if context.source == "gold" and times_asked(input["question"]) == 1:
            return {"answer": context.items[0].text}
        return {"answer": "no idea"}
"""
)

CONFIG = """
system:
  name: once
  version: "1"
  rag: {object: app:Once}
dataset: cases.jsonl
concurrency: 1
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
"""

QUESTIONS = ["q1", "q2", "q3", "q4"]
GOLD = ["--intervention", "gold-context", "--criterion", "answer_correct"]
ADDRESS = re.compile(r"sha256:[0-9a-f]{64}")
RUN_ID = re.compile(r"run_[0-9A-Z]{26}")
REUSED = (
    "Reused: 4 of 4 generations of the gold context run were read from the stage cache, not "
    "generated again; diagnose without --reuse-generations to generate them afresh"
)


def once_project(root: Path) -> tuple[Path, str]:
    """The project written in ``root`` and run once: (its folder, the run id)."""
    return root, gold_context_project(root, app=APP, config=CONFIG, questions=QUESTIONS)


@pytest.fixture()
def project(tmp_path: Path) -> tuple[Path, str]:
    return once_project(tmp_path / "once")


def ok(*args: str, cwd: Path) -> list[str]:
    done = oloproof(*args, cwd=cwd)
    assert done.code == 0, done.out + done.err
    return done.lines


def asked(root: Path) -> dict[str, int]:
    return {q: int((root / "asked" / q).read_text()) for q in QUESTIONS}


def generate_counts(root: Path, lines: list[str]) -> list[list[int]]:
    """[hits, misses] of the generate stage of each child run the output names, in order."""
    return [report["stages"]["generate"] for report in child_run_reports(root, lines)]


def test_a_diagnosis_made_again_asks_the_system_again(project: tuple[Path, str]) -> None:
    root, run_id = project
    first = ok("diagnose", run_id, *GOLD, cwd=root)
    assert "Recovered under gold context: 4 of 4" in first
    again = ok("diagnose", run_id, *GOLD, cwd=root)
    # Asked a second time, the system no longer answers: nothing recovered, and nothing claims
    # an answer was reused.
    assert "Recovered under gold context: 0 of 4" in again
    assert "GENERATION_FAILURE: 4 of 4, still failed with the gold context" in again
    assert not [line for line in again if line.startswith("Reused:")]
    assert asked(root) == {q: 2 for q in QUESTIONS}
    assert generate_counts(root, again) == [[0, 4], [0, 4]]


def test_reused_generations_are_said_to_be_reused(project: tuple[Path, str]) -> None:
    root, run_id = project
    ok("diagnose", run_id, *GOLD, cwd=root)
    lines = ok("diagnose", run_id, *GOLD, "--reuse-generations", cwd=root)
    assert "Recovered under gold context: 4 of 4" in lines
    assert lines[-4:-3] == [REUSED]  # just before the Diagnosis line
    assert asked(root) == {q: 1 for q in QUESTIONS}
    # The control generates afresh all the same.
    assert generate_counts(root, lines) == [[4, 0], [0, 4]]
    address = ADDRESS.findall(lines[-1])[0]
    assert ok("inspect", address, cwd=root)[-1] == REUSED
    ok("diagnose", "--verify", address, cwd=root)


def test_the_json_forms_count_the_reused_generations_per_child_run(
    project: tuple[Path, str],
) -> None:
    root, run_id = project
    fresh = json.loads("\n".join(ok("diagnose", run_id, *GOLD, "--json", cwd=root)))
    # Nothing read from the cache: no field, as no Reused line is printed.
    assert "reused_generations" not in fresh
    shown = json.loads("\n".join(ok("inspect", fresh["address"], "--json", cwd=root)))
    assert "reused_generations" not in shown

    data = json.loads(
        "\n".join(ok("diagnose", run_id, *GOLD, "--reuse-generations", "--json", cwd=root))
    )
    gold, control = data["diagnosis"]["child_runs"]
    assert (gold["role"], control["role"]) == ("intervention", "control")
    counted = [
        {
            "label": "gold context",
            "role": "intervention",
            "run_id": gold["run_id"],
            "reused": 4,
            "generations": 4,
        }
    ]
    assert data["reused_generations"] == counted
    shown = json.loads("\n".join(ok("inspect", data["address"], "--json", cwd=root)))
    assert shown["reused_generations"] == counted


def test_reusing_generations_with_repeats_is_refused(project: tuple[Path, str]) -> None:
    root, run_id = project
    before = ok("runs", "--all", "--json", cwd=root)
    done = oloproof("diagnose", run_id, *GOLD, "--reuse-generations", "--repeats", "2", cwd=root)
    assert done.code == 2, done.out + done.err
    assert done.out == ""
    assert done.err == (
        "error: --reuse-generations cannot go with --repeats 2: a repeat that reads stored "
        "generations repeats nothing; leave out one of the two\n"
    )
    assert ok("runs", "--all", "--json", cwd=root) == before
