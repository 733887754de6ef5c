"""A judgment's identity holds no digest of a secret the run keeps out, through the real CLI.

A judgment is cached under the digests of the parts of the case its evaluator reads. Those were
digests of the case's own values, so an expected answer holding a declared secret was stored
as a plain blake3 digest inside the judgment's identity: a guess at the secret could be checked
against it offline, which the ledger otherwise never allows (a case's ``input_key`` and a
fingerprint's constants are keys of the values as stored, each secret ``[redacted]``). It showed
as a rotated secret re-judging every case that read it (``judgment 0 hit/1 miss``). The parts
are now digested as stored, and where a secret was replaced, beside the case's id, so two cases
differing only in which secret they expect still get a judgment each.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof

APP = """
from oloproof import system

@system(name="echo", version="1")
def echo(case):
    return {"answer": case["q"]}
"""
CONFIG = """\
system: {name: echo, version: "1", callable: app:echo}
evaluators:
  - {type: contains, criterion: said, field: answer, expected_field: answer}
secrets: [FIRST_SECRET, SECOND_SECRET]
"""
ENV = {"FIRST_SECRET": "alpha12345", "SECOND_SECRET": "beta456"}


def project(root: Path, expected: dict[str, str]) -> Path:
    root.mkdir(exist_ok=True)
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "input": {"q": q}, "expected": {"answer": a}}) + "\n"
            for i, (q, a) in expected.items()
        )
    )
    return root


def run(root: Path, env: dict[str, str]) -> dict[str, object]:
    done = oloproof("run", "--json", cwd=root, env=env)
    assert done.code in (0, 3), done.out + done.err
    report: dict[str, object] = json.loads(done.out)
    return report


def test_a_rotated_secret_keeps_the_judgments_that_read_it(tmp_path: Path) -> None:
    cases = {"a": ("x alpha12345", "x"), "b": ("x", "alpha12345"), "c": ("x", "beta456")}
    root = project(tmp_path / "p", cases)
    first = run(root, ENV)
    # b and c share one answer, and each expects another secret: each has its own judgment.
    assert first["cache"] == {"execution": [0, 2, 1], "judgment": [0, 3, 0]}, first["cache"]
    (said,) = first["metrics"]  # type: ignore[misc]
    assert (said["observed"], said["estimate"]) == (3, 1 / 3), said
    rotated = {"a": ("x gamma99xx", "x"), "b": ("x", "gamma99xx"), "c": ("x", "delta77")}
    project(root, rotated)
    again = run(root, {"FIRST_SECRET": "gamma99xx", "SECOND_SECRET": "delta77"})
    # Was: judgment [1, 2, 0]: b's and c's identities held a digest of the secret itself.
    assert again["cache"] == {"execution": [3, 0, 0], "judgment": [3, 0, 0]}, again["cache"]
