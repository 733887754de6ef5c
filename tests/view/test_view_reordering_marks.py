"""Marks that reorder text, in a system's output, error and retrieval, are shown as escapes.

The probe: a system whose error was ``boom \\u202eexe.txt`` (U+202E, RIGHT-TO-LEFT OVERRIDE)
and whose output and retrieved passage held the same mark and an isolate (U+2067). ``oloproof
run`` printed the error as ``RuntimeError: boom \\u202eexe.txt``; the viewer wrote the marks
into its pages as they were, so a browser showed the error as ``boom txt.exe`` and the rest of
each line after a mark (the closing quote of the output, the passage's name in the ranking)
reversed or reordered: what the page showed was not what the system returned. Every page,
served and exported, now writes each such mark as its escape, as ``run`` and the Markdown
summary do.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page
from tests.support import oloproof, write_project
from tests.view.support import RUN_ID, serving
from tests.view.test_view_browser import page  # noqa: F401  (the browser fixture)

APP = """
from oloproof import Passage, Retrieval, current_case, system


@system(name="marks", version="1", records=("retrieval/v1",))
def run(case):
    if case["q"] == "raise":
        raise RuntimeError("boom \\u202eexe.txt")
    current_case().retrieval(Retrieval(query="q", depth=1, candidates=(
        Passage(doc_id="doc\\u2067 1", text="passage"),)))
    return {"answer": "no \\u202e it is"}
"""
CONFIG = """\
system: {name: marks, version: "1", callable: "app:run"}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
"""
MARKS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def test_no_page_reorders_what_a_system_returned(tmp_path: Path, page: Page) -> None:  # noqa: F811
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=CONFIG,
        policy="version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.1}\n",
        cases=[
            {"id": "raises", "input": {"q": "raise"}, "expected": {"answer": "yes"}},
            {"id": "answers", "input": {"q": "x"}, "expected": {"answer": "yes"}},
        ],
    )
    done = oloproof("run", cwd=root)
    assert "RuntimeError: boom \\u202eexe.txt (first: raises)" in done.out, done.out + done.err
    run_id = RUN_ID.findall(done.out)[0]
    site = tmp_path / "site"
    exported = oloproof("view", "--export", str(site), run_id, cwd=root)
    assert exported.code == 0, exported.out + exported.err
    error, output, passage = "boom \\u202eexe.txt", "no \\u202e it is", "doc\\u2067 1"
    # Each page: its address served, its file exported, and what it must show.
    shown = [
        (f"runs/{run_id}", f"runs/{run_id}/index.html", [error]),
        (f"runs/{run_id}/failures", f"runs/{run_id}/failures/all-1.html", [error, output]),
        (f"runs/{run_id}/cases/raises", f"runs/{run_id}/cases/raises.html", [error]),
        (f"runs/{run_id}/cases/answers", f"runs/{run_id}/cases/answers.html", [output, passage]),
    ]
    with serving(root) as url:
        for served, exported_file, texts in shown:
            for address in (f"{url}/{served}", (site / exported_file).as_uri()):
                page.goto(address)
                html = page.content()
                assert not any(mark in html for mark in MARKS), address
                text = page.locator("main").inner_text()
                for expected in texts:
                    assert expected in text, (address, expected)
