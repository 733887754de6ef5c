"""A comparison's Markdown summary stays the size of a pull request comment with long case ids.

``compare --summary`` listed the first ``SUMMARY_FLIPS`` changed cases whatever their length:
a row holds the id twice (its cell and its command), so 100 ids of some 300 characters made a
summary of 73,842 characters, and GitHub refuses a comment of more than 65,536 whole. It now
lists as many as fit, then says how many more there are and which command lists them all.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import answered_project, oloproof

from oloproof.cli.ci_compare import SUMMARY_FLIPS

COMMENT_CHARS = 65_536  # the most a GitHub pull request comment holds

# Answers its question, or, with FLIP set, nothing any case expects: every case regresses.
APP = """
import os

def answer(case):
    return {"answer": "nope" if os.environ.get("FLIP") else case["q"]}
"""


def test_long_ids_list_fewer_changed_cases_within_a_comment(tmp_path: Path) -> None:
    count = SUMMARY_FLIPS + 20
    root = answered_project(tmp_path / "p", APP, cases=count)
    cases = root / "cases.jsonl"
    lines = [json.loads(line) for line in cases.read_text().splitlines()]
    ids = [f"refund-policy-question-{n:04d}-" + "x" * 280 for n in range(count)]
    cases.write_text(
        "".join(json.dumps({**c, "id": i}) + "\n" for c, i in zip(lines, ids, strict=True))
    )
    assert oloproof("run", cwd=root).code == 0
    assert oloproof("run", "--no-cache", cwd=root, env={"FLIP": "1"}).code == 1
    cand, base = (r["run_id"] for r in json.loads(oloproof("runs", "--json", cwd=root).out))

    done = oloproof("compare", cand, base, "--summary", "s.md", cwd=root)
    assert done.code == 0, done.err
    text = (root / "s.md").read_text()
    assert len(text) <= COMMENT_CHARS, len(text)
    rows = [line for line in text.splitlines() if line.startswith("| answered | refund")]
    assert 0 < len(rows) < SUMMARY_FLIPS
    assert [row.split(" | ")[1] for row in rows] == ids[: len(rows)]
    more = f"and {count - len(rows)} more changed cases, not listed here: `oloproof inspect sha256:"
    assert any(line.startswith(more) for line in text.splitlines()), text[-400:]
