"""Route A end to end: the blackbox_rag example prints the spec's report, lines and exit codes."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support import normalise, oloproof

RULES_A = [
    "│ answer-floor    │ answer_correct  │ INSUFFICIENT_EVIDENCE │ interval_overlaps_threshold    │",
    "│ retrieval-floor │ hit_rate_at_2   │ INSUFFICIENT_EVIDENCE │ interval_overlaps_threshold    │",
    "│ citations-valid │ citations_valid │ FAIL                  │ observed_failures_exceed_limit │",
]
METRICS_A = [
    "│ answer_correct  │ 73.3%    │ [44.8%, 92.3%] │ 11 / 15 observed · 0 missing · 0 excluded │",
    "│ hit_rate_at_2   │ 92.3%    │ [63.9%, 99.9%] │ 12 / 13 observed · 0 missing · 2 excluded │",
    "│ recall_at_2     │ 92.3%    │ [63.9%, 99.9%] │ 12 / 13 observed · 0 missing · 2 excluded │",
    "│ citations_valid │ 93.3%    │ [68.0%, 99.9%] │ 14 / 15 observed · 0 missing · 0 excluded │",
]
FAILURES_A = """\
4 of 15 cases failed, errored or did not finish

refund_review
  output: {"answer": "Every refund request on an annual plan is logged in the audit trail, and the same request is listed again on the day it was reviewed and approved."…
  answer_correct: failed

money_back
  output: {"answer": "I could not find that in the knowledge base.", "citations": []}
  answer_correct: failed
  hit_rate_at_2: failed
  recall_at_2: failed
  citations_valid: failed

security_review
  output: {"answer": "Security reviews during Enterprise onboarding include an access review and a written summary for the customer, and every review is scheduled with t…
  answer_correct: failed

seat_count
  output: {"answer": "Team plans include five seats.", "citations": ["kb-03"]}
  answer_correct: failed
"""
MONEY_BACK_ARTIFACTS = (
    '{"retrieval/v1": [{"candidates": [], "depth": 6, "query": "Where do I claim money back '
    'on a yearly subscription?"}], "context/v1": [{"dropped": [], "items": [], "source": '
    '"retrieval", "token_budget": 40}], "citations/v1": [{"ids": []}]}'
)


def assert_in_order(lines: list[str], expected: list[str]) -> None:
    """Every expected line appears, in this order, in ``lines``."""
    position = 0
    for line in expected:
        assert line in lines[position:], f"missing or out of order: {line!r}\n" + "\n".join(lines)
        position = lines.index(line, position) + 1


def run_id_of(out: str) -> str:
    first = out.splitlines()[0]
    assert first.startswith("Run run_"), first
    return first.split()[1]


def test_route_a_run_report_failures_and_export(blackbox: Path) -> None:
    result = oloproof("run", cwd=blackbox)
    assert result.code == 1, result.err
    lines = result.lines
    assert normalise(lines[0]) == "Run run_… [DECIDED/COMPLETE]"
    assert lines[1] == "Gate: BLOCK (exit 1)"
    assert_in_order(lines, RULES_A + METRICS_A)
    assert "Cache: execution 0 hit/15 miss; judgment 0 hit/56 miss" in lines
    # A slice value under min_slice_support (4) shows its estimate but no interval.
    assert (
        "│ metadata.topic │ account      │ answer_correct  │ 100.0%   │ —              │ "
        "3 / 3 observed · 0 missing · 0 excluded │"
    ) in lines
    run_id = run_id_of(result.out)

    failures = oloproof("inspect", run_id, "--failures", cwd=blackbox)
    assert failures.code == 0, failures.err
    assert failures.out == FAILURES_A

    exported = oloproof("export", run_id, cwd=blackbox)
    assert exported.code == 0, exported.err
    bundle = blackbox / ".oloproof" / "bundles" / run_id
    records = {
        r["id"]: r for r in map(json.loads, (bundle / "cases.jsonl").read_text().splitlines())
    }
    assert json.dumps(records["money_back"]["artifacts"]) == MONEY_BACK_ARTIFACTS
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["run_id"] == run_id and manifest["cases"] == 15

    again = oloproof("run", cwd=blackbox)
    assert again.code == 1
    assert "Cache: execution 15 hit/0 miss; judgment 56 hit/0 miss" in again.lines
    assert_in_order(again.lines, RULES_A + METRICS_A)


def test_expand_query_candidate_reads_as_the_spec_says(blackbox: Path) -> None:
    assert oloproof("run", cwd=blackbox).code == 1
    app = blackbox / "app.py"
    app.write_text(app.read_text().replace("EXPAND_QUERY = False", "EXPAND_QUERY = True"))
    result = oloproof("run", cwd=blackbox)
    assert result.code == 3, result.out + result.err
    # Editing the code changed the system's identity: nothing is reused from the baseline.
    assert "Cache: execution 0 hit/15 miss; judgment 0 hit/56 miss" in result.lines
    assert (
        "│ hit_rate_at_2   │ 100.0%   │ [75.2%, 100.0%] │ 13 / 13 observed · 0 missing · 2 excluded │"
        in result.lines
    )
    assert any("citations-valid" in line and "PASS" in line for line in result.lines)
    assert "Gate: BLOCK (exit 3)" in result.lines


@pytest.fixture
def http_server(blackbox: Path) -> Iterator[int]:
    import sys

    sys.path.insert(0, str(blackbox))
    sys.modules.pop("app", None)
    sys.modules.pop("server", None)
    try:
        import server  # type: ignore[import-not-found]

        httpd = server.make_server(0)
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        yield httpd.server_address[1]
        httpd.shutdown()
        httpd.server_close()
    finally:
        sys.path.remove(str(blackbox))
        sys.modules.pop("app", None)
        sys.modules.pop("server", None)


def test_http_variant_records_the_same_artifacts(blackbox: Path, http_server: int) -> None:
    config = blackbox / "oloproof.http.yaml"
    config.write_text(config.read_text().replace("8766", str(http_server)))
    http = oloproof("run", "--config", "oloproof.http.yaml", cwd=blackbox)
    assert http.code == 1, http.err
    assert_in_order(http.lines, RULES_A + METRICS_A)
    callable_run = oloproof("run", cwd=blackbox)
    assert callable_run.code == 1

    def exported(out: str) -> list[dict[str, object]]:
        run_id = run_id_of(out)
        assert oloproof("export", run_id, cwd=blackbox).code == 0
        text = (blackbox / ".oloproof" / "bundles" / run_id / "cases.jsonl").read_text()
        return [
            {k: r[k] for k in ("id", "output", "artifacts", "verdicts")}
            for r in map(json.loads, text.splitlines())
        ]

    assert exported(http.out) == exported(callable_run.out)


def test_http_response_missing_a_field_stops_with_exit_2(blackbox: Path, http_server: int) -> None:
    config = blackbox / "oloproof.http.yaml"
    text = config.read_text().replace("8766", str(http_server))
    config.write_text(text.replace("evidence.retrieval", "evidence.retrieved"))
    result = oloproof("run", "--config", "oloproof.http.yaml", cwd=blackbox)
    assert result.code == 2
    assert "response has no field at 'evidence.retrieved'" in result.err
    assert result.err.startswith("error: case '")
    assert "Traceback" not in result.err
    runs = oloproof("runs", "--json", cwd=blackbox)
    assert [r["state"] for r in json.loads(runs.out)] == ["stopped"]
    exported = oloproof("export", json.loads(runs.out)[0]["run_id"], cwd=blackbox)
    assert exported.code == 0
    bundle = next((blackbox / ".oloproof" / "bundles").iterdir()) / "cases.jsonl"
    assert bundle.read_text().strip() == ""


def test_without_a_policy_the_run_reports_metrics_and_exits_0(blackbox: Path) -> None:
    config = blackbox / "oloproof.yaml"
    config.write_text(config.read_text().replace("policy: policy.yaml\n", ""))
    result = oloproof("run", cwd=blackbox)
    assert result.code == 0, result.err
    assert normalise(result.lines[0]) == "Run run_… [NO_POLICY/COMPLETE]"
    assert not any(line.startswith("Gate:") for line in result.lines)
    assert_in_order(result.lines, METRICS_A)


def test_a_terminal_gets_a_progress_bar(blackbox: Path) -> None:
    import os
    import pty
    import subprocess
    import sys

    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "oloproof", "run"],
        cwd=blackbox,
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        # Colour is tested on its own (tests/cli/test_terminal.py); here the words are.
        env={**os.environ, "COLUMNS": "100", "NO_COLOR": "1"},
    )
    os.close(secondary)
    seen = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    assert proc.wait(timeout=120) == 1
    os.close(primary)
    text = seen.decode("utf-8", "replace")
    assert "15/15" in text  # the bar's done/total column
    assert "Gate: BLOCK (exit 1)" in text


def test_the_run_report_equals_the_one_replayed_from_the_ledger(blackbox: Path) -> None:
    ran = oloproof("run", "--json", cwd=blackbox)
    assert ran.code == 1, ran.err
    live = json.loads(ran.out)
    replayed = json.loads(oloproof("inspect", live["run_id"], "--json", cwd=blackbox).out)
    assert live == replayed
