"""Route B end to end: the staged support_rag example, its stage caches and slices."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli.test_run_blackbox import assert_in_order
from tests.support import normalise, oloproof

RULES_B = [
    "│ answer-floor    │ answer_correct  │ INSUFFICIENT_EVIDENCE │ interval_overlaps_threshold    │",
    "│ retrieval-floor │ hit_rate_at_2   │ INSUFFICIENT_EVIDENCE │ interval_overlaps_threshold    │",
    "│ citations-valid │ citations_valid │ PASS                  │ observed_failures_within_limit │",
]
METRICS_B = [
    "│ answer_correct  │ 69.2%    │ [38.5%, 91.0%]  │ 9 / 13 observed · 0 missing · 0 excluded     │",
    "│ hit_rate_at_2   │ 92.3%    │ [63.9%, 99.9%]  │ 12 / 13 observed · 0 missing · 0 excluded    │",
    "│ recall_at_2     │ 92.3%    │ [63.9%, 99.9%]  │ 12 / 13 observed · 0 missing · 0 excluded    │",
    "│ ndcg_at_6       │ 0.866    │ [0.506, 0.990]  │ mean of 13 observed · 0 missing · 0 excluded │",
    "│ citations_valid │ 100.0%   │ [75.2%, 100.0%] │ 13 / 13 observed · 0 missing · 0 excluded    │",
]


def importing(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """``oloproof ARGS`` under ``-X importtime``: what it did, and every module it imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "oloproof", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    return done, {line.split("|")[-1].strip() for line in done.stderr.splitlines()}


def test_route_b_run_and_the_budget_experiment(support: Path) -> None:
    first = oloproof("run", cwd=support)
    assert first.code == 3, first.err
    assert normalise(first.lines[0]) == "Run run_… [DECIDED/COMPLETE]"
    assert first.lines[1] == "Gate: BLOCK (exit 3)"
    assert_in_order(
        first.lines,
        [
            *RULES_B,
            *METRICS_B,
            "Cache: execution 0 hit/13 miss; judgment 0 hit/65 miss",
            "Stages: retrieve 0 hit/13 miss; generate 0 hit/13 miss",
        ],
    )
    # The staged slices are on: relevant position relative to top_k, and budget truncation.
    slice_rows = [line for line in first.lines if line.startswith("│ relevant_position")]
    assert {row.split("│")[2].strip() for row in slice_rows} == {"1", "2", "not_retrieved"}
    assert any(line.startswith("│ context_truncated │ true") for line in first.lines)
    # A slice shows a metric as its whole run does: ndcg stays a mean even where a slice's
    # values all happen to be 0 or 1.
    ndcg_slices = [line for line in first.lines if "│ ndcg_at_6 " in line and "│ 1 " in line]
    assert ndcg_slices and all("mean of" in line for line in ndcg_slices)

    config = support / "oloproof.yaml"
    config.write_text(config.read_text().replace("token_budget: 40", "token_budget: 120"))
    second = oloproof("run", cwd=support)
    assert second.code == 3
    assert_in_order(
        second.lines,
        [
            *RULES_B,
            *METRICS_B,
            "Cache: execution 0 hit/13 miss; judgment 0 hit/65 miss",
            "Stages: retrieve 13 hit/0 miss; generate 7 hit/6 miss",
        ],
    )


def test_staged_slices_need_a_staged_system(blackbox: Path) -> None:
    config = blackbox / "oloproof.yaml"
    config.write_text(
        config.read_text().replace("slices: [metadata.topic]", "slices: [relevant_position]")
    )
    result = oloproof("run", cwd=blackbox)
    assert result.code == 2
    assert result.err == (
        f"error: {config}, line 12: slices: slice 'relevant_position' compares relevant "
        "positions with top_k, so it needs a staged system.\n"
    )
    assert not (blackbox / ".oloproof").exists()


def test_token_budget_without_count_tokens_is_refused(support: Path) -> None:
    app = support / "app.py"
    app.write_text(app.read_text().replace("def count_tokens(", "def _not_count_tokens("))
    result = oloproof("run", cwd=support)
    assert result.code == 2
    assert "a token_budget needs" in result.err and "never estimates tokens" in result.err
    assert "Traceback" not in result.err


@pytest.mark.parametrize(
    "returned", ["None", "True", "'12'", "12.0", "-1", "__import__('numpy').float64(12)"]
)
def test_a_token_count_that_is_not_a_whole_number_stops_the_run(
    support: Path, returned: str
) -> None:
    # None would switch the budget off and True count as 1, each without a word.
    app = support / "app.py"
    text = app.read_text()
    counted = 'return len((passage.text or "").split())'
    assert counted in text
    app.write_text(text.replace(counted, f"return {returned}"))
    result = oloproof("run", cwd=support)
    assert result.code == 2, result.out + result.err
    assert result.err.startswith("error: case 'refund_review': malformed "), result.err
    assert "artifact: tokens: Input should be " in result.err and "Traceback" not in result.err


def test_a_numpy_token_count_counts_as_the_whole_number_it_is(support: Path) -> None:
    # A tokenizer that counts with NumPy (np.int64) stopped the run as "not a valid integer".
    app = support / "app.py"
    text = app.read_text()
    counted = 'return len((passage.text or "").split())'
    app.write_text(
        text.replace(counted, f"import numpy\n        return numpy.int64({counted[7:]})")
    )
    result = oloproof("run", cwd=support)
    assert result.code == 3, result.out + result.err  # the gate blocks route B, as it should
    assert_in_order(result.out.splitlines(), [*RULES_B, *METRICS_B])


def test_a_run_without_a_judge_does_not_load_the_http_client(support: Path) -> None:
    # httpx brings its own command-line tool with it (a tenth of a second): only judges and
    # HTTP systems need it, and they import it when they make a request.
    done, imported = importing("run", cwd=support)
    assert done.returncode == 3, done.stderr[-2000:]  # the gate blocks route B
    assert {"oloproof.runner", "oloproof.evaluators.judges"} <= imported
    assert not {name for name in imported if name.split(".")[0] == "httpx"}
    assert_in_order(done.stdout.splitlines(), [*RULES_B, *METRICS_B])


def test_inspect_and_runs_start_without_scipy_or_pydantic_and_print_what_the_run_did(
    support: Path,
) -> None:
    first = oloproof("run", cwd=support)
    run_id = first.lines[0].split()[1]
    # Its intervals come from the run's end record (verify recomputes them), so inspect does
    # not pay half a second to import scipy; the report is the run's, line for line.
    shown, imported = importing("inspect", run_id, cwd=support)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "oloproof.stored_runs" in imported
    # Nor pydantic: typer 0.29 validates every command's options through pydantic, which costs
    # `runs` and `inspect` a tenth of a second more than `--help` (pyproject.toml pins it).
    heavy = ("scipy", "numpy", "pydantic", "pydantic_core")
    assert not {name for name in imported if name.split(".")[0] in heavy}
    assert_in_order(shown.stdout.splitlines(), [*RULES_B, *METRICS_B])
    assert shown.stdout.splitlines()[: len(first.lines)] == first.lines
    listed, imported = importing("runs", "--json", cwd=support)
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert "oloproof.run_list" in imported
    assert not {name for name in imported if name.split(".")[0] in heavy}
    assert run_id in {row["run_id"] for row in json.loads(listed.stdout)}
