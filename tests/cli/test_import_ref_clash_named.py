"""An archive whose ref the importing ledger holds pointing at another event is refused in one
sentence that names the archive, the ref and both events: the real CLI.

The probe: a run exported from one project, imported into another whose ref of that run's id
names its own run event. The import was refused (exit 2, nothing written) with the
compare-and-swap's sentence, `error: ref 'run_…' was expected to hold sha256:… but holds
sha256:…`: no archive named, and "expected" was the archive's event, not anything the ledger
was meant to hold. Now the sentence names the archive file, the ref, the event the archive
sets it to and the one the ledger's ref names, and says nothing was imported.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import TOY_APP, oloproof, write_project

CONFIG = """\
system: {name: toy, version: "1", callable: "app:run"}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
policy: policy.yaml
"""
POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"
CASES = [{"id": f"c{i}", "input": {"q": "x"}, "expected": {"answer": "x"}} for i in range(3)]


def test_a_ref_clash_names_the_archive_the_ref_and_both_events(tmp_path: Path) -> None:
    from oloproof.store import open_project_ledger

    source = write_project(
        tmp_path / "source", app=TOY_APP, config=CONFIG, policy=POLICY, cases=CASES
    )
    here = write_project(tmp_path / "here", app=TOY_APP, config=CONFIG, policy=POLICY, cases=CASES)
    oloproof("run", cwd=source)  # its gate is beside the point: the run is recorded
    oloproof("run", cwd=here)
    (run,) = json.loads(oloproof("runs", "--json", cwd=source).out)
    (own,) = json.loads(oloproof("runs", "--json", cwd=here).out)
    archive = tmp_path / "run.oloarchive"
    assert oloproof("ledger", "export", run["run_id"], "--to", str(archive), cwd=source).code == 0
    with open_project_ledger(source, create=False) as ledger:
        carried = ledger.get_ref(run["run_id"])
    with open_project_ledger(here, create=False) as ledger:
        held = ledger.get_ref(own["run_id"])
        assert held is not None
        ledger.set_ref(run["run_id"], held)
        before = len(ledger)

    imported = oloproof("ledger", "import", str(archive), cwd=here)
    assert (imported.code, imported.out) == (2, ""), imported
    assert imported.err == (
        f"error: will not import the archive {archive}: it sets ref {run['run_id']!r} to "
        f"{carried}, but this ledger's ref {run['run_id']!r} names {held}, and an import never "
        "moves a ref; nothing was imported\n"
    )
    with open_project_ledger(here, create=False) as ledger:
        assert len(ledger) == before
