"""Refs are stored as 32-byte digests (the ``binary-refs`` extension), and every ledger and
archive that may hold such events says so.

- An event's canonical bytes hold each ref as its raw digest, 39 bytes fewer than the address
  text; it reads back with its refs as ``sha256:`` addresses, and a list mixing the two
  spellings, or holding a digest of the wrong length, is refused.
- A new ledger declares the extension; a format-2 ledger written before keeps reading as it
  is when opened read-only, and declares it the first time it is opened for writing, its old
  events (refs spelt as text) still reading and verifying.
- An archive written now declares it (those written before, with no extensions, still import:
  ``test_ledger_archive`` writes their headers by hand).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import cbor2
import lmdb
import pytest

from ledger import (
    Event,
    FormatError,
    address_of,
    decode,
    export_archive,
    import_archive,
    open_ledger,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ledger"


def extensions(path: Path) -> list[str]:
    env = lmdb.open(str(path / "ledger"), readonly=True, lock=False, max_dbs=8)
    try:
        with env.begin() as txn:
            record = decode(txn.get(b"format", db=env.open_db(b"meta", txn=txn, create=False)))
    finally:
        env.close()
    found: list[str] = record["extensions"]
    return found


def test_refs_are_stored_as_digests_and_read_as_addresses(tmp_path: Path) -> None:
    first = Event("note", 1, {"n": 1})
    second = Event("note", 1, {"n": 2}, [address_of(first)])
    raw = cbor2.loads(second.to_bytes())
    assert raw["refs"] == [bytes.fromhex(address_of(first)[7:])]
    assert len(second.to_bytes()) == len(cbor2.dumps({**raw, "refs": [address_of(first)]})) - 39
    assert Event.from_bytes(second.to_bytes()) == second
    with open_ledger(tmp_path / "l") as ledger:
        ledger.put(first)
        address = ledger.put(second)
        assert ledger.get(address).refs == (address_of(first),)
        assert ledger.verify().ok


@pytest.mark.parametrize(
    "refs",
    [
        [bytes(32), "sha256:" + "0" * 64],  # two spellings in one list
        [bytes(31)],  # not a digest
    ],
)
def test_a_second_spelling_of_refs_is_refused(refs: list[object]) -> None:
    data = cbor2.dumps({"body": {}, "refs": refs, "type": "note", "schema": 1}, canonical=True)
    with pytest.raises(FormatError):
        Event.from_bytes(data)


def test_an_older_ledger_declares_the_extension_when_first_written(tmp_path: Path) -> None:
    path = Path(shutil.copytree(FIXTURES / "v2", tmp_path / "v2"))
    assert extensions(path) == []
    with open_ledger(path, readonly=True) as ledger:
        old = [(address, event) for address, event in ledger.events()]
    assert extensions(path) == []  # read-only leaves it as it is
    with open_ledger(path) as ledger:
        assert [(a, e) for a, e in ledger.events()] == old  # text refs read as they did
        assert any(e.refs for _, e in old)
        ledger.put(Event("note", 1, {"after": True}, [old[-1][0]]))
        assert ledger.verify().ok
    # Opened for writing, its entries were refiled in sorted runs of the compact layout, which
    # it declares too.
    assert extensions(path) == ["binary-refs", "compact-index", "sorted-runs"]
    open_ledger(tmp_path / "new").close()
    assert extensions(tmp_path / "new") == ["binary-refs", "compact-index", "sorted-runs"]


def test_an_archive_declares_it_and_carries_digest_refs(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "source") as ledger:
        first = ledger.put(Event("note", 1, {"n": 1}))
        second = ledger.put(Event("note", 1, {"n": 2}, [first]))
        ledger.set_ref("latest", second)
        export_archive(ledger, [second], tmp_path / "new.archive")
    header = (tmp_path / "new.archive").read_bytes()
    assert b"binary-refs" in header[:200]
    with open_ledger(tmp_path / "target") as target:
        import_archive(target, tmp_path / "new.archive")
        assert target.get(second).refs == (first,)
        assert target.verify().ok
