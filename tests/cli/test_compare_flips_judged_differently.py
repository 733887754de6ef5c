"""A case whose verdict changed because the evaluator changed is no improvement of the system.

The probe: one system, six cases, three of which answer ``Yes`` where ``yes`` is expected. The
baseline judges them with ``contains`` and ``case_sensitive: true`` (they fail), the candidate
with the default (they pass). ``compare --cases`` headed its list ``Changed cases: 3 improved,
0 regressed`` and marked each case ``improved``, as did the Markdown summary, the JSON and the
viewer, while the rule on the same metric rightly said ``evaluator_changed``. The three are now
listed apart, counted neither way, in the same words everywhere.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support import oloproof, write_project

APP = """
from oloproof import system

@system(name="s", version="1")
def answer(case):
    return {"answer": case["a"]}
"""
CONFIG = """\
system: {{name: s, version: "1", callable: app:answer}}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {{type: contains, criterion: answered, field: answer, expected_field: answer{extra}}}
"""
COMPARE = "version: 1\nrules:\n  - {id: nw, metric: answered, non_inferiority: {margin: 5}}\n"
HEAD = (
    "Changed cases: 0 improved, 0 regressed (counted neither way: 3 changed on answered, "
    "which the two runs judged with different evaluators)"
)


def _runs(root: Path) -> tuple[str, str]:
    root = write_project(
        root,
        app=APP,
        config=CONFIG.format(extra=""),
        policy="version: 1\nrules:\n  - {id: floor, metric: answered, min: 0.1}\n",
        cases=(
            {
                "id": f"c{i}",
                "input": {"a": "Yes" if i < 3 else "no", "n": i},
                "expected": {"answer": "yes"},
            }
            for i in range(6)
        ),
    )
    (root / "baseline.yaml").write_text(CONFIG.format(extra=", case_sensitive: true"))
    (root / "compare.yaml").write_text(COMPARE)
    ids = []
    for args in (("--config", "baseline.yaml"), ()):
        done = oloproof("run", *args, cwd=root)
        assert done.code in (0, 3), done.out + done.err
        ids.append(done.lines[0].split()[1])
    return ids[1], ids[0]


def test_flips_under_a_changed_evaluator_are_counted_neither_way(tmp_path: Path) -> None:
    root = tmp_path / "p"
    cand, base = _runs(root)
    done = oloproof(
        "compare", cand, base, "--policy", "compare.yaml", "--cases", "--summary", "s.md", cwd=root
    )
    assert done.code == 3, done.out + done.err
    at = done.lines.index(HEAD)
    assert done.lines[at + 1 : at + 5] == [
        *(
            f"  answered  c{i}  fail → pass  evaluator changed  oloproof inspect {cand} --case "
            f"c{i} · oloproof inspect {base} --case c{i}"
            for i in range(3)
        ),
        "Decisions",
    ]
    assert not any("improved  oloproof" in line for line in done.lines)

    summary = (root / "s.md").read_text().splitlines()
    assert HEAD in summary
    assert "| metric | case | baseline | candidate | counted neither way | see |" in summary
    assert (
        f"| answered | c0 | fail | pass | evaluator changed | `oloproof inspect {cand} --case c0` |"
        in summary
    )

    # Without a policy too: nothing gates, and nothing is called an improvement either.
    data = json.loads(oloproof("compare", cand, base, "--json", cwd=root).out)
    assert [(f["case_id"], f["direction"]) for f in data["flipped"]] == [
        ("c0", "evaluator_changed"),
        ("c1", "evaluator_changed"),
        ("c2", "evaluator_changed"),
    ]

    site = tmp_path / "site"
    exported = oloproof("view", "--export", str(site), cand, base, cwd=root)
    assert exported.code == 0, exported.out + exported.err
    folder = done.lines[0].split()[1].removeprefix("sha256:")
    text = (site / "comparisons" / folder / "index.html").read_text()
    assert f"<p>{HEAD}</p>" in text
    assert 'class="flip better"' not in text
    rows = re.findall(r'<tr class="flip apart">.*?</tr>', text)
    assert len(rows) == 3 and all("<td>evaluator changed</td>" in row for row in rows)
