"""``latest`` and its note read the runs through the ledger's index by type. With one byte
hiding a run's entry there, ``inspect latest`` left out the note on a newer run that stopped
(exit 0, nothing on stderr), and in a ledger without the ``latest`` ref (one an older version
wrote) it named the older of two finished runs as ``latest``. Both now read the checked list
of runs and refuse, naming ``oloproof ledger rebuild-indexes``."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_run_status import project, run_id_of, stopped_run
from tests.ledger.raw import tables
from tests.ledger.tamper import hide_index_entry
from tests.support import oloproof

from oloproof import events as ev
from oloproof.latest import LATEST
from oloproof.store import open_project_ledger


def _listed(root: Path) -> int:
    with open_project_ledger(root, create=False) as ledger:
        return len(ledger.lookup("type", ev.RUN))


def _refused(root: Path, run_id: str) -> None:
    said = (
        f"error: the ledger's indexes disagree with run {run_id}: its run event is missing "
        "from the index of runs; rebuild them with: oloproof ledger rebuild-indexes"
    )
    for args in (("inspect", "latest"), ("compare", "latest", "latest")):
        refused = oloproof(*args, cwd=root)
        assert (refused.code, refused.out) == (2, ""), refused.out + refused.err
        assert refused.err.startswith(said), refused.err


def test_the_note_on_a_stopped_run_hidden_from_the_index_is_not_left_out(tmp_path: Path) -> None:
    root = project(tmp_path / "p", ["hello", "world"])
    good = oloproof("run", cwd=root)
    assert good.code == 0, good.err
    stopped = stopped_run(root)
    assert (
        f"note: the newest run, {stopped}, stopped" in oloproof("inspect", "latest", cwd=root).err
    )
    hide_index_entry(root / ".oloproof", "type", ev.RUN, lambda: _listed(root) == 1, which=1)

    _refused(root, stopped)
    assert oloproof("ledger", "rebuild-indexes", cwd=root).code == 0
    again = oloproof("inspect", "latest", cwd=root)
    assert again.code == 0 and f"note: the newest run, {stopped}, stopped" in again.err


def test_latest_without_its_ref_is_not_an_older_run(tmp_path: Path) -> None:
    root = project(tmp_path / "p", ["hello", "world"])
    older = run_id_of(oloproof("run", cwd=root).lines)
    (root / "oloproof.yaml").write_text(
        (root / "oloproof.yaml").read_text().replace('version: "1"', 'version: "2"')
    )
    newer = run_id_of(oloproof("run", cwd=root).lines)
    with tables(root / ".oloproof") as (txn, dbs):  # as a ledger an older version wrote
        assert txn.delete(LATEST.encode(), db=dbs[b"refs"])
    assert oloproof("inspect", "latest", cwd=root).lines[0].startswith(f"Run {newer} ")
    hide_index_entry(root / ".oloproof", "type", ev.RUN, lambda: _listed(root) == 1, which=1)

    _refused(root, newer)
    assert oloproof("ledger", "rebuild-indexes", cwd=root).code == 0
    shown = oloproof("inspect", "latest", cwd=root)
    assert shown.lines[0].startswith(f"Run {newer} "), shown.out
    assert older != newer
