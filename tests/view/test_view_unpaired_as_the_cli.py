"""The comparison page says why cases were not paired in ``compare``'s words, not its codes.

The probe: a candidate that raised on q0 and q1, and whose q5 had its input edited since the
baseline. ``compare`` printed ``not paired 1: input differs (q5)`` and ``not paired 2: errored
in candidate (q0, q1)``; the viewer's comparison page, served and exported, printed ``1 case(s)
not paired: input_differs`` and ``2 case(s) not paired: errored_in_candidate``: the recorded
codes, and not which cases. (Its line for planned cases that never ran said ``not_run`` where
``compare`` says ``not run``.) The page now prints the lines ``compare`` prints, from one
function, checked here against the CLI's output.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support import oloproof, write_project
from tests.view.support import ADDRESS, RUN_ID, fetch, serving

APP = """
import os
from oloproof import system

@system(name="s", version="1")
def answer(case):
    if os.environ.get("BREAK") and case["q"] in ("q0", "q1"):
        raise RuntimeError("broken")
    return {"answer": case["q"]}
"""
CONFIG = """\
system: {name: s, version: "1", callable: app:answer}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""


def _cases(root: Path, edited: bool) -> None:
    lines = []
    for i in range(6):
        question = "q5 edited" if edited and i == 5 else f"q{i}"
        lines.append({"id": f"q{i}", "input": {"q": question}, "expected": {"answer": f"q{i}"}})
    (root / "cases.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def _warnings(html: str) -> list[str]:
    return re.findall(r'<p class="warn">([^<]*)</p>', html)


def test_the_page_says_why_cases_are_not_paired_as_the_cli(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=CONFIG,
        policy="version: 1\nrules:\n  - {id: floor, metric: answered, min: 0.1}\n",
        cases=[],
    )
    _cases(root, edited=False)
    baseline = RUN_ID.findall(oloproof("run", cwd=root).out)[0]
    _cases(root, edited=True)
    candidate = oloproof("run", "--no-cache", cwd=root, env={"BREAK": "1"})
    candidate_id = RUN_ID.findall(candidate.out)[0]
    compared = oloproof("compare", candidate_id, baseline, cwd=root)
    assert compared.code == 0, compared.out + compared.err
    said = [line for line in compared.lines if line.startswith("not paired")]
    assert said == [
        "not paired 1: input differs (q5)",
        "not paired 2: errored in candidate (q0, q1)",
    ], compared.out
    address = ADDRESS.findall(compared.out)[0]

    # Was: "1 case(s) not paired: input_differs", "2 case(s) not paired: errored_in_candidate".
    with serving(root) as base:
        status, html = fetch(f"{base}/comparisons/{address}")
    assert status == 200, html
    assert [w for w in _warnings(html) if w.startswith("not paired")] == said
    site = tmp_path / "site"
    exported = oloproof("view", "--export", str(site), candidate_id, baseline, cwd=root)
    assert exported.code == 0, exported.out + exported.err
    (page,) = (site / "comparisons").glob("*/index.html")
    assert [w for w in _warnings(page.read_text()) if w.startswith("not paired")] == said
