"""Two secrets that overlap in a text are both kept out whole. Real CLI runs in a subprocess, on
a real ledger.

(Before: with ``secrets: [FIRST_PART, SECOND_PART]`` holding ``alpha-secret-1`` and
``secret-1-omega99``, an answer holding ``alpha-secret-1-omega99`` was stored and printed as
``[redacted]-omega99``: the longer value was replaced, and the occurrence of the other, which
overlaps it, was dropped as if it lay inside, leaving its last seven characters, which no
redaction recognises as a secret. The occurrences are now replaced as one.)
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_judge_key_in_the_first_output import stored_bodies
from tests.support import TOY_CONFIG, oloproof, toy_project

FIRST, SECOND = "alpha-secret-1", "secret-1-omega99"
APP = """
from oloproof import system

@system(name="toy", version="1")
def run(case):
    return {"answer": "x, joined alpha-secret-1-omega99 and then secret-1-omega99-alpha-secret-1"}
"""


def test_overlapping_secrets_leave_no_part_of_either(tmp_path: Path) -> None:
    root = tmp_path / "p"
    toy_project(root, config=TOY_CONFIG + "secrets: [FIRST_PART, SECOND_PART]\n")
    (root / "app.py").write_text(APP)
    env = {"FIRST_PART": FIRST, "SECOND_PART": SECOND}
    done = oloproof("run", cwd=root, env=env)
    assert done.code == 3, done.out + done.err  # one case is too little for the toy policy
    shown = oloproof("inspect", "latest", "--case", "c1", cwd=root, env=env)
    assert "answer: x, joined [redacted] and then [redacted]-[redacted]" in shown.out, shown.out
    for text in (stored_bodies(root), shown.out):
        assert "omega" not in text and "alpha-" not in text
