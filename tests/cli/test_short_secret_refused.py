"""A declared secret whose value is too short to search for is refused before a run, not
stored. Real CLI runs in a subprocess.

(Before: `secrets: [PIN]` with PIN=4821 ran, exit 0, and the system's answer holding 4821 was
stored and printed as it was: values shorter than six characters are not searched for, and
nothing said that the one declared was not kept out.)
"""

from __future__ import annotations

from pathlib import Path

from tests.support import TOY_CONFIG, oloproof, toy_project

APP = """
import os
from oloproof import system

@system(name="toy", version="1")
def run(case):
    return {"answer": "x, pin " + os.environ.get("PIN", "")}
"""


def project(root: Path) -> Path:
    toy_project(root, config=TOY_CONFIG + "secrets: [OTHER_NAME, PIN]\n")
    (root / "app.py").write_text(APP)
    return root


def test_a_short_declared_secret_stops_the_run_before_anything_is_written(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "p")
    done = oloproof("run", cwd=root, env={"PIN": "4821"})
    line = len(TOY_CONFIG.splitlines()) + 1
    assert (done.code, done.out) == (2, "")
    assert done.err == (
        f"error: {root}/oloproof.yaml, line {line}: secrets: the value of PIN is shorter than 6 "
        "characters, too short to be kept out of what a run stores and prints (so short a text "
        "occurs in ordinary text, and replacing it there would change outputs and verdicts); "
        "give PIN a longer value, or take it out of secrets: to have it recorded as it is\n"
    )
    assert "4821" not in done.err
    assert not (root / ".oloproof").exists()


def test_a_secret_long_enough_or_unset_runs_and_is_kept_out(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    unset = oloproof("run", cwd=root)  # PIN unset: nothing to keep out
    assert unset.out.startswith("Run ") and unset.err == "", unset.err
    done = oloproof("run", "--no-cache", cwd=root, env={"PIN": "482193"})
    assert done.out.startswith("Run ") and done.err == "", done.err
    shown = oloproof("inspect", "latest", "--case", "c1", cwd=root, env={"PIN": ""})
    assert "pin [redacted]" in shown.out and "482193" not in shown.out
