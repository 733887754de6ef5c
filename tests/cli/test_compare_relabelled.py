"""A case whose expected values changed between two runs is not compared.

Its two verdicts were judged against different answers: a fail that becomes a pass because the
label moved to what the system says is not an improvement, and a pass that becomes a fail is
not a regression. ``compare`` leaves such a case unpaired (``expected differs``), counts it as
missing for every metric, and lists no flip for it.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import copy_example, oloproof


def relabelled_runs(tmp_path: Path) -> tuple[Path, str, str]:
    root = copy_example("blackbox_rag", tmp_path)
    assert oloproof("run", cwd=root).code in (1, 3)
    cases = root / "cases.jsonl"
    lines = cases.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    assert first["id"] == "refund_review"
    # The system's answer mentions the audit trail; the baseline's label failed it.
    first["expected"]["answer"] = "audit trail"
    cases.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    assert oloproof("run", cwd=root).code in (1, 3)
    runs = json.loads(oloproof("runs", "--json", cwd=root).out)
    return root, runs[0]["run_id"], runs[1]["run_id"]


def test_a_relabelled_case_is_unpaired_and_counts_as_missing(tmp_path: Path) -> None:
    root, candidate, baseline = relabelled_runs(tmp_path)
    done = oloproof("compare", candidate, baseline, "--cases", cwd=root)
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines[0].endswith("· 14 paired cases"), lines[0]
    assert lines[1] == "not paired 1: expected differs (refund_review)"
    row = next(line for line in lines if line.startswith("answer_correct: "))
    assert row.endswith("· 14 paired · 1 missing · 0 excluded"), row
    assert "  missing 1: expected_differs" in lines
    assert "Changed cases: 0 improved, 0 regressed" in lines
    assert not any("refund_review  fail → pass" in line for line in lines)

    as_json = json.loads(oloproof("compare", candidate, baseline, "--json", cwd=root).out)
    assert as_json["unpaired"] == [
        {"reason": "expected_differs", "count": 1, "case_ids": ["refund_review"]}
    ]
    assert oloproof("verify", cwd=root).code == 0


def test_an_unchanged_label_still_pairs(tmp_path: Path) -> None:
    root = copy_example("blackbox_rag", tmp_path)
    for _ in range(2):
        assert oloproof("run", cwd=root).code in (1, 3)
    runs = json.loads(oloproof("runs", "--json", cwd=root).out)
    done = oloproof("compare", runs[0]["run_id"], runs[1]["run_id"], cwd=root)
    assert done.code == 0, done.err
    assert done.lines[0].endswith("· 15 paired cases") and "not paired" not in done.out
