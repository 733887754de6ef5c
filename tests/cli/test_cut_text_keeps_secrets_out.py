"""A secret declared after a run stays out of text cut short, as out of text printed whole.

A run stores what its system raised and returned as it was when no `secrets:` named the value;
the commands that read it later keep out what the project file declares by then. Where they
printed a cut of a long text, they cut it first and redacted it after, when no whole occurrence
of the secret was left to find: `inspect RUN` printed an error line ending `svc-Q7k9…`,
`inspect --failures` an output preview ending `svc-Q7k9-hid…` (the viewer's pages likewise),
and the JUnit file of a run resumed after the secret was declared an error message ending
`svc-Q7k9-`. Each text is now redacted before it is cut.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support import interrupted_while_held, oloproof, write_project

SECRET = "svc-Q7k9-hidden-value"
ENV = {"SEARCH_SERVICE": SECRET}

# Each cut falls inside the secret: the error line's at 59 characters, the output preview's at
# 159 (after '{"answer": "'), the JUnit message's at 500. The case `hold` waits for `release`.
APP = """
import os
import sys
import time
from pathlib import Path

from oloproof import system

HERE = Path(__file__).parent


@system(name="s", version="1")
def answer(case):
    secret = os.environ["SEARCH_SERVICE"]
    if case["q"] == "short":
        raise RuntimeError("y" * 50 + " " + secret)
    if case["q"] == "long":
        raise RuntimeError("y" * 490 + " " + secret)
    if case["q"] == os.environ.get("HOLD"):
        sys.stderr.write("holding\\n")
        sys.stderr.flush()
        while not (HERE / "release").exists():
            time.sleep(0.05)
    return {"answer": "y" * 140 + " " + secret}
"""
CONFIG = """\
system: {name: s, version: "1", callable: app:answer}
dataset: cases.jsonl
policy: policy.yaml
concurrency: 1
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""


def _project(root: Path) -> Path:
    return write_project(
        root,
        app=APP,
        config=CONFIG,
        policy="version: 1\nrules:\n  - {id: r, metric: answered, min: 0.5}\n",
        cases=(
            {"id": q, "input": {"q": q}, "expected": {"answer": "never said"}}
            for q in ("short", "long", "hold", "after")
        ),
    )


def _declare(root: Path) -> None:
    config = root / "oloproof.yaml"
    config.write_text(config.read_text() + "secrets: [SEARCH_SERVICE]\n")


def test_inspect_cuts_what_it_has_redacted(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    done = oloproof("run", "--json", cwd=root, env=ENV)
    assert done.code == 3, done.out + done.err
    run_id = json.loads(done.out)["run_id"]
    _declare(root)
    report = oloproof("inspect", run_id, cwd=root, env=ENV)
    failures = oloproof("inspect", run_id, "--failures", cwd=root, env=ENV)
    assert report.code == failures.code == 0, report.err + failures.err
    (errored,) = [line for line in report.lines if " cases errored: " in line]
    assert "y" * 50 + " [redacte…" in errored
    previews = [line for line in failures.lines if line.startswith("  output: ")]
    assert previews and all(line.endswith("y [redac…") for line in previews)
    assert SECRET[:4] not in report.out + failures.out


def test_a_resumed_runs_junit_cuts_what_it_has_redacted(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    run_id = interrupted_while_held(root, "holding\n", {**ENV, "HOLD": "hold"})
    _declare(root)
    args = ("--resume", run_id, "--junit", "j.xml", "--junit-cases")
    done = oloproof("run", *args, cwd=root, env=ENV)
    assert done.code == 3, done.out + done.err
    junit = (root / "j.xml").read_text()
    messages = {
        case.get("name"): error.get("message")
        for case in ET.fromstring(junit).iter("testcase")
        for error in case.iter("error")
    }
    assert messages["long"] == ("y" * 490 + " [redacted]")[:500]
    assert SECRET[:4] not in junit


def test_the_viewer_cuts_what_it_has_redacted(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    done = oloproof("run", "--json", cwd=root, env=ENV)
    assert done.code == 3, done.out + done.err
    run_id = json.loads(done.out)["run_id"]
    _declare(root)
    exported = oloproof("view", "--export", "site", run_id, cwd=root, env=ENV)
    assert exported.code == 0, exported.out + exported.err
    pages = "".join(path.read_text() for path in (root / "site").rglob("*.html"))
    assert "y [redac" in pages
    assert SECRET[:4] not in pages
