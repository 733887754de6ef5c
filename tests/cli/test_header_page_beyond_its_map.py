"""One flipped bit in the last page number LMDB's newest header page records made every command
say the ledger file `is 245,760 bytes long, but its last commit needs 35,184,372,334,592 bytes
(it was truncated)`: 35 TB for a file of a few pages, and a cause that was not the one. LMDB
allocates no page past the map size the same page records, so a last page beyond it is a
damaged header page, and every command now says so (exit 2; `verify` lists it, exit 1); a file
cut short is still said to be truncated.
"""

from __future__ import annotations

import struct
from pathlib import Path

from tests.support import oloproof, toy_project

PAGE = 4096
MAP_SIZE, LAST_PAGE, TXNID = 32, 136, 144  # in a meta page, after its 16-byte page header


def test_a_last_page_beyond_the_map_is_a_damaged_header_not_a_short_file(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=30)
    assert oloproof("run", cwd=root).code == 0
    data = root / ".oloproof" / "ledger" / "data.mdb"
    head = data.read_bytes()[: 2 * PAGE]
    newest = max((0, PAGE), key=lambda base: struct.unpack_from("=Q", head, base + TXNID)[0])
    (map_size,) = struct.unpack_from("=Q", head, newest + MAP_SIZE)
    (last,) = struct.unpack_from("=Q", head, newest + LAST_PAGE)
    with data.open("r+b") as f:
        f.seek(newest + LAST_PAGE)
        f.write(struct.pack("=Q", last ^ 1 << 33))
    sentence = (
        f"the ledger file {data} is damaged: its newest header page says its last commit needs "
        f"{((last ^ 1 << 33) + 1) * PAGE:,} bytes, more than the {map_size:,}-byte map it "
        "records (a header page was overwritten)"
    )

    runs = oloproof("runs", cwd=root)
    assert (runs.code, runs.out) == (2, "") and runs.err.startswith(f"error: {sentence}")
    verify = oloproof("verify", cwd=root)
    assert verify.code == 1, verify.out + verify.err
    assert verify.out.splitlines()[0] == f"damaged store: {sentence}"
    assert "truncated" not in verify.out + runs.err
