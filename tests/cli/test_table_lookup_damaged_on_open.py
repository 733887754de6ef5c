"""One flipped bit in LMDB's newest header page, in the main table's flags, makes LMDB miss the
ledger's tables as it opens them (`MDB_NOTFOUND`; one lowering the last page it records can end
the transaction instead, `MDB_BAD_TXN`). Every command said
`cannot read the ledger at …` as if the file could not be opened, and `verify` exited 2, the
code of bad input, rather than listing a damaged store. Now such an error while the ledger
opens its tables is damage: `verify` lists it (exit 1), every other command says the ledger is
damaged and that `verify` lists what (exit 2).
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

PAGE = 4096
MAIN_FLAGS, TXNID = 92, 144  # in a meta page, after its 16-byte page header


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = toy_project(tmp_path_factory.mktemp("sound") / "p", cases=30)
    assert oloproof("run", cwd=root).code == 0
    return root


def test_a_table_lookup_failing_as_the_ledger_opens_is_damage(sound: Path, tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(sound, root, ignore=shutil.ignore_patterns("lock.mdb"))
    data = root / ".oloproof" / "ledger" / "data.mdb"
    head = bytearray(data.read_bytes())
    newest = max((0, PAGE), key=lambda base: struct.unpack_from("=Q", head, base + TXNID)[0])
    head[newest + MAIN_FLAGS] ^= 0x08  # MDB_INTEGERKEY: the tables' names no longer match
    data.write_bytes(bytes(head))

    verify = oloproof("verify", cwd=root)
    assert verify.code == 1 and verify.err == "", verify.err
    first = verify.out.splitlines()[0]
    assert first.startswith(f"damaged store: the ledger at {root / '.oloproof'} is damaged"), first
    for command in (("runs",), ("inspect", "latest"), ("run",)):
        done = oloproof(*command, cwd=root)
        assert (done.code, done.out) == (2, ""), command
        assert done.err.startswith("error: ") and len(done.err.splitlines()) == 1, done.err
        assert done.err.endswith("(`oloproof verify` lists what is damaged)\n"), done.err
