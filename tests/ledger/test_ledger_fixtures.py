"""Golden ledgers: formats 1 and 2 read back byte for byte, format 1 is migrated when opened
for writing, and format 3 is refused."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from tests.fixtures.ledger.make_fixtures import REFS, case_index, fixture_events

from ledger import Event, UnsupportedFormatError, address_of, open_ledger

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
        # Today's code encodes an event without refs to the same bytes, hence address. One with
        # refs now spells them as digests (binary-refs), so its address is new; its stored
        # bytes, refs spelt as text, still read as the event it was, pointing where it did.
        events = fixture_events()
        assert any(e.refs for e in events) and any(not e.refs for e in events)
        then = {
            address_of(e): f["address"] for e, f in zip(events, expected["events"], strict=True)
        }
        for event, fixture in zip(events, expected["events"], strict=True):
            read = ledger.get(fixture["address"])
            assert (read.type, read.schema, read.body) == (event.type, event.schema, event.body)
            assert read.refs == tuple(then[ref] for ref in event.refs)
            assert (event.to_bytes().hex() == fixture["bytes"]) is (not event.refs)
        assert set(REFS) == set(expected["refs"])


def test_v1_opens_read_only_without_a_chain(tmp_path: Path) -> None:
    path = copy_of("v1", tmp_path)
    with open_ledger(path, readonly=True) as ledger:
        assert len(ledger) == len(fixture_events())
        assert isinstance(ledger.get(ledger.resolve("latest")), Event)
        assert ledger.head() == (0, None)
        report = ledger.verify()
        assert report.ok and not report.chain.present
        assert "chain: none (a format-1 ledger opened read-only" in str(report)
    # Read-only changed nothing: the ledger is still format 1.
    assert (path / "ledger" / "data.mdb").read_bytes() == (
        FIXTURES / "v1" / "ledger" / "data.mdb"
    ).read_bytes()


def genesis_head(addresses: list[str]) -> str:
    """The head of one commit adding ``addresses`` to an empty chain (ledger.chain), by hand."""
    h = hashlib.sha256(bytes(32))
    for address in addresses:
        h.update(bytes.fromhex(address.removeprefix("sha256:")))
    return "sha256:" + h.hexdigest()


def test_v1_opened_for_writing_is_migrated_into_a_chain(tmp_path: Path) -> None:
    expected = json.loads((FIXTURES / "v1" / "expected.json").read_text())
    addresses = [e["address"] for e in expected["events"]]
    path = copy_of("v1", tmp_path)
    with open_ledger(path, indexer=case_index, create=False) as ledger:
        # The first commit hashes the events it held before the chain began.
        assert ledger.head() == (1, genesis_head(addresses))
        new = ledger.put(Event("after", 1, {"n": 1}))
        commits, head = ledger.head()
        report = ledger.verify()
    assert report.ok, str(report)
    assert report.chain.migrated == 4 and report.chain.commits == 2 == commits
    assert report.chain.head == head
    h = hashlib.sha256(bytes.fromhex(genesis_head(addresses)[7:]))
    h.update(bytes.fromhex(new[7:]))
    assert head == "sha256:" + h.hexdigest()
    assert "its first commit hashes the 4 event(s) the ledger held before it had a chain" in str(
        report
    )


def test_v2_reads_back_with_its_chain(tmp_path: Path) -> None:
    expected = json.loads((FIXTURES / "v2" / "expected.json").read_text())
    addresses = [e["address"] for e in expected["events"]]
    with open_ledger(copy_of("v2", tmp_path), indexer=case_index, readonly=True) as ledger:
        stored = [(a, ledger.get_bytes(a).hex()) for a, _ in ledger.events()]
        assert stored == [(e["address"], e["bytes"]) for e in expected["events"]]
        assert ledger.refs() == sorted(expected["refs"].items())
        report = ledger.verify()
        assert report.ok, str(report)
    # Two commits: the run event alone, then the other three (make_fixtures._write_events).
    h = hashlib.sha256(bytes.fromhex(genesis_head(addresses[:1])[7:]))
    for address in addresses[1:]:
        h.update(bytes.fromhex(address[7:]))
    assert expected["chain"] == {"commits": 2, "head": "sha256:" + h.hexdigest()}
    assert (report.chain.commits, report.chain.head) == (2, expected["chain"]["head"])


def test_future_format_is_refused(tmp_path: Path) -> None:
    path = copy_of("future_v3", tmp_path)
    for readonly in (False, True):
        with pytest.raises(UnsupportedFormatError) as caught:
            open_ledger(path, create=False, readonly=readonly)
        message = str(caught.value)
        assert "ledger format 3" in message and "reads ≤2" in message and "upgrade" in message
        assert "oloproof" not in message


def test_fixtures_stay_small() -> None:
    files = [p for p in FIXTURES.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    total = sum(p.stat().st_size for p in files)
    assert total < 100_000
