"""An LMDB leaf node keeps the size of its key beside it; one flipped bit there turns an
``events`` table key (an 8-byte sequence number) into one of 72 bytes, and the pages still read
without an LMDB error. `verify`, `ledger export --all`, `ledger rebuild-indexes` and `ledger
compact` then ended in a traceback (`struct.error: unpack requires a buffer of 8 bytes`,
exit 1). Each now says the ledger is damaged below its events, naming the key: `verify` as a
damaged store (exit 1), the others in one sentence (exit 2). The same flip in a ``chain``
record ended `ledger export` in a traceback (`ValueError: a chain record is an 8-byte key and a
48-byte value`); it now refuses in one sentence, as `verify` names a broken chain."""

from __future__ import annotations

from pathlib import Path

import lmdb
from tests.ledger.tamper import data_file
from tests.support import oloproof, toy_project

KEY_SIZE = b"\x08\x00"  # the node's key size (little-endian), just before its key


def _key_sizes(root: Path, table: bytes) -> list[int]:
    env = lmdb.open(str(root / ".oloproof" / "ledger"), readonly=True, lock=False, max_dbs=80)
    try:
        with env.begin() as txn:
            cursor = txn.cursor(db=env.open_db(table, txn=txn, create=False))
            return [len(key) for key in cursor.iternext(keys=True, values=False)]
    finally:
        env.close()


def _resize_key(root: Path, table: bytes, number: int) -> None:
    """Flip bit 6 of the key size of ``table``'s record under key ``number`` (8 bytes, as the
    events and chain tables key theirs), in the copy of its page that the table reads (the
    file may hold stale copies that LMDB has since rewritten)."""
    env = lmdb.open(str(root / ".oloproof" / "ledger"), readonly=True, lock=False, max_dbs=80)
    try:
        with env.begin() as txn:
            key = number.to_bytes(8, "big")
            value = txn.get(key, db=env.open_db(table, txn=txn, create=False))
    finally:
        env.close()
    path = data_file(root / ".oloproof")
    data = bytearray(path.read_bytes())
    needle = KEY_SIZE + key + value[:32]
    at = data.find(needle)
    while at >= 0:
        data[at] ^= 0x40
        path.write_bytes(bytes(data))
        if 72 in _key_sizes(root, table):
            return
        data[at] ^= 0x40
        path.write_bytes(bytes(data))
        at = data.find(needle, at + 1)
    raise AssertionError("no live copy of the record's node was found")


def test_an_event_key_of_the_wrong_size_is_damage_not_a_traceback(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=5)
    assert oloproof("run", cwd=root).code in (0, 3)
    _resize_key(root, b"events", 3)
    said = (
        f"the ledger at {root / '.oloproof'} is damaged below its events: its events table "
        "holds a key of 72 bytes, where each is an 8-byte sequence number"
    )

    verified = oloproof("verify", cwd=root)
    assert (verified.code, verified.err) == (1, ""), verified.err
    assert verified.lines[0] == f"damaged store: {said}"
    for args in (
        ["ledger", "export", "--all", "--to", str(tmp_path / "all.oloarchive")],
        ["ledger", "rebuild-indexes"],
        ["ledger", "compact", "--keep-last", "1"],
    ):
        refused = oloproof(*args, cwd=root)
        assert refused.code == 2, args
        assert refused.err.splitlines()[-1].startswith(f"error: {said}"), refused.err
        assert "Traceback" not in refused.err
    assert not (tmp_path / "all.oloarchive").exists()


def test_a_chain_record_of_the_wrong_size_is_not_exported(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=5)
    for _ in range(2):
        assert oloproof("run", cwd=root).code in (0, 3)
    _resize_key(root, b"chain", 2)

    for args in (["--all"], ["latest"]):
        refused = oloproof("ledger", "export", *args, "--to", str(tmp_path / "a"), cwd=root)
        assert (refused.code, refused.out) == (2, ""), refused.err
        assert refused.err.startswith(
            f"error: the ledger at {root / '.oloproof'} is damaged below its events: the "
            "record after commit 1 of its chain is not in shape ("
        ), refused.err
    assert not (tmp_path / "a").exists()
    verified = oloproof("verify", cwd=root)
    assert verified.code == 1 and verified.lines[0].startswith("broken chain: chain record ")
