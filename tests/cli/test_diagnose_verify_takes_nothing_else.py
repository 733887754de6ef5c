"""`diagnose --verify` refuses the settings it would ignore, through the real CLI.

The probe: `oloproof diagnose --verify DIAGNOSIS --top-k 4` re-derived the diagnosis as it
was recorded and said nothing of `--top-k`, as if the check had been made at a cut of 4.
Every setting of a new diagnosis given beside `--verify` is now refused, named (exit 2).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project


@pytest.mark.parametrize(
    ("given", "named"),
    [
        (("--top-k", "4"), "--top-k"),
        (("--reranker", "m:f"), "--reranker"),
        (("--token-budget", "100"), "--token-budget"),
        (("--repeats", "3"), "--repeats"),
        (("--reuse-generations",), "--reuse-generations"),
        (("--engine", "local"), "--engine"),
        (("latest", "--criterion", "echo"), "RUN, --criterion"),
    ],
)
def test_a_setting_beside_verify_is_refused(
    tmp_path: Path, given: tuple[str, ...], named: str
) -> None:
    root = toy_project(tmp_path / "p")
    assert oloproof("run", cwd=root).code in (0, 3)
    done = oloproof("diagnose", "--verify", "sha256:" + "0" * 64, *given, cwd=root)
    assert (done.code, done.err) == (
        2,
        f"error: --verify takes a diagnosis id alone (and --json), not {named}: it re-derives "
        "the diagnosis as it was recorded\n",
    )
