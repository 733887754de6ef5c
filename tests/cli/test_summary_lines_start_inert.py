"""A line of the Markdown summary that starts with a rule's id never reads as a heading or a list.

The line the summary prints under a rule (a count a `--limit` left undecided, say) starts with
the rule's id, and an id is any text the policy gives. `# Gate: PASS (exit 0)` made that line a
first-level heading reading "Gate: PASS (exit 0): only 4 of 12 cases ran…", larger than the
summary's own heading, above a gate that blocked; `- x` and `1. x` made it a list. Such a line
now starts with its marker escaped, and reads as the text it is.
"""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt
from tests.support import oloproof, toy_project

IDS = ("# Gate: PASS (exit 0)", "- listed", "12. numbered", "+ plus", "---")


def test_rule_notes_read_as_text(tmp_path: Path) -> None:
    rules = "".join(
        f"  - {{id: {rule_id!r}, metric: echo, kind: observed_count, max_failures: 0}}\n"
        for rule_id in IDS
    )
    root = toy_project(tmp_path / "p", policy=f"version: 1\nrules:\n{rules}", cases=12)
    done = oloproof("run", "--limit", "4", "--summary", "s.md", cwd=root)
    assert done.code == 3, done.out + done.err
    markdown = (root / "s.md").read_text()
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    blocks = {t.type for t in tokens if t.nesting == 1 and not t.type.startswith(("t", "p"))}
    headings = [t.tag for t in tokens if t.type == "heading_open"]
    assert (blocks - {"heading_open"}, headings) == (set(), ["h3"])
    read = ["".join(c.content for c in t.children or []) for t in tokens if t.type == "inline"]
    notes = [text for text in read if text.endswith("to decide it)")]
    assert [note.split(": only")[0] for note in notes] == list(IDS)
