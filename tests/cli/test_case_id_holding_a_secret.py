"""A case id holding the value of a secret the run keeps out is refused when the cases are
read, before anything is written: stored, it would read `[redacted]`. Real CLI runs.

(Before: with `secrets: [TENANT_A, TENANT_B]`, cases `user-<A>` and `user-<B>` ran and were
both stored as `user-[redacted]`: one id for two cases, so `inspect --case` showed one of them
and a comparison paired each with whichever the other run listed first.)
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import TOY_CONFIG, oloproof, toy_project

TENANTS = {"TENANT_A": "alpha-tenant-77", "TENANT_B": "beta-tenant-88"}


def project(root: Path) -> Path:
    toy_project(root, config=TOY_CONFIG + "secrets: [TENANT_A, TENANT_B]\n")
    ids = ["plain", *(f"user-{value}" for value in TENANTS.values())]
    lines = (
        json.dumps({"id": case_id, "input": {"q": "x"}, "expected": {"answer": "x"}}) + "\n"
        for case_id in ids
    )
    (root / "cases.jsonl").write_text("".join(lines))
    return root


def test_a_case_id_holding_a_secret_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "p")
    for args in (("run",), ("run", "--dry-run")):
        done = oloproof(*args, cwd=root, env=TENANTS)
        assert (done.code, done.out) == (2, ""), args
        assert done.err == (
            f"error: {root}/cases.jsonl, line 2: the case id holds the value of a secret this "
            "run keeps out (a variable listed under secrets:, or one named like a credential); "
            "stored, it would read [redacted] and could not be told from other ids: give the "
            "case an id without it\n"
        )
        assert "tenant" not in done.err
    assert not (root / ".oloproof").exists()


def test_the_same_ids_run_where_no_secret_is_set(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    done = oloproof("run", cwd=root)
    assert done.out.startswith("Run ") and done.err == "", done.err
