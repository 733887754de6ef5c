"""The ledger knows nothing of the program built on it: it is told a name and an archive magic.

The package's source never names Oloproof (not in code, messages or docstrings), and the
words a message uses for the program are the ones the program passed in its ``Application``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import ledger
from ledger import (
    Application,
    Event,
    FormatError,
    UnsupportedFormatError,
    encode,
    export_archive,
    open_archive,
    open_ledger,
)
from ledger.application import DEFAULT_ARCHIVE_MAGIC

PACKAGE = Path(ledger.__file__).resolve().parent
EVALKIT = Application(name="evalkit", archive_magic=b"\x89evalkit-archive\r\n\x1a\n")


def test_the_package_never_names_a_program() -> None:
    for source in PACKAGE.rglob("*.py"):
        text = source.read_text(encoding="utf-8").lower()
        assert "oloproof" not in text, source.name


def test_archives_carry_the_programs_magic_and_refuse_another_programs(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "l", app=EVALKIT) as source:
        source.put(Event("note", 1, {}))
        export_archive(source, [], tmp_path / "x", everything=True)
    assert (tmp_path / "x").read_bytes().startswith(EVALKIT.archive_magic)
    assert open_archive(tmp_path / "x", EVALKIT).info.events == 1
    with pytest.raises(FormatError, match=r"is not a ledger archive$"):
        open_archive(tmp_path / "x")  # the default program's magic is another
    assert not EVALKIT.archive_magic.startswith(DEFAULT_ARCHIVE_MAGIC[:5])


def test_messages_use_the_name_the_program_gave(tmp_path: Path) -> None:
    open_ledger(tmp_path / "l").close()
    import lmdb

    env = lmdb.open(str(tmp_path / "l" / "ledger"), max_dbs=8)
    with env.begin(write=True) as txn:
        txn.put(
            b"format", encode({"format": 9, "extensions": []}), db=env.open_db(b"meta", txn=txn)
        )
    env.close()
    with pytest.raises(UnsupportedFormatError, match="this evalkit reads ≤2 — upgrade"):
        open_ledger(tmp_path / "l", app=EVALKIT)
    with pytest.raises(UnsupportedFormatError, match="this ledger reads ≤2 — upgrade"):
        open_ledger(tmp_path / "l")


def test_an_archive_magic_is_checked_when_made() -> None:
    with pytest.raises(ValueError, match="8 to 64 bytes"):
        Application(archive_magic=b"short")


def test_indexes_filed_by_older_rules_are_rebuilt_when_opened_for_writing(tmp_path: Path) -> None:
    """A program that adds an index: the events stored before are filed under it on the next
    writable open, and a read-only open refuses rather than answer lookups that miss them."""

    def by_topic(address: str, event: Event) -> list[tuple[str, str]]:
        return [("topic", str(event.body["topic"]))]

    before = Application(name="evalkit", indexes="rules-1")
    with open_ledger(tmp_path / "l", app=before) as old:
        old.put(Event("note", 1, {"topic": "a"}))
        old.put(Event("note", 1, {"topic": "b"}))
    after = Application(name="evalkit", indexer=by_topic, indexes="rules-2")
    with pytest.raises(ledger.StaleIndexesError, match=r"filed by an older version of evalkit"):
        open_ledger(tmp_path / "l", app=after, readonly=True)
    with open_ledger(tmp_path / "l", app=after) as new:
        assert len(new.lookup("topic", "a")) == 1 and len(new.lookup("topic", "b")) == 1
        assert new.verify(deep=False).ok
    with open_ledger(tmp_path / "l", app=after, readonly=True) as reading:
        assert len(reading.lookup("topic", "b")) == 1
