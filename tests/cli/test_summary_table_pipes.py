"""The Markdown summary's tables read back cell by cell, with a GFM table parser
(markdown-it's, which splits rows as GitHub's does), whatever the case ids hold: a "|" inside a
code span ends a table cell too, and "\\|" there is read as "|"."""

from __future__ import annotations

import itertools
import json
import shlex
from pathlib import Path

from markdown_it import MarkdownIt
from tests.support import answered_project, oloproof

# Answers its question, or, with FLIP set, nothing any case expects: every case regresses.
APP = """
import os

def answer(case):
    return {"answer": "nope" if os.environ.get("FLIP") else case["q"]}
"""
IDS = ("a|b", "x\\|y", "`t` | z", "plain")


def _tables(markdown: str) -> list[list[list[str]]]:
    """Every table: its rows, each cell as the text a reader sees."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    tables: list[list[list[str]]] = []
    for before, token in itertools.pairwise(tokens):
        if token.type == "table_open":
            tables.append([])
        elif token.type == "tr_open":
            tables[-1].append([])
        elif token.type == "inline" and before.type in ("th_open", "td_open"):
            tables[-1][-1].append("".join(child.content for child in token.children or []))
    return tables


def test_changed_cases_keep_their_cells_and_their_commands(tmp_path: Path) -> None:
    root = answered_project(tmp_path / "p", APP, cases=len(IDS))
    cases = root / "cases.jsonl"
    lines = [json.loads(line) for line in cases.read_text().splitlines()]
    cases.write_text(
        "".join(json.dumps({**c, "id": i}) + "\n" for c, i in zip(lines, IDS, strict=True))
    )
    base = oloproof("run", cwd=root)
    cand = oloproof("run", "--no-cache", cwd=root, env={"FLIP": "1"})
    assert base.code == cand.code == 3, base.err + cand.err  # 4 cases decide nothing
    base_id, cand_id = base.lines[0].split()[1], cand.lines[0].split()[1]
    done = oloproof("compare", cand_id, base_id, "--summary", "c.md", cwd=root)
    assert done.code == 0, done.err

    changed = _tables((root / "c.md").read_text())[-1]
    assert changed[0] == ["metric", "case", "baseline", "candidate", "see"]
    assert changed[1:] == [
        ["answered", i, "pass", "fail", f"oloproof inspect {cand_id} --case {shlex.quote(i)}"]
        for i in IDS
    ]
