"""Two slice values that differ never print alike, and a value never acts on the terminal.

Slices group cases by the text of a metadata value. The probe, through the real CLI: values
``a`` and ``a `` (a trailing space), ``café`` composed (NFC) and decomposed (NFD), an empty
string, a value with a line break and one with an escape sequence. The report printed each as
it was: two rows read ``a``, two read ``café``, one read as nothing, the line break broke the
table in two and the escape sequence coloured the terminal red. ``compare --slices`` did the
same. Now a value whose characters do not all show as themselves (``dataset.id_problem``: a
space at either end, a control, an invisible character), that is not in composed form, that
is empty or that starts with a quote prints quoted and escaped (Python's ``ascii``); any other
value prints as it is. ``--json`` keeps the values themselves.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from pathlib import Path

from tests.support import oloproof, write_project
from tests.view.support import fetch, serving

APP = """
import os

from oloproof import system

@system(name="echo", version=os.environ.get("TOY_VERSION", "1"))
def run(case):
    return {"answer": case["q"]}
"""
CONFIG = """\
system: {name: echo, version: "1", callable: app:run}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
slices: [metadata.k]
min_slice_support: 1
"""
NFC, NFD = unicodedata.normalize("NFC", "café"), unicodedata.normalize("NFD", "café")
# Each value, and how the slice lines print it.
VALUES = {
    "a": "a",
    "a ": "'a '",
    NFC: NFC,
    NFD: "'cafe\\u0301'",
    "": "''",
    "line\nbreak": "'line\\nbreak'",
    "\x1b[31mred": "'\\x1b[31mred'",
    "'a'": "\"'a'\"",
}


def _project(root: Path) -> Path:
    cases = [
        {"id": f"c{i}", "input": {"q": "x"}, "expected": {"answer": "x"}, "metadata": {"k": v}}
        for i, v in enumerate(VALUES)
    ]
    return write_project(
        root, app=APP, config=CONFIG, policy="version: 1\nrules: []\n", cases=cases
    )


def test_run_prints_each_slice_value_apart(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    done = oloproof("run", "--slices", cwd=root)
    assert done.code == 0, done.out + done.err
    assert "\x1b" not in done.out
    rows = [line for line in done.lines if line.startswith("│ metadata.k │")]
    printed = [row.split("│")[2].strip() for row in rows]
    assert sorted(printed) == sorted(VALUES.values())
    for row in rows:  # one line each, as wide as the table
        assert len(row) == len(rows[0])

    shown = oloproof("inspect", "latest", "--json", cwd=root)
    assert sorted(s["value"] for s in json.loads(shown.out)["slices"]) == sorted(VALUES)


def test_compare_prints_each_slice_value_apart(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    base = oloproof("run", cwd=root)
    cand = oloproof("run", cwd=root, env={"TOY_VERSION": "2"})
    assert (base.code, cand.code) == (0, 0), base.err + cand.err
    ids = [r.lines[0].split()[1] for r in (cand, base)]
    compared = oloproof("compare", *ids, "--slices", cwd=root)
    assert compared.code == 0, compared.err
    assert "\x1b" not in compared.out
    rows = [line for line in compared.lines if line.startswith("  metadata.k=")]
    printed = [row.removeprefix("  metadata.k=").split("  echo: ")[0] for row in rows]
    assert sorted(printed) == sorted(VALUES.values())


def _cells(page: str, table: str) -> list[str]:
    """The text of the second cell of each row of the page's slice table (``table``: its
    class), entities decoded and tags dropped."""
    body = page.split(f'<table class="{table}">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)[1:]  # the header row aside
    return [
        html.unescape(re.sub(r"<[^>]+>", "", re.findall(r"<td>(.*?)</td>", r, re.S)[1]))
        for r in rows
    ]


def test_the_viewer_shows_each_slice_value_apart(tmp_path: Path) -> None:
    # It showed the values raw: two rows read `a`, two `café`, one nothing at all.
    root = _project(tmp_path / "p")
    base = oloproof("run", cwd=root)
    cand = oloproof("run", cwd=root, env={"TOY_VERSION": "2"})
    run_id, base_id = (r.lines[0].split()[1] for r in (cand, base))
    compared = oloproof("compare", run_id, base_id, "--json", cwd=root)
    comparison = json.loads(compared.out)["address"]
    with serving(root) as url:
        run_page = fetch(f"{url}/runs/{run_id}")[1]
        comparison_page = fetch(f"{url}/comparisons/{comparison}")[1]
    assert sorted(_cells(run_page, "slices")) == sorted(VALUES.values())
    assert sorted(_cells(comparison_page, "slices")) == sorted(VALUES.values())
