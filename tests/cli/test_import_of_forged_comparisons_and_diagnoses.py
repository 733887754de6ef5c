"""An archive whose comparison or diagnosis carries a summary its runs do not give is said so on
import, as `verify` says it: the real CLI.

The probe: support_rag with two runs, a comparison of them under compare.yaml (its gate
blocks, exit 3) and a gold-context diagnosis of the baseline (3 of 4 recovered), and a copy of
(a) the comparison with its gate rewritten to pass (exit 0) and (b) the diagnosis with 4 of 4
recovered, each stored beside the original as a second writer could. Each forged event,
exported with what it needs and imported into a new project, printed "imported 233 new
events" (or 216) and exited 0, though the import re-derives the runs' summaries as `verify`
does; only `verify`, run afterwards, named the forged comparison and diagnosis. Now the import
checks every diagnosis and comparison the archive holds too: each one that does not re-derive
is printed as `verify` prints it, a closing sentence says what `inspect` shows of them cannot
be trusted (the events stay, as evidence), and the command exits 1, importing it again too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.cli.test_verify_app import GOLD, copy_ledger, forge, ok, run_id_of
from tests.support import copy_example, oloproof

from oloproof import events as ev


@pytest.fixture(scope="module")
def support(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """support_rag with two runs, a comparison under its policy and a diagnosis."""
    root = copy_example("support_rag", tmp_path_factory.mktemp("support"))
    baseline = run_id_of(ok("run", cwd=root, codes=(0, 1, 3)))
    candidate = run_id_of(ok("run", cwd=root, codes=(0, 1, 3)))
    ok("compare", candidate, baseline, "--policy", "compare.yaml", cwd=root, codes=(3,))
    ok("diagnose", baseline, *GOLD, cwd=root)
    return root


def passed(body: dict[str, Any]) -> None:
    body["gate"] = {"blocked": False, "exit_code": 0}


def all_recovered(body: dict[str, Any]) -> None:
    body["summary"]["recovered"] = body["summary"]["selected"]


@pytest.mark.parametrize(
    ("kind", "edit", "differences"),
    [
        (
            ev.COMPARISON,
            passed,
            "comparison: gate.blocked: stored False, re-derived True; gate.exit_code: stored "
            "0, re-derived 3",
        ),
        (ev.DIAGNOSIS, all_recovered, "diagnosis: summary.recovered: stored 4, re-derived 3"),
    ],
)
def test_an_import_names_a_forged_comparison_or_diagnosis(
    support: Path, tmp_path: Path, kind: str, edit: Any, differences: str
) -> None:
    source = tmp_path / "source"
    copy_ledger(support, source)
    forged = forge(source, kind, edit)
    archive = tmp_path / "forged.oloarchive"
    assert oloproof("ledger", "export", forged, "--to", str(archive), cwd=source).code == 0
    name = "comparison" if kind == ev.COMPARISON else "diagnosis"

    here = copy_example("support_rag", tmp_path / "here")
    imported = oloproof("ledger", "import", str(archive), cwd=here)
    assert imported.code == 1, imported
    assert imported.out.startswith("imported "), imported.out
    *problems, last = imported.err.splitlines()
    assert problems == [f"StaleSummary {forged}: {differences}"]
    assert last == (
        f"error: 1 {name} this archive holds ({forged}) carries a summary that its runs do "
        "not give (above: a label, a count, a gate or an interval made or changed outside it): "
        "what `inspect` shows of it cannot be trusted. The events are kept, as evidence; "
        "`oloproof verify` names them"
    )
    checked = oloproof("verify", cwd=here)
    assert checked.code == 1
    assert problems == [line for line in checked.out.splitlines() if "StaleSummary" in line]
    again = oloproof("ledger", "import", str(archive), cwd=here)
    assert again.code == 1 and again.err == imported.err, again  # a retry is not green


def test_an_archive_of_a_sound_comparison_imports_clean(support: Path, tmp_path: Path) -> None:
    with_all = tmp_path / "all.oloarchive"
    assert oloproof("ledger", "export", "--all", "--to", str(with_all), cwd=support).code == 0
    here = copy_example("support_rag", tmp_path / "here")
    imported = oloproof("ledger", "import", str(with_all), cwd=here)
    assert (imported.code, imported.err) == (0, ""), imported
    report = json.loads(oloproof("verify", "--json", cwd=here).out)
    assert report["ok"] and report["summaries"]["comparisons"] == 1, report
