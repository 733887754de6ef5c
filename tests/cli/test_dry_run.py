"""`oloproof run --dry-run`: plans against the caches, runs and records nothing, and its counts
are what the next real run does.

The real CLI runs in subprocesses over a copy of the blackbox example with two LLM judges added,
pointed at a scripted judge server in this process.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support import Result, oloproof

from oloproof.testing import ScriptedJudgeServer, fail, verdict


@pytest.fixture
def judged(blackbox: Path) -> Iterator[tuple[Path, ScriptedJudgeServer]]:
    with ScriptedJudgeServer(default=verdict(True)) as server:
        config_path = blackbox / "oloproof.yaml"
        config = yaml.safe_load(config_path.read_text())
        settings = {
            "provider": "openai",
            "model": "judge-1",
            "base_url": server.openai_base_url,
            "api_key_env": None,
            "max_retries": 0,
        }
        config["evaluators"] += [
            {"type": "groundedness_judge", **settings},
            {"type": "citation_support_judge", **settings},
        ]
        config_path.write_text(yaml.safe_dump(config))
        yield blackbox, server


def dry(root: Path, *args: str) -> dict[str, Any]:
    result = oloproof("run", "--dry-run", "--json", *args, cwd=root)
    assert result.code == 0, result.err
    data: dict[str, Any] = json.loads(result.out)
    return data


def by_criterion(plan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {judge["criterion"]: judge for judge in plan["judges"]}


def usage_row(result: Result, criterion: str) -> list[str]:
    """The criterion's row of the report's Judges table."""
    for line in result.lines:
        cells = [cell.strip() for cell in line.strip("│").split("│")]
        if len(cells) == 7 and cells[:2] == [criterion, "openai judge-1"]:
            return cells
    raise AssertionError(f"no Judges row for {criterion}:\n{result.out}")


def test_a_dry_run_creates_no_ledger_and_runs_nothing(blackbox: Path) -> None:
    result = oloproof("run", "--dry-run", cwd=blackbox)
    assert result.code == 0, result.err
    assert result.lines == [
        "Dry run: nothing was executed, judged or recorded.",
        "Cases: 15 of 15 would execute; 0 reused from the execution cache "
        "(no ledger yet, so nothing is cached)",
        "Judge calls: none (no LLM judge is configured)",
    ]
    assert not (blackbox / ".oloproof").exists()


def test_a_dry_run_writes_nothing_to_an_existing_ledger(blackbox: Path) -> None:
    assert oloproof("run", cwd=blackbox).code == 1
    store = blackbox / ".oloproof"
    before = {p: p.read_bytes() for p in store.rglob("*.mdb") if p.name == "data.mdb"}
    result = oloproof("run", "--dry-run", cwd=blackbox)
    assert result.code == 0, result.err
    assert result.lines[1] == "Cases: 0 of 15 would execute; 15 reused from the execution cache"
    assert {p: p.read_bytes() for p in before} == before
    no_cache = oloproof("run", "--dry-run", "--no-cache", cwd=blackbox)
    assert no_cache.lines[1] == "Cases: 15 of 15 would execute; 0 reused from the execution cache"


def test_dry_run_counts_match_the_runs_that_follow(
    judged: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, server = judged
    plan = dry(root)
    assert (plan["would_execute"], plan["cached"], plan["has_ledger"]) == (15, 0, False)
    judges = by_criterion(plan)
    assert set(judges) == {"groundedness", "citations_supported"}
    for judge in judges.values():
        assert (judge["calls"], judge["at_most_more"], judge["at_most"]) == (0, 15, 15)
        assert (judge["provider"], judge["model"]) == ("openai", "judge-1")

    # The first three judge calls fail (and are not retried): three judgments are missing.
    server.script(fail(500), fail(500), fail(500))
    first = oloproof("run", cwd=root)
    assert first.code in (1, 3), first.err
    # money_back cites nothing: citation support excludes it without a call.
    assert len(server.requests) == 15 + 14
    rows = [usage_row(first, c) for c in ("groundedness", "citations_supported")]
    assert sum(int(row[2].split()[0]) for row in rows) == 26  # 29 calls, 3 failed
    assert sum(int(row[2].split(" + ")[1].split()[0]) for row in rows if "+" in row[2]) == 3
    assert all(row[3] == "0" for row in rows)  # nothing reused

    # Now every execution is cached; only the three missing judgments need a call.
    plan = dry(root)
    assert (plan["would_execute"], plan["cached"]) == (0, 15)
    judges = by_criterion(plan)
    assert sum(j["calls"] for j in judges.values()) == 3
    assert all(j["at_most_more"] == 0 and j["at_most"] == j["calls"] for j in judges.values())
    assert judges["citations_supported"]["without_call"] == 1
    for judge in judges.values():
        assert judge["calls"] + judge["reused"] + judge["without_call"] == 15
    text = oloproof("run", "--dry-run", cwd=root)
    assert any(
        line.startswith("  groundedness (openai judge-1): ")
        and "reused from the judgment cache" in line
        for line in text.lines
    )
    assert len(server.requests) == 29  # the dry runs asked nothing

    second = oloproof("run", cwd=root)
    assert len(server.requests) == 29 + 3  # the failed judgments, tried again
    rows = [usage_row(second, c) for c in ("groundedness", "citations_supported")]
    assert sum(int(row[2]) for row in rows) == 3
    assert sum(int(row[3]) for row in rows) == 26  # reused
    assert "0 missing" in next(line for line in second.lines if line.startswith("│ groundedness"))

    plan = dry(root)
    assert sum(j["calls"] for j in plan["judges"]) == 0


def test_a_changed_source_file_makes_cases_execute_again(
    judged: tuple[Path, ScriptedJudgeServer],
) -> None:
    root, server = judged
    assert oloproof("run", cwd=root).code in (1, 3)
    app = root / "app.py"
    app.write_text(app.read_text().replace("EXPAND_QUERY = False", "EXPAND_QUERY = True"))
    plan = dry(root)
    assert (plan["would_execute"], plan["cached"]) == (15, 0)
    judges = by_criterion(plan)
    assert judges["groundedness"]["at_most"] == 15
    before = len(server.requests)
    oloproof("run", cwd=root)
    assert len(server.requests) - before <= 15 + 15


def test_dry_run_refuses_resume(blackbox: Path) -> None:
    result = oloproof("run", "--dry-run", "--resume", "latest", cwd=blackbox)
    assert result.code == 2
    assert "cannot be combined with --resume" in result.err
    assert not (blackbox / ".oloproof").exists()
