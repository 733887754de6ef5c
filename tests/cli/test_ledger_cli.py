"""``oloproof verify`` and ``oloproof ledger export|import``, run in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.ledger.tamper import flip_byte_of

from ledger import Event, open_ledger

# `python -m oloproof`, with the ledger commands imported first: main.py registers the command
# modules it knows, and this keeps these tests independent of when it learns of this one.
ENTRY = "import oloproof.cli.ledger_cmds; from oloproof.cli.main import main; main()"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", ENTRY, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def make_project(root: Path) -> dict[str, str]:
    root.mkdir(exist_ok=True)
    with open_ledger(root / ".oloproof") as ledger, ledger.batch():
        run = ledger.put(Event("test.run", 1, {"name": "r"}))
        case = ledger.put(Event("test.case", 1, {"case": "c1", "text": "x" * 64}, [run]))
        other = ledger.put(Event("test.note", 1, {"unrelated": True}))
        ledger.set_ref("run_01J0000000000000000000000R", case)
    return {"run": run, "case": case, "other": other}


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def test_verify_without_a_ledger_exits_2(tmp_path: Path) -> None:
    line = one_error_line(cli("verify", cwd=tmp_path))
    assert "no ledger" in line and str(tmp_path) in line
    assert not (tmp_path / ".oloproof").exists()


def test_verify_clean_exits_0(tmp_path: Path) -> None:
    make_project(tmp_path)
    result = cli("verify", cwd=tmp_path)
    assert result.returncode == 0, result
    assert result.stdout.strip().splitlines()[-1] == "checked 3 event(s) and 1 ref(s): ok"
    result = cli("verify", "--json", cwd=tmp_path)
    assert result.returncode == 0, result
    report = json.loads(result.stdout)
    assert report["ok"] is True and report["events_checked"] == 3 and report["problems"] == []


def test_verify_tampered_exits_1_and_names_the_event(tmp_path: Path) -> None:
    ids = make_project(tmp_path)
    with open_ledger(tmp_path / ".oloproof") as ledger:
        stored = ledger.get_bytes(ids["case"])
    flip_byte_of(tmp_path / ".oloproof", stored)

    result = cli("verify", cwd=tmp_path)
    assert result.returncode == 1, result
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith(f"corrupt event {ids['case']}: its bytes hash to sha256:")
    assert lines[-1] == "checked 3 event(s) and 1 ref(s): 1 problem(s)"

    report = json.loads(cli("verify", "--json", cwd=tmp_path).stdout)
    assert report["ok"] is False
    assert [(p["kind"], p["address"]) for p in report["problems"]] == [
        ("CorruptEvent", ids["case"])
    ]


def test_export_then_import_elsewhere(tmp_path: Path) -> None:
    ids = make_project(tmp_path / "a")
    archive = tmp_path / "slice.oloarchive"
    result = cli(
        "ledger",
        "export",
        "run_01J0000000000000000000000R",
        "--to",
        str(archive),
        cwd=tmp_path / "a",
    )
    assert result.returncode == 0, result
    size = archive.stat().st_size
    assert result.stdout.strip() == f"exported 2 events to {archive} ({size:,} bytes)"

    (tmp_path / "b").mkdir()
    result = cli("ledger", "import", str(archive), cwd=tmp_path / "b")
    assert result.returncode == 0, result
    assert result.stdout.splitlines()[0] == (
        f"imported 2 new events from {archive} (0 already present, 1 ref(s))"
    )
    result = cli("ledger", "import", str(archive), cwd=tmp_path / "b")
    assert result.stdout.splitlines()[0] == (
        f"imported 0 new events from {archive} (2 already present, 1 ref(s))"
    )
    with open_ledger(tmp_path / "b" / ".oloproof", create=False) as imported:
        assert [a for a, _ in imported.events()] == [ids["run"], ids["case"]]
        assert imported.get_ref("run_01J0000000000000000000000R") == ids["case"]
    assert cli("verify", cwd=tmp_path / "b").returncode == 0


def test_export_by_prefix(tmp_path: Path) -> None:
    ids = make_project(tmp_path)
    result = cli("ledger", "export", ids["other"][7:17], "--to", "one.oloarchive", cwd=tmp_path)
    assert result.returncode == 0, result
    size = (tmp_path / "one.oloarchive").stat().st_size
    assert result.stdout.strip() == f"exported 1 event to one.oloarchive ({size:,} bytes)"


def test_export_unknown_id_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    make_project(tmp_path)
    line = one_error_line(cli("ledger", "export", "run_nope", "--to", "x.oloarchive", cwd=tmp_path))
    assert line == "error: no ref named 'run_nope' exists"
    assert not (tmp_path / "x.oloarchive").exists()
    line = one_error_line(cli("ledger", "export", "12345678", "--to", "x.oloarchive", cwd=tmp_path))
    assert line == "error: no stored event's address starts with '12345678'"


def test_import_of_a_damaged_archive_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    ids = make_project(tmp_path / "a")
    archive = tmp_path / "slice.oloarchive"
    assert (
        cli("ledger", "export", ids["case"], "--to", str(archive), cwd=tmp_path / "a").returncode
        == 0
    )
    with open_ledger(tmp_path / "a" / ".oloproof") as ledger:
        stored = ledger.get_bytes(ids["case"])
    data = bytearray(archive.read_bytes())
    data[data.find(stored) + 10] ^= 0x04
    archive.write_bytes(bytes(data))

    (tmp_path / "b").mkdir()
    line = one_error_line(cli("ledger", "import", str(archive), cwd=tmp_path / "b"))
    assert line.startswith(f"error: event {ids['case']} is corrupt")
    assert not (tmp_path / "b" / ".oloproof").exists()


def test_import_of_a_missing_file_exits_2(tmp_path: Path) -> None:
    line = one_error_line(cli("ledger", "import", "nothing.oloarchive", cwd=tmp_path))
    assert line == "error: cannot read the archive nothing.oloarchive: No such file or directory"
    assert not (tmp_path / ".oloproof").exists()


def test_verify_with_a_head_that_is_not_an_address_is_bad_input(tmp_path: Path) -> None:
    # It was reported as a problem of the ledger (exit 1).
    make_project(tmp_path)
    line = one_error_line(cli("verify", "--head", "garbage", cwd=tmp_path))
    assert line == (
        "error: --head 'garbage' is not a chain head: expected 'sha256:' and 64 hex digits"
    )
