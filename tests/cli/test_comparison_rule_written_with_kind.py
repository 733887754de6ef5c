"""A comparison rule written with ``kind: non_inferiority`` is named at its line, through the
real CLI, not called a release policy.

The probe: ``compare --policy cmp.yaml`` of two runs, the file's one rule written
``{id: nw, metric: echo, kind: non_inferiority, margin: 0.05}`` (the test as a ``kind``, as a
release rule names ``observed_count``), was refused (exit 2) as ``FILE: this is a release
policy; `oloproof run --policy` ... reads it (expected a comparison policy here)``: the
``kind`` key made it look like a release rule, so the user was sent to ``run`` with a file
``run`` refuses in its turn (there, as pydantic's ``Input should be 'interval' or
'observed_count'``). A ``kind`` that names a comparison test now marks the rule as a
comparison rule written another way: ``compare`` names the key at its line and how the test is
written, and ``run`` says the kind is a comparison test.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import oloproof, toy_project

POLICY = "version: 1\nrules:\n  - {id: nw, metric: echo, kind: non_inferiority, margin: 0.05}\n"


def test_compare_names_the_rules_fault_at_its_line(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=20)
    ids = []
    for args in (("run",), ("run", "--no-cache")):
        done = oloproof(*args, cwd=root)
        assert done.code == 0, done.out + done.err
        ids.append(done.lines[0].split()[1])
    (root / "cmp.yaml").write_text(POLICY)
    done = oloproof("compare", *ids, "--policy", "cmp.yaml", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == (
        f"error: {root / 'cmp.yaml'}, line 3: rules.0.kind: unknown key; a comparison rule "
        "gives its test as a key of its own, non_inferiority: {margin: POINTS}\n"
    )


def test_run_says_it_is_a_comparison_policy(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", policy=POLICY, cases=20)
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == (
        f"error: {root / 'policy.yaml'}, line 3: rules.0.kind: non_inferiority is a comparison "
        "test, for a rule `oloproof compare --policy` reads; a release rule's kind is interval "
        "or observed_count\n"
    )
    assert not (root / ".oloproof").exists()
