"""Archives: export a closure, import it elsewhere all or nothing, refuse damage."""

from __future__ import annotations

import hashlib
import struct
import tempfile
from pathlib import Path

import pytest

from ledger import (
    CorruptEventError,
    Event,
    FormatError,
    IntegrityError,
    Ledger,
    MissingEventError,
    RefConflictError,
    StoreError,
    UnknownAddressError,
    UnsupportedFormatError,
    address_of,
    encode,
    export_archive,
    import_archive,
    open_archive,
    open_ledger,
)
from ledger import archive as archive_module
from ledger.application import DEFAULT_ARCHIVE_MAGIC as MAGIC


def chain(ledger: Ledger) -> dict[str, str]:
    """root <- a <- b, plus an unrelated event; named refs for b and the unrelated one."""
    with ledger.batch():
        root = ledger.put(Event("run.started", 1, {"run": 1}))
        a = ledger.put(Event("case", 1, {"n": 1}, [root]))
        b = ledger.put(Event("judgment", 1, {"n": 2}, [a, root]))
        other = ledger.put(Event("note", 1, {"unrelated": True}))
        ledger.set_ref("run_B", b)
        ledger.set_ref("other", other)
    return {"root": root, "a": a, "b": b, "other": other}


def write_archive(
    path: Path, events: list[bytes], refs: dict[str, str], fmt: int = 1, magic: bytes = MAGIC
) -> None:
    """Write a format-1 archive by hand (as the format-1 code wrote them), to make ones export
    never would."""
    header = encode({"format": fmt, "extensions": [], "events": len(events), "refs": refs})
    body = magic + struct.pack(">I", len(header)) + header
    for data in events:
        body += hashlib.sha256(data).digest() + struct.pack(">I", len(data)) + data
    path.write_bytes(body + hashlib.sha256(body).digest())


def test_round_trip_carries_the_closure_and_asked_refs(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "src") as source:
        ids = chain(source)
        count = export_archive(source, ["run_B"], tmp_path / "x.oloarchive")
        assert count == 3
    with open_ledger(tmp_path / "dst") as target:
        assert import_archive(target, tmp_path / "x.oloarchive").new == 3
        assert [a for a, _ in target.events()] == [ids["root"], ids["a"], ids["b"]]
        assert target.refs() == [("run_B", ids["b"])]
        assert not target.has(ids["other"])
        assert target.verify().ok
        # A second import changes nothing.
        assert import_archive(target, tmp_path / "x.oloarchive").new == 0
        assert len(target) == 3


def test_export_by_prefix_and_address(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "src") as source:
        ids = chain(source)
        assert export_archive(source, [ids["a"][7:19], ids["other"]], tmp_path / "x") == 3
    with open_archive(tmp_path / "x") as archive:
        assert [a for a, _ in archive.events()] == [ids["root"], ids["a"], ids["other"]]
        assert archive.refs() == []  # none was asked for by name


def test_export_refuses_unknown_ids_and_writes_nothing(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "src") as source:
        chain(source)
        with pytest.raises(UnknownAddressError, match="nope"):
            export_archive(source, ["run_B", "nope"], tmp_path / "x")
    assert list(tmp_path.glob("*x*")) == []


