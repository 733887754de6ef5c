"""A comparison's Markdown summary says, as the terminal does, which metrics were judged
differently in the two runs and which were not compared at all.

The probe: a baseline that answered 6 of 30 cases wrong, and a candidate that answered every
one right but was judged by a changed evaluator (`case_sensitive: true`) and measured one more
metric. The terminal printed `judged differently: the evaluator differs between the runs …`
under the metric and `not compared: exact (only in candidate)`; the `--summary` written for the
pull request showed `| echo | +20.0 points | [-3.6, +46.5] | 30 | 0 | 0 |` with neither line, so a
gain the change of evaluator may have made read as the system's, and a metric the baseline
never measured vanished. The summary now carries both lines, in the terminal's words, and the `not paired` lines that
say why cases count as missing (`not paired 6: errored in candidate (c0, …)`), which it left
to a bare count.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support import oloproof, write_project

from oloproof.cli.ci_compare import COMMENT_CHARS

APP = """
from oloproof import system


@system(name="toy", version="1")
def base(case):
    return {"answer": "y" if case["hard"] else case["q"]}


@system(name="toy", version="2")
def cand(case):
    if case["hard"]:
        raise RuntimeError("upstream timeout")
    return {"answer": case["q"]}


@system(name="toy", version="3")
def fixed(case):
    return {"answer": case["q"]}
"""
CONFIG = """\
system: {{name: toy, version: "{version}", callable: "app:{callable}"}}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {{type: contains, criterion: echo, field: answer, expected_field: answer{more}}}
"""
JUDGED = (
    "echo: judged differently: the evaluator differs between the runs (its settings, or the "
    "version of its code)"
)


# Thirty cases, the first six hard (the candidate systems treat them otherwise).
_THIRTY = [
    {"id": f"c{n}", "input": {"q": "x", "hard": n < 6}, "expected": {"answer": "x"}}
    for n in range(30)
]


def _baseline(tmp_path: Path, cases: list[dict[str, Any]]) -> tuple[Path, str]:
    """The project of ``cases`` run by the base system (version 1): its folder and the run's id."""
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=CONFIG.format(version="1", callable="base", more=""),
        policy="version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.1}\n",
        cases=cases,
    )
    return root, json.loads(oloproof("run", "--json", cwd=root).out)["run_id"]


def test_the_summary_says_judged_differently_and_not_compared(tmp_path: Path) -> None:
    root, baseline = _baseline(tmp_path, _THIRTY)
    changed = CONFIG.format(version="3", callable="fixed", more=", case_sensitive: true")
    (root / "oloproof.yaml").write_text(
        changed + "  - {type: equals, criterion: exact, field: answer, expected_field: answer}\n"
    )
    candidate = json.loads(oloproof("run", "--json", cwd=root).out)["run_id"]
    done = oloproof("compare", candidate, baseline, "--summary", "s.md", cwd=root)
    assert done.code == 0, done.err
    # The terminal says both.
    assert "  " + JUDGED.removeprefix("echo: ") in done.lines
    assert "not compared: exact (only in candidate)" in done.lines
    summary = (root / "s.md").read_text().splitlines()
    assert "| echo | +20.0 points | [-3.6, +46.5] | 30 | 0 | 0 |" in summary
    # Were absent: the gain read as the system's, and the metric the baseline lacks vanished.
    assert JUDGED in summary
    assert "not compared: exact (only in candidate)" in summary


def test_the_summary_says_why_cases_were_not_paired(tmp_path: Path) -> None:
    root, baseline = _baseline(tmp_path, _THIRTY)
    (root / "oloproof.yaml").write_text(CONFIG.format(version="2", callable="cand", more=""))
    candidate = json.loads(oloproof("run", "--json", cwd=root).out)["run_id"]
    done = oloproof("compare", candidate, baseline, "--summary", "s.md", cwd=root)
    assert done.code == 0, done.err
    said = "not paired 6: errored in candidate (c0, c1, c2, c3, c4 and 1 more)"
    assert said in done.lines
    summary = (root / "s.md").read_text().splitlines()
    assert "| echo | +0.0 points | [-16.5, +46.5] | 24 | 6 | 0 |" in summary
    assert said in summary  # was only the count of 6 missing


def test_not_paired_lines_of_long_ids_keep_the_summary_within_a_comment(tmp_path: Path) -> None:
    # Five ids of 20,000 characters on one not paired line made a summary of 100,445 characters,
    # which GitHub refuses whole: the line then counts its cases without naming them.
    cases = [
        {
            "id": f"c{n}-" + "x" * 20_000,
            "input": {"q": "x", "hard": True},
            "expected": {"answer": "x"},
        }
        for n in range(6)
    ]
    root, baseline = _baseline(tmp_path, cases)
    (root / "oloproof.yaml").write_text(CONFIG.format(version="2", callable="cand", more=""))
    candidate = json.loads(oloproof("run", "--json", cwd=root).out)["run_id"]
    done = oloproof("compare", candidate, baseline, "--summary", "s.md", cwd=root)
    assert done.lines[1].startswith("not paired 6: errored in candidate (c0-xxx")
    text = (root / "s.md").read_text()
    assert len(text) <= COMMENT_CHARS
    assert "not paired 6: errored in candidate" in text.splitlines()
