"""One bit flipped in the commit number (txnid) of LMDB's older header page made LMDB take that
page for the newest and open the ledger as it stood one commit earlier: the last run's end and
decision were gone, `runs` showed the run INTERRUPTED, and `verify` said ok (exit 0).

LMDB writes commit t into header page t mod 2, so in a sound file the two pages hold two
consecutive commit numbers, each on the page of its parity (or both 0, before the first
commit). A file whose pages do not is damaged: every command refuses it in one sentence, exit 2,
`verify` lists it (exit 1), and nothing is written to it.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from tests.support import answered_project, oloproof

APP = "def answer(case):\n    return {'answer': case['q']}\n"
PAGE = 4096
TXNID = 136 + 8  # in a meta page: 16-byte page header, then the meta; txnid is its last u64


def _txnids(data: Path) -> tuple[int, int]:
    head = data.read_bytes()[: 2 * PAGE]
    return struct.unpack_from("=Q", head, TXNID)[0], struct.unpack_from("=Q", head, PAGE + TXNID)[0]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = answered_project(tmp_path / "p", APP)
    for _ in range(2):
        assert oloproof("run", cwd=root).code == 0
    return root


@pytest.mark.parametrize("bit", [1, 40])
def test_a_flipped_commit_number_in_the_older_header_page_is_damage(
    project: Path, bit: int
) -> None:
    data = project / ".oloproof" / "ledger" / "data.mdb"
    first, second = _txnids(data)
    assert abs(first - second) == 1 and first % 2 == 0  # LMDB's own layout, before the flip
    older = min(first, second)
    offset = (older % 2) * PAGE + TXNID
    with data.open("r+b") as f:
        f.seek(offset)
        f.write(struct.pack("=Q", older ^ (1 << bit)))
    flipped = _txnids(data)
    stored = data.read_bytes()
    sentence = (
        f"the ledger file {data} is damaged: its two header pages record commits "
        f"{flipped[0]:,} and {flipped[1]:,}, which LMDB never leaves side by side "
        "(a header page was overwritten)"
    )

    runs = oloproof("runs", cwd=project)
    assert (runs.code, runs.out) == (2, ""), runs.out
    assert runs.err.startswith(f"error: {sentence}"), runs.err
    verify = oloproof("verify", cwd=project)
    assert verify.code == 1, verify.out
    assert verify.out.splitlines()[0] == f"damaged store: {sentence}"
    again = oloproof("run", cwd=project)
    assert again.code == 2 and again.err.startswith(f"error: {sentence}"), again.err
    assert data.read_bytes() == stored
