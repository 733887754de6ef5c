"""The commit chain through the library: what commits record, and how archives carry it.

- a commit that adds events appends one chain record; one that only moves refs appends none;
- an archive carries the chain segment of what it holds; into the history it continues it
  replays its commits one for one (same heads), including after an earlier import of a
  shorter archive of the same ledger, or an import cut short; anywhere else its events arrive
  as new commits of the importing ledger's own history;
- a segment that does not hash, or does not account for the archive's events, is refused;
- memory stays flat: the digests an archive holds spill to a scratch file past a limit.
"""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

import pytest

from ledger import (
    Event,
    IntegrityError,
    Ledger,
    Links,
    check_archive,
    export_archive,
    import_archive,
    open_ledger,
)
from ledger import archive as archive_module
from ledger.application import DEFAULT_ARCHIVE_MAGIC


def notes(ledger: Ledger, start: int, count: int, per_commit: int = 3) -> list[str]:
    addresses = []
    for first in range(start, start + count, per_commit):
        with ledger.batch():
            for n in range(first, min(first + per_commit, start + count)):
                addresses.append(ledger.put(Event("note", 1, {"n": n})))
    return addresses


def test_one_record_per_commit_that_adds_events(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "l") as ledger:
        assert ledger.head() == (0, None)
        first = ledger.put(Event("note", 1, {"n": 0}))
        h1 = "sha256:" + hashlib.sha256(bytes(32) + bytes.fromhex(first[7:])).hexdigest()
        assert ledger.head() == (1, h1)
        ledger.set_ref("latest", first)  # moves a ref, adds no event: no commit record
        ledger.put(Event("note", 1, {"n": 0}))  # already stored: nothing new
        assert ledger.head() == (1, h1)
        with ledger.batch():
            a = ledger.put(Event("note", 1, {"n": 1}))
            b = ledger.put(Event("note", 1, {"n": 2}))
        h2 = hashlib.sha256(bytes.fromhex(h1[7:]) + bytes.fromhex(a[7:]) + bytes.fromhex(b[7:]))
        assert ledger.head() == (2, "sha256:" + h2.hexdigest())
        assert ledger.verify(deep=False).chain.head == "sha256:" + h2.hexdigest()


def test_a_whole_ledger_archive_replays_its_commits(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "src") as source:
        notes(source, 0, 10)
        export_archive(source, [], tmp_path / "early", everything=True)
        notes(source, 10, 7)
        export_archive(source, [], tmp_path / "later", everything=True)
        wanted = source.head()
    with open_ledger(tmp_path / "dst") as target:
        done = import_archive(target, tmp_path / "early")
        assert (done.new, done.replayed) == (10, 4)
        # The later archive continues the history the target now has: only its new commits.
        done = import_archive(target, tmp_path / "later")
        assert (done.new, done.present, done.replayed) == (7, 10, 3)
        assert target.head() == wanted
        assert target.verify(deep=False).ok


def test_an_import_cut_short_is_completed_by_importing_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_ledger(tmp_path / "src") as source:
        notes(source, 0, 12)
        source.set_ref("mine", source.resolve(source.lookup("type", "note")[0]))
        export_archive(source, ["mine"], tmp_path / "x", everything=False)
        export_archive(source, [], tmp_path / "all", everything=True)
        wanted = source.head()
    real = Ledger._commit_imported
    calls = {"n": 0}

    def crash_after_two(self: Ledger, items: list, refs: list) -> int:  # type: ignore[type-arg]
        calls["n"] += 1
        if calls["n"] > 2:
            raise KeyboardInterrupt  # the process is stopped between two commits
        return real(self, items, refs)

    with open_ledger(tmp_path / "dst") as target:
        monkeypatch.setattr(Ledger, "_commit_imported", crash_after_two)
        with pytest.raises(KeyboardInterrupt):
            import_archive(target, tmp_path / "all")
        monkeypatch.setattr(Ledger, "_commit_imported", real)
        assert target.head()[0] == 2 and target.refs() == []  # two commits, no ref yet
        assert target.verify(deep=False).ok
        done = import_archive(target, tmp_path / "all")
        assert (done.new, done.replayed) == (6, 2)
        assert target.head() == wanted and target.get_ref("mine") is not None


def test_into_another_history_the_events_arrive_as_new_commits(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "src") as source:
        kept = notes(source, 0, 6)
        export_archive(source, kept[3:], tmp_path / "x")
    with open_ledger(tmp_path / "dst") as target:
        own = target.put(Event("mine", 1, {}))
        done = import_archive(target, tmp_path / "x")
        # The closure of the last three notes is just them (they link to nothing).
        assert (done.new, done.replayed) == (3, 0)
        commits, head = target.head()
        h = hashlib.sha256(hashlib.sha256(bytes(32) + bytes.fromhex(own[7:])).digest())
        for address in kept[3:]:
            h.update(bytes.fromhex(address[7:]))
        assert (commits, head) == (2, "sha256:" + h.hexdigest())
    info = check_archive(tmp_path / "x")
    assert info.complete and [c[3] for c in info.commits] == [3]  # the commit that added them


