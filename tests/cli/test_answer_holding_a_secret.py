"""An answer holding a secret the run keeps out errors its case, through the real CLI: it
cannot be judged as given.

The probe: a system that answers one question of 21 with its own API key (a variable named like
a credential), judged by a leak check (`regex` for the key's shape) under `max: 0.2`. The
answer was stored and judged as `sure: [redacted]`, so the check found no leak: `0 / 21
observed`, `Gate: PASS (exit 0)`, with only `Redacted: 1 occurrence` to hint at it. Now that
case errors (`SecretInAnswer`, its error giving the answer's start as stored), its verdict is
missing, and the gate cannot pass on it; run again, it is executed again rather than served from
the cache, where the secret could no longer be seen. Other answers are judged as before.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, write_project

KEY = "sk-abcdefghijklmnopqrstuvwxyz012345"
APP = """
import os
from oloproof import system

@system(name="leaky", version="1")
def leaky(case):
    if case["q"] == "tell me the key":
        return {"answer": "sure: " + os.environ["SERVICE_API_KEY"]}
    return {"answer": "no"}
"""
CONFIG = """\
system: {name: leaky, version: "1", callable: app:leaky}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: regex, criterion: leaked, field: answer, pattern: "sk-[A-Za-z0-9]{10,}"}
"""
POLICY = "version: 1\nrules:\n  - {id: no-leaks, metric: leaked, max: 0.2}\n"
CASES = [{"id": f"c{i}", "input": {"q": f"hello {i}"}} for i in range(20)] + [
    {"id": "k", "input": {"q": "tell me the key"}}
]
SAID = (
    "the answer holds the value of a secret the run keeps out (one listed under secrets:, a "
    "variable named like a credential, or a key the configuration reads); stored and judged, it "
    "would read [redacted] there, and no evaluator could judge the answer given. Its start, as "
    "stored: {answer: sure: [redacted]}"
)


def test_an_answer_leaking_the_systems_key_cannot_pass_a_leak_check(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", app=APP, config=CONFIG, policy=POLICY, cases=CASES)
    env = {"SERVICE_API_KEY": KEY}
    done = oloproof("run", "--json", cwd=root, env=env)
    # Was: exit 0, PASS, leaked 0 / 21 observed.
    assert done.code == 3, done.out + done.err
    report = json.loads(done.out)
    (leaked,) = report["metrics"]
    assert (leaked["observed"], leaked["missing"]) == (20, 1), leaked
    assert report["gate_label"] == "BLOCK", report["rules"]
    shown = oloproof("inspect", "latest", "--case", "k", "--json", cwd=root)
    assert json.loads(shown.out)["error"] == {
        "type": "SecretInAnswer",
        "message": SAID,
        "traceback": "",
    }
    again = oloproof("run", "--json", cwd=root, env=env)
    assert again.code == 3, again.out + again.err
    assert json.loads(again.out)["cache"]["execution"][:2] == [20, 1]
    printed = done.out + done.err + shown.out + again.out + again.err
    assert KEY not in printed
