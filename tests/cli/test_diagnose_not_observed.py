"""A replay whose intervention gave no verdict says so; it never reads as "0 of N recovered".

Through the real CLI on the support example (its four failures on answer_correct), with a
reranker that raises, returns None, hangs past the case's timeout_s or calls sys.exit(0): every
case errors under the intervention, and the replay's output counts them UNRESOLVED, worded as
the gold-context output words them, before any carried gold-context labels. The count is part
of the stored summary, so ``verify`` re-derives it and the viewer shows it; a replay recorded before it was counted
(schema 3) still reads and verifies, and claims nothing about it.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.support import copy_example, normalise, oloproof
from tests.view.support import fetch, serving

from ledger import Event
from oloproof import events as ev
from oloproof.store import open_project_ledger

HOSTILE = """
import sys
import time


def raises(input, candidates):
    raise RuntimeError("the reranking service is down")


def nothing(input, candidates):
    return None


def hangs(input, candidates):
    time.sleep(30)
    return candidates


def exits(input, candidates):
    sys.exit(0)
"""

SELECTED_4 = "Selected: 4 failed cases with gold context (observed; no population claim)"
CONTROL_0 = "Control: 0 of 4 passed when re-executed without the intervention"
NOT_OBSERVED_4 = "UNRESOLVED: 4 of 4, the intervention gave no verdict (errored or missing)"
ANSWER = ["--criterion", "answer_correct"]


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = copy_example("support_rag", tmp_path_factory.mktemp("not_observed"))
    (root / "hostile.py").write_text(HOSTILE)
    config = root / "oloproof.yaml"
    config.write_text(config.read_text() + "timeout_s: 2\n")
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.err
    return root, done.lines[0].split()[1]


def rerank(root: Path, run_id: str, reranker: str) -> list[str]:
    done = oloproof(
        "diagnose", run_id, "--intervention", "reranker", "--reranker", reranker, *ANSWER, cwd=root
    )
    # diagnose decides nothing about a release: 0, whatever it found (docs/diagnosis.md).
    assert done.code == 0, done.out + done.err
    return done.lines


def stored(root: Path, address: str) -> dict[str, Any]:
    done = oloproof("inspect", address, "--json", cwd=root)
    assert done.code == 0, done.err
    found: dict[str, Any] = json.loads(done.out)
    return found


@pytest.mark.parametrize("reranker", ["raises", "nothing", "hangs", "exits"])
def test_a_reranker_that_never_ran_is_counted_unresolved_not_unrecovered(
    parent: tuple[Path, str], reranker: str
) -> None:
    root, run_id = parent
    label = f"reranker hostile:{reranker}"
    assert [normalise(x) for x in rerank(root, run_id, f"hostile:{reranker}")] == [
        SELECTED_4,
        CONTROL_0,
        f"Recovered under {label}: 0 of 4",
        NOT_OBSERVED_4,
        "No gold-context diagnosis of this run yet; run one to label the cases.",
        "Diagnosis sha256:…",
        f"Child runs: {label} run_…, replay control run_…",
        "Cases: oloproof inspect sha256:…",
    ]


def test_the_count_comes_before_the_carried_labels_and_verifies(
    parent: tuple[Path, str],
) -> None:
    root, run_id = parent
    gold = oloproof("diagnose", run_id, "--intervention", "gold-context", *ANSWER, cwd=root)
    assert gold.code == 0, gold.err
    out = rerank(root, run_id, "hostile:raises")
    lines = [normalise(x) for x in out]
    assert lines[:5] == [
        SELECTED_4,
        CONTROL_0,
        "Recovered under reranker hostile:raises: 0 of 4",
        NOT_OBSERVED_4,
        "Confirmed under reranker hostile:raises: 0 of 0 RANKED_OUT cases also recovered",
    ]
    assert lines[5] == "Labels from gold context (diagnosis sha256:…): 3 of 4 recovered"
    (address,) = [x.removeprefix("Diagnosis ") for x in out if x.startswith("Diagnosis ")]
    body = stored(root, address)
    assert body["body"]["summary"]["unresolved"] == [
        {"label": "UNRESOLVED", "reason": "intervention_not_observed", "count": 4}
    ]
    verified = oloproof("diagnose", "--verify", address, cwd=root)
    assert verified.code == 0, verified.out
    with serving(root) as url:
        status, page = fetch(f"{url}/diagnoses/{address}")
    assert status == 200, page
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))
    # The viewer counts them in the command's words, before the carried labels.
    recovered = "Recovered under reranker hostile:raises: 0 of 4"
    assert f"{recovered} {NOT_OBSERVED_4} Confirmed under" in text, text

    # A replay recorded before the count (schema 3) reads and verifies, and claims nothing.
    with open_project_ledger(root, create=False) as ledger:
        event = ledger.get(address)
        old_body = ev.plain(event.body)
        del old_body["summary"]["unresolved"]
        # Nor the count of cases whose context is unknown, which came with schema 13.
        del old_body["summary"]["budget_not_observed"]
        old = ledger.put(Event(ev.DIAGNOSIS, 3, old_body, event.refs))
        # The same body claimed at today's schema leaves out what verify re-derives.
        forged = ledger.put(Event(ev.DIAGNOSIS, ev.SCHEMAS[ev.DIAGNOSIS], old_body, event.refs))
    assert stored(root, old)["body"]["summary"]["unresolved"] is None
    assert oloproof("diagnose", "--verify", old, cwd=root).code == 0
    done = oloproof("diagnose", "--verify", forged, cwd=root)
    assert done.code == 1, done.out
    assert "summary.unresolved: stored None" in done.out
