"""``inspect DIAGNOSIS`` lists the cases behind every Excluded line, through the real CLI.

``diagnose`` counts the failed cases it excluded (no gold context, no verdict) and points to
``inspect`` for the cases behind each count. ``inspect`` ends with the same lines, each with the
ids of its cases under it, also when no case was selected at all; past a bound it says how many
more there are, and ``--json`` carries every excluded case.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support import copy_example, normalise, oloproof, write_project

EXCLUDED = (
    "Excluded: {n} failed cases, no_gold_context - declare the passages that would have "
    "answered the case in its `expected.gold_context`, as a list of `{{doc_id, text}}` objects; "
    "an intervention needs them to tell a retrieval failure from a generation one"
)
GOLD = ["--intervention", "gold-context", "--criterion", "answer_correct"]


def without_gold(root: Path, case_ids: set[str]) -> None:
    cases = root / "cases.jsonl"
    rows = [json.loads(line) for line in cases.read_text().splitlines()]
    for row in rows:
        if row["id"] in case_ids:
            del row["expected"]["gold_context"]
    cases.write_text("".join(json.dumps(row) + "\n" for row in rows))


def diagnose(root: Path) -> str:
    """Run the project and diagnose the run; the diagnosis's address."""
    done = oloproof("run", cwd=root)
    assert done.code in (0, 1, 3), done.out + done.err
    diagnosed = oloproof("diagnose", done.lines[0].split()[1], *GOLD, cwd=root)
    assert diagnosed.code == 0, diagnosed.out + diagnosed.err
    (line,) = [line for line in diagnosed.lines if line.startswith("Diagnosis sha256:")]
    return line.split()[1]


def inspected(root: Path, address: str) -> tuple[list[str], Any]:
    """``inspect`` of a diagnosis: its lines, and its --json."""
    shown = oloproof("inspect", address, cwd=root)
    assert shown.code == 0, shown.err
    data = oloproof("inspect", address, "--json", cwd=root)
    assert data.code == 0, data.err
    return shown.lines, json.loads(data.out)


FAILING = {"money_back", "refund_review", "seat_count", "security_review"}  # of support_rag


def test_the_cases_without_gold_context_are_listed_after_the_selected_ones(
    tmp_path: Path,
) -> None:
    support = copy_example("support_rag", tmp_path)
    without_gold(support, {"refund_review", "money_back"})
    address = diagnose(support)
    lines, data = inspected(support, address)
    assert lines == [
        "seat_count: GENERATION_FAILURE, fails_with_gold_context, strength "
        "intervention_non_recovery, best relevant position 1",
        "security_review: CONTEXT_ASSEMBLY_LOSS, relevant_dropped_from_context, strength "
        "intervention_recovery, best relevant position 2",
        EXCLUDED.format(n=2),
        "  money_back, refund_review",
    ]
    assert data["excluded"] == [
        {"case_id": "money_back", "reason": "no_gold_context"},
        {"case_id": "refund_review", "reason": "no_gold_context"},
    ]
    assert data["body"]["summary"]["excluded"] == 2


def test_when_no_case_has_gold_context_inspect_says_which_failed(tmp_path: Path) -> None:
    support = copy_example("support_rag", tmp_path)
    without_gold(support, FAILING)
    address = diagnose(support)
    lines, data = inspected(support, address)
    assert lines == [
        "No case was selected.",
        EXCLUDED.format(n=4),
        "  money_back, refund_review, seat_count, security_review",
    ]
    assert [r["case_id"] for r in data["excluded"]] == sorted(FAILING)


APP = """
from oloproof import system


@system(name="wrong", version="1")
def answer(case):
    if case["q"] == "boom":
        raise RuntimeError("the model server went away")
    return {"answer": "no"}
"""

CONFIG = """\
system: {name: wrong, version: "1", callable: "app:answer"}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
"""


MANY = [f"case{n:02d}" for n in range(25)]


def many_excluded(dest: Path) -> Path:
    """A project in ``dest`` whose run fails the 25 cases of MANY, none with gold context, and
    errors one more (``boom``)."""
    return write_project(
        dest / "many",
        app=APP,
        config=CONFIG,
        policy="version: 1\nrules: []\n",
        cases=[
            *({"id": i, "input": {"q": i}, "expected": {"answer": "yes"}} for i in MANY),
            {"id": "boom", "input": {"q": "boom"}, "expected": {"answer": "yes"}},
        ],
    )


def test_many_excluded_cases_are_named_up_to_a_bound_and_json_lists_them_all(
    tmp_path: Path,
) -> None:
    root = many_excluded(tmp_path)
    address = diagnose(root)
    lines, data = inspected(root, address)
    assert [normalise(line) for line in lines] == [
        "No case was selected.",
        EXCLUDED.format(n=25),
        "  "
        + ", ".join(MANY[:20])
        + " and 5 more (oloproof inspect sha256:… --json lists them all)",
        "Excluded: 1 case with no verdict on answer_correct in the parent run (1 "
        "execution_errored), so whether it failed is unknown - oloproof inspect run_… "
        "--failures shows why",
        "  boom (execution_errored)",
    ]
    assert address in lines[2]
    assert data["excluded"] == [
        *({"case_id": i, "reason": "no_gold_context"} for i in MANY),
        {"case_id": "boom", "reason": "no_verdict", "why": "execution_errored"},
    ]
