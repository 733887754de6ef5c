"""An archive whose run carries a summary that its events do not give is said so on import:
the real CLI.

The probe: a run whose gate blocks (half its cases fail a floor of 80%), copied event by event
into another ledger with (a) its decision rewritten to PASS, exit 0, or (b) each case result's
verdict copy rewritten to pass while the judgment it points at still says fail, and that
ledger exported. Imported into a new project, each archive printed "imported 123 new events"
and exited 0; `runs` then showed the forged run `PASS (exit 0)` (or, for the copies, `inspect`
counted 40 of 40 passes and `--failures` no failed case), and only `verify`, if anyone ran
it, said the decision or the copies do not re-derive. Now the import checks the summaries of
every run the archive holds once it is written: each one that does not re-derive is printed
as `verify` prints it, the closing sentence says the run's gate and metrics cannot be trusted
(the events stay, as evidence), and the command exits 1, as `verify` does on finding them.
An archive of a sound run still imports with exit 0 and nothing on stderr.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support import TOY_APP, oloproof, write_project

CONFIG = """\
system: {name: toy, version: "1", callable: "app:run"}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
policy: policy.yaml
"""
POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.8}\n"
CASES = [
    {"id": f"c{i}", "input": {"q": f"x{i}" if i % 2 else f"y{i}"}, "expected": {"answer": "x"}}
    for i in range(40)
]


def _project(root: Path) -> Path:
    return write_project(root, app=TOY_APP, config=CONFIG, policy=POLICY, cases=CASES)


def forged_decision(event: Any) -> dict[str, Any] | None:
    if event.type != "oloproof.decision":
        return None
    rules = [
        dict(r, outcome="PASS", reason="interval_above_threshold") for r in event.body["rules"]
    ]
    return {**event.body, "gate": {"blocked": False, "exit_code": 0}, "rules": rules}


def forged_verdicts(event: Any) -> dict[str, Any] | None:
    if event.type != "oloproof.case_result":
        return None
    verdicts = {name: {**v, "s": "pass"} for name, v in event.body["verdicts"].items()}
    return {**event.body, "verdicts": verdicts}


def copied_with(source: Path, dest: Path, forge: Any) -> None:
    """``source``'s ledger written into a new one in ``dest``, event by event in order, each
    body ``forge`` gives replaced (and every link to it moved to the copy), refs likewise."""
    from ledger import Event
    from oloproof.store import open_project_ledger

    moved: dict[str, str] = {}
    dest.mkdir()
    with open_project_ledger(source, create=False) as held, open_project_ledger(dest) as made:
        with made.batch():
            for address, event in held.events():
                body = forge(event) or event.body
                refs = tuple(moved.get(r, r) for r in event.refs)
                moved[address] = made.put(Event(event.type, event.schema, body, refs))
        for name, address in held.refs():
            made.set_ref(name, moved[address])


@pytest.mark.parametrize("forge", [forged_decision, forged_verdicts])
def test_an_import_names_summaries_its_events_do_not_give(tmp_path: Path, forge: Any) -> None:
    source = _project(tmp_path / "source")
    ran = oloproof("run", cwd=source)
    assert ran.code == 1 and "Gate: BLOCK (exit 1)" in ran.out, ran
    sound = tmp_path / "sound.oloarchive"
    assert oloproof("ledger", "export", "--all", "--to", str(sound), cwd=source).code == 0

    copied_with(source, tmp_path / "forged", forge)
    archive = tmp_path / "forged.oloarchive"
    exported = oloproof("ledger", "export", "--all", "--to", str(archive), cwd=tmp_path / "forged")
    assert exported.code == 0, exported

    here = _project(tmp_path / "here")
    imported = oloproof("ledger", "import", str(archive), cwd=here)
    (row,) = json.loads(oloproof("runs", "--json", cwd=here).out)
    assert imported.code == 1, imported
    assert imported.out.startswith("imported 123 new events"), imported.out
    *problems, last = imported.err.splitlines()
    checked = oloproof("verify", cwd=here)
    assert checked.code == 1
    assert problems == [line for line in checked.out.splitlines() if "StaleSummary" in line]
    assert problems and last == (
        f"error: 1 run this archive holds ({row['run_id']}) carries {len(problems)} "
        "summary(ies) that its events do not give (above: a decision, or a case result's "
        "copy of a verdict, made or changed outside the run): its gate and metrics as "
        "`runs` and `inspect` show them cannot be trusted. The events are kept, as "
        "evidence; `oloproof verify` names them"
    )
    again = oloproof("ledger", "import", str(archive), cwd=here)
    assert again.code == 1 and again.err == imported.err, again  # a retry is not green

    clean = _project(tmp_path / "clean")
    taken = oloproof("ledger", "import", str(sound), cwd=clean)
    assert (taken.code, taken.err) == (0, ""), taken


def test_an_import_refuses_a_twin_of_a_run_it_holds(tmp_path: Path) -> None:
    """The probe: a run interrupted after 20 of its 40 cases, and an archive holding a second
    run event of the same run id (its start time changed, no ref naming it) with a result for
    each of the other 20 cases linked to that twin, its links resolved by the ledger it is
    imported into. First it imported with exit 0 and the run read `40 of 40 answered`; then
    the import named the 20 results the run held here (`its links do not name run`) and
    exited 1, but it had written the twin and its results: `runs` listed the run's id twice,
    each row `40 of 40 answered · 0 missing`, and `inspect` counted 40 cases finished. Now the
    twin is refused as the archive is read, before anything is written (exit 2, one sentence
    naming the archive, the run and both run events), and the run reads as it did: once, 20
    of 40 answered."""
    from ledger import Event
    from oloproof.store import open_project_ledger

    source = _project(tmp_path / "source")
    assert oloproof("run", cwd=source).code == 1
    here = _project(tmp_path / "here")
    twin = _project(tmp_path / "twin")
    late = {f"c{i}" for i in range(20, 40)}
    with (
        open_project_ledger(source, create=False) as held,
        open_project_ledger(here) as cut,
        open_project_ledger(twin) as forged,
    ):
        ((run_address, run),) = held.events("oloproof.run")
        with cut.batch():
            for _, event in held.events():
                ended = event.type in ("oloproof.run_end", "oloproof.decision")
                if not ended and event.body.get("case_id") not in late:
                    cut.put(event)
        cut.set_ref(run.body["run_id"], run_address)
        with forged.batch():
            body = {**run.body, "created_at": "2026-01-01T00:00:00+00:00"}
            other = forged.put(Event(run.type, run.schema, body, run.refs))
            for _, event in held.events("oloproof.case_result"):
                if event.body["case_id"] in late:
                    refs = tuple(other if r == run_address else r for r in event.refs)
                    forged.put(Event(event.type, event.schema, event.body, refs))
        size = len(cut)
    runs_before = oloproof("runs", cwd=here).out
    (row,) = json.loads(oloproof("runs", "--json", cwd=here).out)
    assert (row["execution_state"], row["cases"]) == ("INTERRUPTED", 20), row
    archive = tmp_path / "twin.oloarchive"
    assert oloproof("ledger", "export", "--all", "--to", str(archive), cwd=twin).code == 0

    imported = oloproof("ledger", "import", str(archive), cwd=here)
    assert (imported.code, imported.out) == (2, ""), imported
    assert imported.err == (
        f"error: will not import {archive}: it holds run event {other} of {row['run_id']}, and "
        f"this ledger already holds that run's run event {run_address}; a run has one run "
        "event, and the results linked to a second would be read as the run's; nothing was "
        "imported\n"
    )
    with open_project_ledger(here, create=False) as ledger:
        assert len(ledger) == size
    assert oloproof("runs", cwd=here).out == runs_before
    shown = oloproof("inspect", row["run_id"], cwd=here)
    assert "20 of 40 cases finished" in shown.out, shown
    assert oloproof("verify", cwd=here).code == 0
