"""A ``block_on`` whose meaning is not what it reads is refused, through the real CLI.

The probes, each accepted by ``run`` and ``compare`` alike before:

- ``block_on: [FAIL, INSUFFICIENT_EVIDENCE, FAIL]``: read as ``[FAIL, INSUFFICIENT_EVIDENCE]``.
  Most often the repeat stands for another outcome mistyped (``MANUAL_REVIEW`` meant), which
  then silently does not block. Rule ids and slices listed twice were already refused.
- ``block_on: [FAIL, PASS]``: a run whose one rule PASSed read ``Gate: BLOCK (exit 3)``, the
  exit code of a gate blocked for want of evidence, with nothing saying why; such a gate blocks
  whenever a rule passes and can never pass.

Now the policy is refused at its ``block_on`` line (exit 2, nothing recorded), in a release
policy and a comparison policy alike.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

REFUSED = [
    pytest.param(
        "block_on:\n  - FAIL\n  - INSUFFICIENT_EVIDENCE\n  - FAIL\n",
        "line 2: block_on: FAIL is listed twice; list each outcome that blocks once\n",
        id="listed-twice",
    ),
    pytest.param(
        "block_on: [FAIL, PASS]\n",
        "line 2: block_on: PASS is listed, so the gate would block whenever a rule passes and "
        "could never pass; list the outcomes that block (FAIL, INSUFFICIENT_EVIDENCE, "
        "MANUAL_REVIEW)\n",
        id="pass",
    ),
]


@pytest.mark.parametrize(("block_on", "said"), REFUSED)
def test_a_release_policy(tmp_path: Path, block_on: str, said: str) -> None:
    policy = "version: 1\n" + block_on + "rules:\n  - {id: floor, metric: echo, min: 0.05}\n"
    root = toy_project(tmp_path / "p", policy=policy, cases=60)
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == f"error: {root / 'policy.yaml'}, {said}"
    assert not (root / ".oloproof").exists()


@pytest.mark.parametrize(("block_on", "said"), REFUSED)
def test_a_comparison_policy(tmp_path: Path, block_on: str, said: str) -> None:
    root = toy_project(tmp_path / "p", cases=60)
    ids = []
    for args in (("run",), ("run", "--no-cache")):
        done = oloproof(*args, cwd=root)
        assert done.code == 0, done.out + done.err
        ids.append(done.lines[0].split()[1])
    policy = root / "compare.yaml"
    policy.write_text(
        "version: 1\n"
        + block_on
        + "rules:\n  - {id: nw, metric: echo, equivalence: {margin: 10}}\n"
    )
    done = oloproof("compare", ids[1], ids[0], "--policy", str(policy), cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == f"error: {policy}, {said}"
    assert "0 comparison(s)" in oloproof("verify", cwd=root).out
