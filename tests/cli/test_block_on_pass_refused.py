"""``block_on`` listing PASS is refused, through the real CLI.

The probe: ``block_on: [FAIL, PASS]`` was accepted by ``run`` and ``compare`` alike. A run
whose one rule PASSed then read ``Gate: BLOCK (exit 3)``, the exit code of a gate blocked for
want of evidence, with nothing saying why; such a gate blocks whenever a rule passes and can
never pass. Now the policy is refused at its ``block_on`` line (exit 2, nothing recorded).
"""

from __future__ import annotations

from pathlib import Path

from tests.support import oloproof, toy_project

BLOCK_ON = "block_on: [FAIL, PASS]\n"
SAID = (
    "line 2: block_on: PASS is listed, so the gate would block whenever a rule passes and could "
    "never pass; list the outcomes that block (FAIL, INSUFFICIENT_EVIDENCE, MANUAL_REVIEW)\n"
)


def test_a_release_policy(tmp_path: Path) -> None:
    policy = "version: 1\n" + BLOCK_ON + "rules:\n  - {id: floor, metric: echo, min: 0.05}\n"
    root = toy_project(tmp_path / "p", policy=policy, cases=60)
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == f"error: {root / 'policy.yaml'}, {SAID}"
    assert not (root / ".oloproof").exists()


def test_a_comparison_policy(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=60)
    ids = []
    for args in (("run",), ("run", "--no-cache")):
        done = oloproof(*args, cwd=root)
        assert done.code == 0, done.out + done.err
        ids.append(done.lines[0].split()[1])
    policy = root / "compare.yaml"
    policy.write_text(
        "version: 1\n"
        + BLOCK_ON
        + "rules:\n  - {id: nw, metric: echo, equivalence: {margin: 10}}\n"
    )
    done = oloproof("compare", ids[1], ids[0], "--policy", str(policy), cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == f"error: {policy}, {SAID}"
    assert "0 comparison(s)" in oloproof("verify", cwd=root).out
