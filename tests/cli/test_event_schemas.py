"""Every event a real project writes matches the published JSON Schema of its type
(``schemas/events/<type>.json``, from ``oloproof.bodies``), as Oloproof reads it.

The projects: support_rag run, diagnosed with gold context, run again with repeats over a
sample and compared; judge_gate run, calibrated against its labels and run again, with its
judge served over HTTP on 127.0.0.1. Between them they write every event type.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from tests.support import REPO, copy_example, oloproof, serving_judge_gate

from oloproof import events as ev
from oloproof.bodies import BODIES
from oloproof.store import open_project_ledger

SCHEMAS = REPO / "schemas" / "events"


# The judge_gate example reads its judge's key from the environment (any value: the server on
# 127.0.0.1 only checks that one is sent).
ENV = {"JUDGE_GATE_KEY": "sk-schema-test"}


def ok(root: Path, *args: str) -> str:
    done = oloproof(*args, cwd=root, env=ENV)
    assert done.code in (0, 1, 3), (args, done.err)
    return done.out


def problems(root: Path) -> tuple[set[str], list[str]]:
    """The event types seen, and every event that does not match its schema (and why)."""
    validators = {
        kind: Draft202012Validator(json.loads((SCHEMAS / f"{kind}.json").read_text()))
        for kind in BODIES
    }
    seen: set[str] = set()
    found: list[str] = []
    with open_project_ledger(root) as ledger:
        for address, event in ledger.events():
            seen.add(event.type)
            body: Any = ev.plain(event.body)
            for error in validators[event.type].iter_errors(body):
                found.append(f"{event.type} {address}: {error.json_path}: {error.message}")
    return seen, found


def test_every_event_of_real_runs_matches_its_schema(tmp_path: Path) -> None:
    assert set(BODIES) == set(ev.SCHEMAS)
    support = copy_example("support_rag", tmp_path / "support")
    first = ok(support, "run").split()[1]
    ok(
        support,
        "diagnose",
        first,
        "--intervention",
        "gold-context",
        "--criterion",
        "answer_correct",
    )
    second = ok(support, "run", "--sample", "8", "--seed", "3", "--repeats", "2").split()[1]
    ok(support, "compare", second, first, "--policy", "compare.yaml")
    seen, found = problems(support)
    assert found == []

    with serving_judge_gate(tmp_path / "judge") as (judge, _server):
        ok(judge, "run")
        ok(judge, "calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl")
        ok(judge, "run")
        more, found = problems(judge)
    assert found == []
    assert seen | more == set(ev.SCHEMAS)
