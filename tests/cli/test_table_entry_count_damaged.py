"""LMDB keeps each table's entry count in the table's own record; one flipped bit there reads
without an error. `verify` took the count of a run table no run uses from it and printed
`stale index runs: run63 holds 1099511627776 entries of no run` for an empty table, and said
`ok` (exit 0) of a ledger whose events table's record counted 197 of its 205 events, a count a
compaction would then record as the history it replaced. Now verify's page scan counts every
table's entries against its record, and a record that differs is a damaged store naming the
table, both counts and nothing absurd (exit 1); compaction and `rebuild-indexes` count events.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest
from tests.ledger.raw import table_record
from tests.support import oloproof, toy_project

ENTRIES = 32  # the entry count's offset in LMDB's record of a table (MDB_db)


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = toy_project(tmp_path_factory.mktemp("sound") / "p", cases=30)
    assert oloproof("run", cwd=root).code == 0
    return root


def recounted(sound: Path, tmp_path: Path, table: bytes, bit: int) -> tuple[Path, int, int]:
    """A copy of the project whose record of ``table`` has bit ``bit`` of its entry count
    flipped: (the copy, the count before, the count after)."""
    root = tmp_path / "p"
    shutil.copytree(sound, root, ignore=shutil.ignore_patterns("lock.mdb"))
    data = root / ".oloproof" / "ledger" / "data.mdb"
    at = table_record(data, table) + ENTRIES
    with data.open("r+b") as f:
        f.seek(at)
        (held,) = struct.unpack("=Q", f.read(8))
        f.seek(at)
        f.write(struct.pack("=Q", held ^ 1 << bit))
    return root, held, held ^ 1 << bit


@pytest.mark.parametrize(("table", "bit"), [(b"run63", 40), (b"events", 3)])
def test_a_table_record_counting_what_it_does_not_hold_is_damage(
    sound: Path, tmp_path: Path, table: bytes, bit: int
) -> None:
    root, held, said = recounted(sound, tmp_path, table, bit)

    done = oloproof("verify", cwd=root)

    assert done.code == 1 and done.err == "", done.err
    assert done.out.splitlines()[0] == (
        f"damaged store: the store is damaged below its events in its {table.decode()} table: "
        f"LMDB's record of the table counts {said:,} entries, but it holds {held:,}"
    )
    assert str(said) not in done.out.replace(f"{said:,}", "")  # no count taken from it


def test_a_sound_ledger_still_verifies(sound: Path) -> None:
    done = oloproof("verify", cwd=sound)
    assert done.code == 0 and done.out.endswith(": ok\n"), done.out + done.err


def test_a_compaction_counts_the_events_it_replaces(sound: Path, tmp_path: Path) -> None:
    root, held, _ = recounted(sound, tmp_path, b"events", 40)

    done = oloproof("ledger", "compact", "--keep-last", "1", cwd=root)

    assert done.code == 0, done.err
    assert f"{held} of {held} events" in done.out, done.out