def test_export_refuses_an_incomplete_closure(tmp_path: Path) -> None:
    missing = "sha256:" + "cd" * 32
    with open_ledger(tmp_path / "src") as source:
        broken = source.put(Event("case", 1, {}, [missing]))
        with pytest.raises(MissingEventError, match=missing):
            export_archive(source, [broken], tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_import_into_a_ledger_that_has_part_of_it(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "src") as source:
        ids = chain(source)
        export_archive(source, ["run_B"], tmp_path / "x")
    with open_ledger(tmp_path / "dst") as target:
        target.put(Event("run.started", 1, {"run": 1}))
        assert import_archive(target, tmp_path / "x").new == 2
        assert target.get_ref("run_B") == ids["b"]


def test_import_refuses_a_ref_that_would_move(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "src") as source:
        chain(source)
        export_archive(source, ["run_B"], tmp_path / "x")
    with open_ledger(tmp_path / "dst") as target:
        mine = target.put(Event("note", 1, {"mine": True}))
        target.set_ref("run_B", mine)
        with pytest.raises(RefConflictError, match="run_B"):
            import_archive(target, tmp_path / "x")
        assert len(target) == 1 and target.get_ref("run_B") == mine


def _archive_bytes(tmp_path: Path) -> tuple[bytes, list[str]]:
    """The bytes of an archive of the whole chain, and its addresses in order."""
    with open_ledger(tmp_path / "src") as source:
        ids = chain(source)
        export_archive(source, ["run_B", "other"], tmp_path / "x")
    return (tmp_path / "x").read_bytes(), [ids[k] for k in ("root", "a", "b", "other")]


def _refused_without_writing(tmp_path: Path, damaged: bytes, error: type[Exception]) -> None:
    (tmp_path / "damaged").write_bytes(damaged)
    with open_ledger(tmp_path / "dst") as target:
        with pytest.raises(error):
            import_archive(target, tmp_path / "damaged")
        assert len(target) == 0 and target.refs() == []
    with pytest.raises(error):
        open_archive(tmp_path / "damaged")


def test_flipped_byte_in_an_event_is_refused_and_named(tmp_path: Path) -> None:
    data, addresses = _archive_bytes(tmp_path)
    with open_ledger(tmp_path / "src") as source:
        victim = source.get_bytes(addresses[1])
    at = data.find(victim) + len(victim) // 2
    damaged = bytearray(data)
    damaged[at] ^= 0x20
    _refused_without_writing(tmp_path, bytes(damaged), CorruptEventError)
    with pytest.raises(CorruptEventError, match=addresses[1]):
        open_archive(tmp_path / "damaged")


@pytest.mark.parametrize("cut", [1, 10, 33, 100])
def test_truncated_archive_is_refused(tmp_path: Path, cut: int) -> None:
    data, _ = _archive_bytes(tmp_path)
    _refused_without_writing(tmp_path, data[:-cut], FormatError)


def test_damaged_checksum_or_header_is_refused(tmp_path: Path) -> None:
    data, _ = _archive_bytes(tmp_path)
    damaged = bytearray(data)
    damaged[-1] ^= 0x01
    _refused_without_writing(tmp_path, bytes(damaged), IntegrityError)
    _refused_without_writing(tmp_path, data + b"\x00", FormatError)
    _refused_without_writing(tmp_path, b"PK\x03\x04" + data[4:], FormatError)
    _refused_without_writing(tmp_path, b"", FormatError)


def test_a_newer_archive_format_is_refused(tmp_path: Path) -> None:
    write_archive(tmp_path / "future", [Event("note", 1, {}).to_bytes()], {}, fmt=3)
    with pytest.raises(
        UnsupportedFormatError, match="archive format 3.*this ledger reads ≤2.*upgrade"
    ):
        open_archive(tmp_path / "future")


def test_a_non_canonical_event_is_refused(tmp_path: Path) -> None:
    event = Event("note", 1, {"n": 1})
    # The same event with its integer written in two bytes instead of one: it hashes to the
    # digest recorded beside it, but it is not the canonical encoding.
    loose = event.to_bytes().replace(b"\x61\x6e\x01", b"\x61\x6e\x18\x01")
    assert loose != event.to_bytes()
    write_archive(tmp_path / "loose", [loose], {})
    with pytest.raises(CorruptEventError, match="deterministic"):
        open_archive(tmp_path / "loose")


def test_import_refuses_links_it_cannot_satisfy(tmp_path: Path) -> None:
    missing = "sha256:" + "ef" * 32
    dangling = Event("case", 1, {}, [missing])
    write_archive(tmp_path / "partial", [dangling.to_bytes()], {"r": address_of(dangling)})
    with open_ledger(tmp_path / "dst") as target:
        with pytest.raises(MissingEventError, match=missing):
            import_archive(target, tmp_path / "partial")
        assert len(target) == 0 and target.refs() == []


def test_archive_refs_must_name_archived_events(tmp_path: Path) -> None:
    write_archive(tmp_path / "bad", [Event("note", 1, {}).to_bytes()], {"r": "sha256:" + "0" * 64})
    with pytest.raises(FormatError, match="'r'"):
        open_archive(tmp_path / "bad")


def test_missing_archive_file(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot read the archive"):
        open_archive(tmp_path / "nothing-here")


def test_import_inside_a_batch_is_refused(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "src") as source:
        chain(source)
        export_archive(source, ["run_B"], tmp_path / "x")
    with open_ledger(tmp_path / "dst") as target:
        with pytest.raises(StoreError, match="inside a batch"), target.batch():
            import_archive(target, tmp_path / "x")


def test_import_from_an_open_reader_checks_the_file_again(tmp_path: Path) -> None:
    """A reader keeps places in the file, not events, so importing from it reads the file,
    and checks it again: a file changed since it was opened is refused, nothing written."""
    with open_ledger(tmp_path / "src") as source:
        ids = chain(source)
        export_archive(source, ["run_B"], tmp_path / "x")
        victim = source.get_bytes(ids["a"])
    with open_archive(tmp_path / "x") as archive:
        assert archive.get(ids["a"]) == Event("case", 1, {"n": 1}, [ids["root"]])
        with open_ledger(tmp_path / "dst") as target:
            assert import_archive(target, archive).new == 3
        data = bytearray((tmp_path / "x").read_bytes())
        data[data.find(victim) + 5] ^= 0x01
        (tmp_path / "x").write_bytes(bytes(data))
        with pytest.raises(CorruptEventError, match=ids["a"]):
            archive.get(ids["a"])
        with open_ledger(tmp_path / "dst2") as other:
            with pytest.raises(CorruptEventError, match=ids["a"]):
                import_archive(other, archive)
            assert len(other) == 0


@pytest.mark.parametrize("in_memory", [32_768, 16], ids=["in-memory", "scratch-file"])
def test_an_open_reader_finds_every_event_by_address_and_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_memory: int
) -> None:
    """A reader keeps each event's digest and place, in memory up to a limit and in a scratch
    file beyond it (a dict of them grew without bound: 1 GB for a million-case run's archive):
    either way every event is found by its address and by a prefix, and listed once by
    ``events``; an address it does not hold is not found; ``close`` removes the scratch."""
    monkeypatch.setattr(archive_module, "_IN_MEMORY", in_memory)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "scratch"))
    (tmp_path / "scratch").mkdir()
    with open_ledger(tmp_path / "src") as source, source.batch():
        put = [source.put(Event("note", 1, {"n": n})) for n in range(300)]
        put.append(source.put(Event("case", 1, {"n": -1}, [put[0]])))
    with open_ledger(tmp_path / "src") as source:
        assert export_archive(source, put, tmp_path / "x") == 301
    missing = address_of(Event("note", 1, {"n": 300}))
    with open_archive(tmp_path / "x") as archive:
        assert len(archive) == 301
        listed = [address for address, _ in archive.events()]
        assert sorted(listed) == sorted(put)
        assert [address for address, _ in archive.events("case")] == [put[-1]]
        for n, address in enumerate(put[:-1]):
            assert archive.has(address) and address in archive
            assert archive.get(address) == Event("note", 1, {"n": n})
            for prefix in (address[:15], address[7:27], address):
                assert archive.resolve(prefix) == address
        assert not archive.has(missing)
        with pytest.raises(UnknownAddressError):
            archive.get_bytes(missing)
        with pytest.raises(UnknownAddressError):
            archive.resolve(missing[:27])
        assert bool(list((tmp_path / "scratch").iterdir())) == (in_memory < 301)
    assert not list((tmp_path / "scratch").iterdir())


def test_a_reader_refuses_to_list_a_file_changed_since_it_was_opened(tmp_path: Path) -> None:
    """``events`` reads the file again: an event that is not the one checked at its place
    when the archive was opened stops the pass with an error naming the archive."""
    with open_ledger(tmp_path / "src") as source:
        ids = chain(source)
        export_archive(source, ["run_B"], tmp_path / "x")
        victim = source.get_bytes(ids["a"])
    with open_archive(tmp_path / "x") as archive:
        data = bytearray((tmp_path / "x").read_bytes())
        data[data.find(victim) + 5] ^= 0x01
        (tmp_path / "x").write_bytes(bytes(data))
        with pytest.raises(StoreError, match="changed since it was opened and checked"):
            list(archive.events())
