"""Golden ledgers: the committed format-1 ledger reads back byte for byte; format 2 is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.fixtures.ledger.make_fixtures import REFS, case_index, fixture_events

from ledger import Event, UnsupportedFormatError, open_ledger

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ledger"


def copy_of(name: str, tmp_path: Path) -> Path:
    # Opening a ledger writes its lock file, so tests open a copy, never the committed folder.
    return Path(shutil.copytree(FIXTURES / name, tmp_path / name))


def test_v1_reads_back(tmp_path: Path) -> None:
    expected = json.loads((FIXTURES / "v1" / "expected.json").read_text())
    with open_ledger(copy_of("v1", tmp_path), indexer=case_index, create=False) as ledger:
        stored = [(a, ledger.get_bytes(a).hex()) for a, _ in ledger.events()]
        assert stored == [(e["address"], e["bytes"]) for e in expected["events"]]
        assert ledger.refs() == sorted(expected["refs"].items())
        for key, addresses in expected["index"]["case"].items():
            assert ledger.lookup("case", key) == addresses
        report = ledger.verify()
        assert report.ok, str(report)
        # Today's code still encodes the same events to the same bytes, hence addresses.
        events = fixture_events()
        assert [e.to_bytes().hex() for e in events] == [e["bytes"] for e in expected["events"]]
        assert [ledger.get(e["address"]) for e in expected["events"]] == events
        assert set(REFS) == set(expected["refs"])


def test_v1_opens_read_only(tmp_path: Path) -> None:
    with open_ledger(copy_of("v1", tmp_path), readonly=True) as ledger:
        assert len(ledger) == len(fixture_events())
        assert isinstance(ledger.get(ledger.resolve("latest")), Event)


def test_future_format_is_refused(tmp_path: Path) -> None:
    path = copy_of("future_v2", tmp_path)
    for readonly in (False, True):
        with pytest.raises(UnsupportedFormatError) as caught:
            open_ledger(path, create=False, readonly=readonly)
        message = str(caught.value)
        assert "ledger format 2" in message and "reads ≤1" in message and "upgrade" in message


def test_fixtures_stay_small() -> None:
    files = [p for p in FIXTURES.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    total = sum(p.stat().st_size for p in files)
    assert total < 100_000