def test_a_partial_segment_is_carried_whole_but_never_replayed(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "src") as source:
        addresses = notes(source, 0, 3)
        export_archive(source, addresses[1:2], tmp_path / "x")  # one of a commit's three
    info = check_archive(tmp_path / "x")
    assert info.events == 1 and [c[3] for c in info.commits] == [3] and not info.complete
    with open_ledger(tmp_path / "dst") as target:
        done = import_archive(target, tmp_path / "x")
        assert (done.new, done.replayed) == (1, 0)


def _rewrite_segment(path: Path, change: int) -> None:
    """Flip one byte ``change`` bytes before the checksum, and make the checksum right again."""
    data = bytearray(path.read_bytes()[:-32])
    data[-change] ^= 0x01
    path.write_bytes(bytes(data) + hashlib.sha256(bytes(data)).digest())


@pytest.mark.parametrize("change", [1, 40, 70])  # a digest, the head, the previous head
def test_a_segment_that_does_not_hash_is_refused(tmp_path: Path, change: int) -> None:
    with open_ledger(tmp_path / "src") as source:
        notes(source, 0, 1)
        export_archive(source, [], tmp_path / "x", everything=True)
    _rewrite_segment(tmp_path / "x", change)
    with pytest.raises(IntegrityError, match="chain"):
        check_archive(tmp_path / "x")


def test_a_segment_must_account_for_the_events_in_order(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "src") as source:
        notes(source, 0, 2, per_commit=2)
        export_archive(source, [], tmp_path / "x", everything=True)
    data = (tmp_path / "x").read_bytes()[:-32]
    # Swap the two digests inside the one commit record, and its head to match them.
    tail = len(data) - 64
    first, second = data[tail : tail + 32], data[tail + 32 :]
    head_at = tail - 4 - 32
    forged_head = hashlib.sha256(bytes(32) + second + first).digest()
    forged = data[:head_at] + forged_head + data[head_at + 32 : tail] + second + first
    (tmp_path / "x").write_bytes(forged + hashlib.sha256(forged).digest())
    with pytest.raises(IntegrityError, match="does not account for its events"):
        check_archive(tmp_path / "x")


def test_the_digests_of_a_large_archive_spill_to_a_scratch_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archive_module, "_IN_MEMORY", 16)
    with open_ledger(tmp_path / "src") as source:
        addresses = notes(source, 0, 100, per_commit=25)
        with source.batch():
            for n, target in enumerate(addresses):
                source.put(Event("link", 1, {"n": n}, [target]))
        export_archive(source, [], tmp_path / "x", everything=True)
    info = check_archive(tmp_path / "x")
    assert info.events == 200 and info.complete
    with open_ledger(tmp_path / "dst") as target:
        assert import_archive(target, tmp_path / "x").new == 200
        assert target.verify(deep=False).ok


def test_links_say_what_travels_with_an_event(tmp_path: Path) -> None:
    def by_group(address: str, event: Event) -> list[tuple[str, str]]:
        return [("group", str(event.body["group"]))] if "group" in event.body else []

    links = Links(
        follow=lambda address, event: (
            [("group", str(event.body["run"]))] if event.type == "run" else []
        ),
        names=lambda address, event: [f"run_{event.body['run']}"] if event.type == "run" else [],
        defaults=lambda address, event: ["latest"] if event.type == "run" else [],
    )
    with open_ledger(tmp_path / "src", indexer=by_group) as source:
        run = source.put(Event("run", 1, {"run": 1}))
        cases = [source.put(Event("case", 1, {"group": 1, "n": n}, [run])) for n in range(3)]
        other = source.put(Event("case", 1, {"group": 2, "n": 0}))
        source.set_ref("run_1", run)
        source.set_ref("latest", run)
        assert export_archive(source, [run], tmp_path / "x", links=links) == 4
    info = check_archive(tmp_path / "x")
    assert info.refs == {"run_1": run} and info.default_refs == {"latest": run}
    with open_ledger(tmp_path / "dst", indexer=by_group) as target:
        mine = target.put(Event("mine", 1, {}))
        target.set_ref("latest", mine)
        import_archive(target, tmp_path / "x")
        assert target.lookup("group", "1") == cases and not target.has(other)
        assert target.get_ref("run_1") == run
        assert target.get_ref("latest") == mine  # a default never moves an existing ref


def test_archives_start_with_the_programs_magic(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "src") as source:
        notes(source, 0, 1)
        export_archive(source, [], tmp_path / "x", everything=True)
    data = (tmp_path / "x").read_bytes()
    assert data.startswith(DEFAULT_ARCHIVE_MAGIC)
    (length,) = struct.unpack(
        ">I", data[len(DEFAULT_ARCHIVE_MAGIC) : len(DEFAULT_ARCHIVE_MAGIC) + 4]
    )
    assert b"oloproof" not in data
    assert length > 0
