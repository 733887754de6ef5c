"""A release policy holding a comparison rule among its rules is refused at that rule's line and
key, through the real CLI, not sent to ``oloproof compare``.

The probe: a release policy of a floor on ``echo`` and, below it, a ``non_inferiority`` rule was
refused (exit 2) as ``FILE: this is a comparison policy; `oloproof compare --policy` reads it``:
no line, and wrong, since the file's floor is a release rule that ``compare`` refuses in its
turn. A file whose rules are of both kinds is now neither recognisably: its first fault is
named, ``FILE, line 4: rules.1.non_inferiority: unknown key``. A file of comparison rules alone
is still recognised as one.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import oloproof, toy_project

FLOOR = "  - {id: floor, metric: echo, min: 0.5}\n"
NOT_WORSE = "  - {id: not-worse, metric: echo, non_inferiority: {margin: 5}}\n"


def test_a_comparison_rule_among_release_rules_is_named_at_its_line(tmp_path: Path) -> None:
    toy_project(tmp_path, policy="version: 1\nrules:\n" + FLOOR + NOT_WORSE)
    done = oloproof("run", cwd=tmp_path)
    assert (done.code, done.out) == (2, "")
    assert done.err == (
        f"error: {tmp_path}/policy.yaml, line 4: rules.1.non_inferiority: unknown key\n"
    )
    assert not (tmp_path / ".oloproof").exists()


def test_comparison_rules_alone_are_still_a_comparison_policy(tmp_path: Path) -> None:
    toy_project(tmp_path, policy="version: 1\nrules:\n" + NOT_WORSE)
    done = oloproof("run", cwd=tmp_path)
    assert (done.code, done.out) == (2, "")
    assert done.err == (
        f"error: {tmp_path}/policy.yaml: this is a comparison policy; `oloproof compare "
        "--policy` reads it (expected a release policy here)\n"
    )
