"""Per-event schema versions are read, not only written.

- A project ledger written by the format-1 code (``tests/fixtures/projects/blackbox_v1``: no
  chain, ``oloproof.run_end`` at schema 1) still opens: ``runs``, ``inspect`` and ``verify``
  read it as that code printed it, its run_end read through ``upcast_run_end_v1_v2``.
- An event whose schema is newer than this code (a run_end at schema 3) is refused with one
  sentence by the commands that read it, listed by ``verify``, and refused by ``import``.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

from tests.ledger.raw import append_raw
from tests.support import REPO, copy_example, oloproof

from ledger import Event, check_archive, export_archive, open_ledger
from oloproof import events as ev
from oloproof.store import APPLICATION

V1 = REPO / "tests" / "fixtures" / "projects" / "blackbox_v1"


def kept(old: object, new: object) -> bool:
    """Whether ``new`` holds every field of ``old`` with the same value (lists item by item)."""
    if isinstance(old, dict):
        return isinstance(new, dict) and all(k in new and kept(v, new[k]) for k, v in old.items())
    if isinstance(old, list):
        return (
            isinstance(new, list)
            and len(old) == len(new)
            and all(kept(a, b) for a, b in zip(old, new, strict=True))
        )
    return old == new


def v1_project(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "project"
    (root / ".oloproof").mkdir(parents=True)
    shutil.copytree(V1 / "ledger", root / ".oloproof" / "ledger")
    return root, (V1 / "run_id.txt").read_text().strip()


def test_a_format_1_project_reads_as_the_code_that_wrote_it_printed_it(tmp_path: Path) -> None:
    root, run = v1_project(tmp_path)
    printed = oloproof("inspect", run, cwd=root)
    assert printed.code == 0, printed.err
    old = (V1 / "inspect.txt").read_text().splitlines()
    rows = [line for line in old if line.startswith("│")]
    assert rows and all(row in printed.lines for row in rows)
    assert old[-1] in printed.lines  # "Run event: sha256:…", the same address
    assert not any(line.startswith("Redacted:") for line in printed.lines)

    report = json.loads(oloproof("inspect", run, "--json", cwd=root).out)
    assert report["redacted"] is None  # schema 1 counted none: read as "not counted"
    before = json.loads((V1 / "inspect.json").read_text())
    # Fields the report gained since (each interval's observed-only bounds, the error groups)
    # are additions; every field that code printed reads back with the value it printed.
    assert kept(before, report)
    assert report["errors"] == [] and report["metrics"][0]["observed_lower"] is not None

    assert_case_reads_as_printed(root, run)
    listed = oloproof("runs", cwd=root)
    assert listed.code == 0 and run in listed.out and "COMPLETE" in listed.out

    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out
    assert (
        "chain: its first commit hashes the 27 event(s) the ledger held before it had a chain"
        in (verified.lines)
    )


def assert_case_reads_as_printed(root: Path, run: str) -> None:
    """``inspect --case`` shows what that code showed: the values it printed one JSON line a
    field are the raw ones (``--json``), and its judgment and address lines are printed as
    they were (the layout of the rest is folded for people now)."""
    detail = json.loads(oloproof("inspect", run, "--case", "refund_review", "--json", cwd=root).out)
    printed = oloproof("inspect", run, "--case", "refund_review", cwd=root)
    assert printed.code == 0, printed.err
    old = (V1 / "case.txt").read_text().splitlines()
    assert printed.lines[0] == old[0] == "case refund_review (ok)"
    fields = {f"  {name}: ": detail[name] for name in ("input", "expected", "metadata", "output")}
    fields |= {f"  {kind}: ": items[0] for kind, items in detail["artifacts"].items()}
    values = [line for line in old if line.startswith(tuple(fields))]
    assert len(values) == len(fields) == 7
    for line in values:
        head = next(h for h in fields if line.startswith(h))
        assert json.loads(line.removeprefix(head)) == fields[head], head
    kept_lines = old[old.index("  judgments:") :]
    assert len(kept_lines) == 7 and printed.lines[-len(kept_lines) :] == kept_lines


def test_the_upcaster_is_what_reads_the_old_shape(tmp_path: Path) -> None:
    root, _ = v1_project(tmp_path)
    # Opened for writing, as every command opens it: its indexes are then rebuilt.
    with open_ledger(root / ".oloproof", app=APPLICATION) as ledger:
        (address,) = [a for a, e in ledger.events(ev.RUN_END)]
        stored = Event.from_bytes(ledger.get_bytes(address))
        read = ledger.get(address)
    assert stored.schema == 1 and "redacted" not in stored.body
    assert read.schema == 2 and read.body == ev.upcast_run_end_v1_v2(dict(stored.body))
    assert read.body["redacted"] is None and read.refs == stored.refs


def newer_run_end(root: Path, run_id: str) -> str:
    body = {"run_id": run_id, "state": "complete", "cases": 15, "shape": "from the future"}
    data = Event(ev.RUN_END, 3, body).to_bytes()
    return append_raw(root / ".oloproof", data, ev.RUN_END, (("run_meta", run_id),))


def test_an_event_newer_than_the_code_is_refused_with_one_sentence(tmp_path: Path) -> None:
    root = copy_example("blackbox_rag", tmp_path)
    done = oloproof("run", "--json", cwd=root)
    run = json.loads(done.out)["run_id"]
    address = newer_run_end(root, run)
    sentence = (
        f"error: event {address} is oloproof.run_end schema 3, but this oloproof reads "
        "oloproof.run_end up to schema 2 — upgrade oloproof to read it"
    )
    for command in (("inspect", run), ("inspect", address), ("runs",)):
        refused = oloproof(*command, cwd=root)
        assert refused.code == 2 and refused.err.strip() == sentence, (command, refused.err)

    verified = oloproof("verify", cwd=root)
    assert verified.code == 1 and verified.err == ""
    assert verified.lines[0] == f"unreadable event {address}: {sentence[7:]}"


def test_import_refuses_an_event_newer_than_the_code(tmp_path: Path) -> None:
    root = copy_example("blackbox_rag", tmp_path)
    run = json.loads(oloproof("run", "--json", cwd=root).out)["run_id"]
    newer_run_end(root, run)
    as_written = dataclasses.replace(APPLICATION, upcast=None)  # reads it as stored: exports it
    with open_ledger(root / ".oloproof", app=as_written, readonly=True) as raw:
        export_archive(raw, [], tmp_path / "all.oloarchive", everything=True)
    (tmp_path / "target").mkdir()
    done = oloproof("ledger", "import", str(tmp_path / "all.oloarchive"), cwd=tmp_path / "target")
    assert done.code == 2 and "schema 3, but this oloproof reads" in done.err, done.err
    assert not (tmp_path / "target" / ".oloproof").exists()
    try:
        check_archive(tmp_path / "all.oloarchive", APPLICATION)
    except Exception as exc:
        assert "upgrade oloproof" in str(exc)
    else:
        raise AssertionError("the archive was accepted")


def test_an_archive_written_by_the_format_1_code_still_imports(tmp_path: Path) -> None:
    run = (V1 / "run_id.txt").read_text().strip()
    target = tmp_path / "target"
    target.mkdir()
    done = oloproof("ledger", "import", str(V1 / "run.oloarchive"), cwd=target)
    assert done.code == 0, done.err
    assert (
        done.lines[0]
        == f"imported 27 new events from {V1 / 'run.oloarchive'} (0 already present, 2 ref(s))"
    )
    # A format-1 archive carries no chain: its events arrive as this ledger's own commit.
    assert done.lines[1].startswith("chain: 1 commit(s) (1 new), head sha256:")
    printed = oloproof("inspect", run, cwd=target)
    old = (V1 / "inspect.txt").read_text().splitlines()
    assert all(row in printed.lines for row in old if row.startswith("│"))
    assert oloproof("verify", cwd=target).lines[-1] == "checked 27 event(s) and 2 ref(s): ok"
