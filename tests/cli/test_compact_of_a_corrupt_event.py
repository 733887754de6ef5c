"""``ledger compact`` keeping an event whose bytes no longer hash to its address is refused in
one sentence naming the event, and the ledger is left as it was. It used to decode the damaged
bytes as sound ones while choosing what to keep, and end in a traceback (``CBORDecodeError``,
``KeyError: 'body'``), exit 1."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.ledger.tamper import flip_byte_of
from tests.support import oloproof, toy_project

from oloproof import events as ev
from oloproof.store import open_project_ledger


@pytest.mark.parametrize("offset", [1, 3])  # a text head, then the "body" key, damaged
def test_a_kept_corrupt_event_is_refused(tmp_path: Path, offset: int) -> None:
    root = toy_project(tmp_path / "p", cases=30)
    for _ in range(2):
        assert oloproof("run", cwd=root).code == 0
    with open_project_ledger(root, create=False) as ledger:
        address, _ = next(iter(ledger.events(ev.CASE_RESULT)))
        stored = ledger.get_bytes(address)
    flip_byte_of(root / ".oloproof", stored, offset)
    before = (root / ".oloproof" / "ledger" / "data.mdb").read_bytes()

    done = oloproof("ledger", "compact", "--keep-last", "2", cwd=root)

    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == (
        f"compact: selecting\nerror: event {address} is corrupt: its stored bytes no longer "
        "match it\n"
    )
    assert (root / ".oloproof" / "ledger" / "data.mdb").read_bytes() == before
