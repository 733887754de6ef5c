"""Sorted runs: how the address table and the indexes are kept so that writing them appends.

Address entries (digest -> sequence number) and index entries (name, key, sequence number ->
digest head) have keys that arrive in random order: digests and identities. Filed into one
B-tree each, every new entry of a large ledger landed on a page of its own, which LMDB copies
whole on write: a million-case run wrote 17 bytes for each byte it stored, its pages were half
full, and its time per case grew with the ledger.

So each commit files its entries as a *run*: sorted, written in one sweep into an empty table
of its own (``format.RUN_TABLES`` of them), whose pages fill completely, and never changed
after. The entries of one key in one run share records of up to ``_POSTINGS`` (12 bytes an
entry beyond the first), so a type or a run's cases cost little more than their sequence
numbers. A run covers the events of a range of sequence numbers, and the runs, ordered by that
range, tile the ledger's events without gap or overlap. Once eight runs of one size class are
the newest, they are merged into one of a larger class (``_next_merge``; each class eight
times the one below), so a ledger of N entries holds a few dozen runs and each entry is written
again once per class it passes, about log8(N / commit) times. A merge larger than
``_AT_ONCE`` is written a step at a time, in the commits that follow (``Merging``), and runs
of the largest class are not merged further: what one commit writes, and LMDB holds in memory
for it, stays bounded.

A read asks the runs newest first for an address or the last entry of a key, in range order
for every entry of a key; each run has a filter (``Filter``, read when a lookup first needs it)
that answers "certainly not here" for almost every key it does not hold, so a lookup reads the
run that holds its key and about two others in a hundred. The directory of runs is one record
in ``meta`` (``RUNS_KEY``), read in the transaction that uses it (and kept for a read
snapshot's id), so each transaction sees the runs that its snapshot holds.

A ledger written before runs existed keeps its entries in the ``addr`` and ``index`` tables;
read-only, it is read as one run that covers every event and has no filter (``base_run``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import chain, islice
from operator import eq, itemgetter
from typing import Any, Final

from ledger._filter import (
    BULK,
    FILTER_KEY,
    Filter,
    FilterCell,
    digest_hash,
    prefix_digest,
    prefix_hash,
    row_hashes,
)
from ledger.codec import decode, encode
from ledger.errors import FormatError, LedgerError
from ledger.format import _SEQ, ENTRY_HEAD, RUN_TABLES

ADDR_TAG: Final = b"\x00"  # a run table's address entries: tag, digest -> sequence key
INDEX_TAG: Final = b"\x01"  # its index entries: tag, prefix, sequence key -> digest head
RUNS_KEY: Final = b"runs"  # the directory, in ``meta``

_NO_END: Final = 1 << 64

FANOUT: Final = 8  # runs of one size class merged at once
_BASE: Final = 64  # entries below which a run is of the smallest class
_TOP: Final = 5  # runs of this class (262,144 entries and more) are not merged by size
# Runs allowed once a commit is done: one table stays free for the next commit's run, one for
# a merge's output, written before its sources are dropped, and one for a merge under way.
_MAX_RUNS: Final = RUN_TABLES - 3
# Merges of up to this many entries are written at once (about 2 MB of pages); a larger one a
# step of _STEP records in each commit (``RunWriter.settle``),
# or of _CATCH_UP times the records the commit filed, if more: a merge under way then keeps
# ahead of the runs that large commits bring.
_AT_ONCE: Final = 65_536
_STEP: Final = 16_384
_CATCH_UP: Final = 4
_MERGE_CHUNK: Final = 8192  # records read from each source at a time while merging
# An index record holds up to this many entries of one key (about 750 bytes: four or five
# records to a page), so that one key's many entries cost 12 bytes each, not a record each.
_POSTINGS: Final = 64
_POSTING: Final = 8 + ENTRY_HEAD


@dataclass(frozen=True, slots=True)
class Run:
    """One run: the entries of the events ``first`` to ``end - 1``, in one table.

    ``table`` is its run table's number (``-1`` for the first layout's ``addr`` and ``index``
    tables, read as one run); ``tag_addr`` and ``tag_index`` start its address and index keys
    there; ``cell`` holds its filter (``None``: it has none, and every key is looked for).
    """

    ident: int
    table: int
    first: int
    end: int
    entries: int
    addr_db: Any
    index_db: Any
    tag_addr: bytes = ADDR_TAG
    tag_index: bytes = INDEX_TAG
    cell: FilterCell | None = None

    def may_hold(self, txn: Any, hashed: tuple[int, int]) -> bool:
        """Whether the run's filter (read in ``txn`` if it was not) lets ``hashed`` through."""
        if self.cell is None:
            return True
        made = self.cell.of(txn)
        return made is None or made.holds(hashed)

    def addr(self, txn: Any, digest: bytes) -> bytes | None:
        found: bytes | None = txn.get(self.tag_addr + digest, db=self.addr_db)
        return found

    def index_at(self, txn: Any, entry: bytes) -> bytes | None:
        """The digest head of index entry ``entry`` (prefix + sequence key), or ``None``."""
        key = self.tag_index + entry
        if self.table < 0:
            found: bytes | None = txn.get(key, db=self.index_db)
            return found
        cursor = txn.cursor(db=self.index_db)
        if cursor.set_range(key) and cursor.key() == key:
            return bytes(cursor.value()[:ENTRY_HEAD])
        if not (cursor.prev() if cursor.key() else cursor.last()):
            return None
        record, value = cursor.item()
        if record[len(self.tag_index) : -8] != entry[:-8]:
            return None
        seq, lo, hi = entry[-8:], 0, (len(value) - ENTRY_HEAD) // _POSTING
        while lo < hi:  # the entries after the first, by sequence number
            mid = (lo + hi) // 2
            at = ENTRY_HEAD + mid * _POSTING
            found = value[at : at + 8]
            if found == seq:
                return bytes(value[at + 8 : at + _POSTING])
            if found < seq:
                lo = mid + 1
            else:
                hi = mid
        return None

    def scan(self, txn: Any, prefix: bytes, after: int = 0) -> Iterator[tuple[bytes, bytes]]:
        """``(entry key, digest head)`` of this run's entries under ``prefix`` (every entry,
        for no prefix) whose event comes after sequence number ``after``, in key order (for
        one index key: append order)."""
        tag = self.tag_index
        within, cut = tag + prefix, len(tag)
        cursor = txn.cursor(db=self.index_db)
        if after:
            start = within + _SEQ.pack(after + 1)
            moved = cursor.set_range(start)
            # The record holding the first entry past ``after`` may begin before it.
            if self.table >= 0 and (not moved or cursor.key() != start):
                back = cursor.prev() if moved else cursor.last()
                if not back or not cursor.key().startswith(within):
                    moved = cursor.set_range(start)
                else:
                    moved = True
        else:
            moved = cursor.set_range(within)
        if not moved:
            return
        postings = self.table >= 0
        for key, value in cursor:
            if not key.startswith(within):
                return
            if not postings:
                if _SEQ.unpack(key[-8:])[0] > after:
                    yield key[cut:], value
                continue
            entry = key[cut:-8]
            for seq, head in _postings(key[-8:], value):
                if _SEQ.unpack(seq)[0] > after:
                    yield entry + seq, head

    def is_record(self, key: bytes, value: bytes) -> bool:
        """Whether ``(key, value)``, tagged ``INDEX_TAG``, has the shape of an index record:
        a prefix of two parts and a sequence key; a head, then whole further entries."""
        if len(key) < len(self.tag_index) + 4 + 8:
            return False
        return self.table < 0 or (
            len(value) >= ENTRY_HEAD and not (len(value) - ENTRY_HEAD) % _POSTING
        )

    def entries_of(self, key: bytes, value: bytes) -> Iterator[bytes]:
        """The entry keys (prefix + sequence key) of the index record ``key`` of this run
        holds, ``value`` being its value."""
        entry = key[len(self.tag_index) :]
        if self.table < 0:
            yield entry
            return
        prefix = entry[:-8]
        for seq, _ in _postings(entry[-8:], value):
            yield prefix + seq

    def scan_back(self, txn: Any, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
        """``scan`` of ``prefix`` from its last entry back to its first."""
        tag = self.tag_index
        within = tag + prefix
        cursor = txn.cursor(db=self.index_db)
        moved = cursor.prev() if cursor.set_range(within + b"\xff" * 9) else cursor.last()
        cut, postings = len(tag), self.table >= 0
        while moved:
            key, value = cursor.item()
            if not key.startswith(within):
                return
            if postings and len(value) > ENTRY_HEAD:
                entry = key[cut:-8]
                for seq, head in reversed(list(_postings(key[-8:], value))):
                    yield entry + seq, head
            else:  # one entry: the record is the entry
                yield key[cut:], value
            moved = cursor.prev()

    def addr_keys(self, txn: Any, start: bytes = b"") -> Iterator[bytes]:
        """The digests of this run's address entries from ``start`` on, in order."""
        tag = self.tag_addr
        cursor = txn.cursor(db=self.addr_db)
        if not cursor.set_range(tag + start):
            return
        cut = len(tag)
        for key in cursor.iternext(keys=True, values=False):
            if not key.startswith(tag):
                return
            yield key[cut:]


def _postings(first: bytes, value: bytes) -> Iterator[tuple[bytes, bytes]]:
    """``(sequence key, digest head)`` of each entry an index record holds: the one its key
    ends with (``first``), whose head starts ``value``, then each 8-byte sequence key and
    4-byte head that follow."""
    yield first, value[:ENTRY_HEAD]
    for at in range(ENTRY_HEAD, len(value), _POSTING):
        yield value[at : at + 8], value[at + 8 : at + _POSTING]


def base_run(addr_db: Any, index_db: Any) -> Run:
    """The first layout's ``addr`` and ``index`` tables, read as one run without a filter."""
    return Run(0, -1, 1, _NO_END, 0, addr_db, index_db, b"", b"", None)


@dataclass(frozen=True, slots=True)
class Merging:
    """A merge written a step at a time (``RunWriter._advance``): the run table it fills, in
    key order, and the runs it merges (their idents, adjacent in the directory), which stay
    listed, and are what reads use, until it is done."""

    table: int
    sources: tuple[int, ...]


class RunSet:
    """The runs one transaction sees, ordered by the events they cover (see the module)."""

    __slots__ = ("_firsts", "_probes", "merging", "next_ident", "raw", "runs")

    def __init__(
        self,
        runs: Sequence[Run],
        next_ident: int,
        raw: bytes | None,
        merging: Merging | None = None,
    ) -> None:
        self.runs = tuple(runs)
        self.merging = merging  # a merge written a step at a time, not yet done
        self._firsts = [run.first for run in self.runs]
        self.next_ident = next_ident
        self.raw = raw  # the directory record it was read from (``None``: the first layout)
        # What an address lookup asks of each run, newest first, unpacked once: it is on
        # the path of every get and put.
        self._probes = tuple((run.cell, run.addr_db, run.tag_addr) for run in reversed(self.runs))

    def tables(self) -> set[int]:
        """The run tables in use: the runs' and the merge under way's."""
        used = {run.table for run in self.runs}
        if self.merging is not None:
            used.add(self.merging.table)
        return used

    def covering(self, seq: int) -> Run | None:
        """The run that covers sequence number ``seq``, if any does."""
        at = bisect_right(self._firsts, seq) - 1
        if at < 0:
            return None
        run = self.runs[at]
        return run if seq < run.end else None

    def seq_of(self, txn: Any, digest: bytes) -> bytes | None:
        """The sequence key of the event stored under ``digest``, or ``None``."""
        block, mask = digest_hash(digest)
        get = txn.get
        for cell, db, tag in self._probes:  # a fresh event, the likeliest, is newest
            if cell is not None:
                made = cell.filter if cell.read else cell.of(txn)
                if made is not None and made.words[block % made.blocks] & mask != mask:
                    continue
            found: bytes | None = get(tag + digest, db=db)
            if found is not None:
                return found
        return None

    def seqs_of(self, txn: Any, digests: Sequence[bytes]) -> list[bytes | None]:
        """``seq_of`` each of ``digests``: a commit's, whose filters are asked all at once
        (with NumPy), run by run, so that a run's table is read only for the few a filter
        lets through."""
        if len(digests) < BULK:
            return [self.seq_of(txn, digest) for digest in digests]
        import numpy as np

        hashes, masks = row_hashes(b"".join(digests), 32)
        found: list[bytes | None] = [None] * len(digests)
        left = np.ones(len(digests), dtype=np.bool_)
        get = txn.get
        for cell, db, tag in self._probes:  # newest first, as ``seq_of``
            made = None if cell is None else cell.of(txn)
            asked = left if made is None else left & made.holding(hashes, masks)
            for at in np.flatnonzero(asked).tolist():
                seq_key: bytes | None = get(tag + digests[at], db=db)
                if seq_key is not None:
                    found[at] = seq_key
                    left[at] = False
        return found

    def entries(
        self, txn: Any, prefix: bytes, after: int = 0
    ) -> Generator[tuple[bytes, bytes], None, None]:
        """``(entry key, digest head)`` of every entry under ``prefix`` whose event comes after
        sequence number ``after``, in append order. A scan reads no filter that was not read
        already (it costs a run one seek), so that reading a run's cases holds none."""
        block, mask = prefix_hash(prefix)
        start = max(0, bisect_right(self._firsts, after) - 1)
        for run in self.runs[start:]:
            if run.end <= after + 1:
                continue
            cell = run.cell
            made = cell.filter if cell is not None else None
            if made is not None and made.words[block % made.blocks] & mask != mask:
                continue
            yield from run.scan(txn, prefix, after if run.first <= after else 0)

    def last_record(self, txn: Any, prefix: bytes, events: Any) -> bytes | None:
        """The ``events`` record (in table ``events``) of the last event filed under
        ``prefix``, or ``None``; an entry whose record is another event's (a stale index: its
        digest head differs) is passed over. A cache lookup: written out rather than built on
        ``scan_back``, for its calls."""
        block, mask = prefix_hash(prefix)
        get = txn.get
        for run in reversed(self.runs):
            cell = run.cell
            if cell is not None:
                made = cell.filter if cell.read else cell.of(txn)
                if made is not None and made.words[block % made.blocks] & mask != mask:
                    continue
            for entry, head in run.scan_back(txn, prefix):
                value: bytes | None = get(entry[-8:], db=events)
                if value is not None and value.startswith(head):
                    return value
        return None

    def with_runs(
        self, runs: Sequence[Run], next_ident: int, merging: Merging | None = None
    ) -> RunSet:
        """A directory of ``runs`` (and of a merge under way); its record is made now
        (``raw``)."""
        record: dict[str, Any] = {
            "next": next_ident,
            "runs": [[r.ident, r.table, r.first, r.end, r.entries] for r in runs],
        }
        if merging is not None:
            record["merging"] = [merging.table, list(merging.sources)]
        return RunSet(runs, next_ident, encode(record), merging)


EMPTY_DIRECTORY: Final = encode({"next": 1, "runs": []})


Row = tuple[int, int, int, int, int]  # ident, table, first, end, entries


def read_directory(raw: bytes | None) -> tuple[int, list[Row], Merging | None]:
    """``(next ident, [(ident, table, first, end, entries), ...], merge under way)`` of a
    directory record, runs in the order it lists them; ``FormatError`` for a record in
    another shape."""
    try:
        record = decode(raw) if raw is not None else None
        next_ident = record["next"]  # type: ignore[index]
        listed = record["runs"]  # type: ignore[index]
        rows = [tuple(row) for row in listed]
        under_way = record.get("merging")  # type: ignore[union-attr]
    except (LedgerError, KeyError, TypeError, AttributeError):
        raise FormatError("its run directory is unreadable") from None
    if not isinstance(next_ident, int) or isinstance(next_ident, bool):
        raise FormatError("its run directory has no number for its next run")
    found: list[Row] = []
    tables: set[int] = set()
    end_before = 1
    for row in rows:
        if len(row) != 5 or not all(isinstance(v, int) and not isinstance(v, bool) for v in row):
            raise FormatError(f"its run directory lists {list(row)!r}, not a run")
        ident, table, first, end, entries = row
        if not (0 <= table < RUN_TABLES and 0 < first < end and entries >= 0 and ident > 0):
            raise FormatError(f"its run directory lists an impossible run {list(row)!r}")
        if first < end_before or table in tables or ident >= next_ident:
            raise FormatError(
                f"its run directory lists run {ident} out of order, over another or twice"
            )
        tables.add(table)
        end_before = end
        found.append((ident, table, first, end, entries))
    return next_ident, found, _merging(under_way, found, tables)


def _merging(under_way: Any, rows: list[Row], tables: set[int]) -> Merging | None:
    """The merge under way a directory names, checked against its runs."""
    if under_way is None:
        return None
    try:
        table, sources = under_way
        merging = Merging(table, tuple(sources))
    except (TypeError, ValueError):
        raise FormatError("its run directory names a merge it cannot describe") from None
    idents = [row[0] for row in rows]
    at = (
        idents.index(merging.sources[0])
        if merging.sources[:1] and merging.sources[0] in idents
        else -1
    )
    if (
        not isinstance(table, int)
        or not 0 <= table < RUN_TABLES
        or table in tables
        or len(merging.sources) < 2
        or at < 0
        or tuple(idents[at : at + len(merging.sources)]) != merging.sources
    ):
        raise FormatError(f"its run directory names an impossible merge {under_way!r}")
    return merging


# -- writing ---------------------------------------------------------------------------------


def size_class(entries: int) -> int:
    """0 below ``_BASE`` entries, then one more for each ``FANOUT`` times as many, up to
    ``_TOP``."""
    level, bound = 0, _BASE
    while entries >= bound and level < _TOP:
        level += 1
        bound *= FANOUT
    return level


def _next_merge(runs: Sequence[Run], start: int = 0) -> tuple[int, int] | None:
    """The runs ``[lo, hi)`` to merge next, of those from ``start`` on, or ``None``.

    From the newest run back, the first stretch in which the largest size class present
    (below ``_TOP``) holds ``FANOUT`` runs is merged, with the smaller runs just before it: a
    few small commits between large ones are merged with them rather than left behind, and a
    large run never takes in the smaller ones before it on its own (which would write it
    again for a few entries). Past ``_MAX_RUNS``, the adjacent pair with the fewest entries
    becomes one.
    """
    n = len(runs)
    biggest = count = -1
    for i in range(n - 1, start - 1, -1):
        level = size_class(runs[i].entries)
        if level > biggest:
            biggest, count = level, 0
        if level == biggest:
            count += 1
            if count == FANOUT and biggest < _TOP:
                while i > start and size_class(runs[i - 1].entries) < biggest:
                    i -= 1
                return i, n
    if n > _MAX_RUNS and n - start >= 2:
        i = min(range(start, n - 1), key=lambda i: runs[i].entries + runs[i + 1].entries)
        return i, i + 2
    return None


class Filing:
    """The address and index entries of a range of events, gathered as each event is
    appended (in order): what ``RunWriter.add`` files as one run. A key's entries are kept
    together as they come, so that none needs sorting but the keys themselves."""

    __slots__ = ("addrs", "count", "keys")

    def __init__(self) -> None:
        self.addrs: list[bytes] = []  # digest + sequence key
        self.keys: dict[bytes, list[bytes]] = {}  # prefix -> sequence key + digest head
        self.count = 0

    def event(self, digest: bytes, seq_key: bytes, prefixes: Iterable[bytes]) -> None:
        """File the event of ``digest``, numbered ``seq_key``, under its address and each of
        ``prefixes``."""
        self.addrs.append(digest + seq_key)
        posting = seq_key + digest[:ENTRY_HEAD]
        keys = self.keys
        count = 1
        for prefix in prefixes:
            found = keys.get(prefix)
            if found is None:
                keys[prefix] = [posting]
            else:
                found.append(posting)
            count += 1
        self.count += count

    def __bool__(self) -> bool:
        return bool(self.addrs)


class RunWriter:
    """Files runs and merges them, in one write transaction (``txn``), on the directory
    ``runs`` as that transaction read it. ``tables`` are the run tables' handles."""

    def __init__(self, txn: Any, tables: Sequence[Any], runs: RunSet) -> None:
        if runs.raw is None:
            raise FormatError("entries are written only in runs; its indexes need rebuilding")
        self._txn = txn
        self._tables = tables
        self.runs = runs
        self._filed = 0  # records the commit filed as runs of its own

    def add(self, first: int, end: int, filing: Filing) -> None:
        """File the entries of the events ``first`` to ``end - 1`` (``filing``) as a new run,
        then merge as the policy says."""
        addrs, keys = filing.addrs, filing.keys
        addrs.sort()
        prefixes = sorted(keys)
        made = Filter.sized(len(addrs) + len(keys))
        made.add_rows(b"".join(addrs), 32 + 8)
        made.add_rows(b"".join([prefix_digest(prefix) for prefix in prefixes]), 16)
        self._filed += len(addrs) + len(keys)

        def index_records() -> Iterator[tuple[bytes, bytes]]:
            for prefix in prefixes:
                postings, tagged = keys[prefix], INDEX_TAG + prefix
                for at in range(0, len(postings), _POSTINGS):
                    head = postings[at]
                    rest = b"".join(postings[at + 1 : at + _POSTINGS])
                    yield tagged + head[:8], head[8:] + rest

        table = self._free_table()
        addr_records = [(ADDR_TAG + item[:32], item[32:]) for item in addrs]
        self._fill(table, chain(addr_records, index_records()), made)
        run = Run(self.runs.next_ident, table, first, end, filing.count, *self._dbs(table))
        run = replace(run, cell=FilterCell(run.index_db, made))
        runs = (*self.runs.runs, run)
        self.runs = self.runs.with_runs(runs, run.ident + 1, self.runs.merging)
        self.settle()

    def settle(self) -> None:
        """Merge as the policy says (``_next_merge``): a merge of up to ``_AT_ONCE`` entries
        at once; a larger one, one at a time, ``_STEP`` records in each commit, so that what
        a commit writes, and LMDB keeps in memory for it, stays bounded whatever the size of
        the ledger."""
        self._advance()
        while True:
            runs, merging = self.runs.runs, self.runs.merging
            start = 0 if merging is None else _after(runs, merging)
            span = _next_merge(runs, start)
            if span is None:
                return
            lo, hi = span
            if sum(run.entries for run in runs[lo:hi]) <= _AT_ONCE:
                self._merge(lo, hi)
            elif merging is None:
                table = self._free_table()
                under_way = Merging(table, tuple(run.ident for run in runs[lo:hi]))
                self.runs = self.runs.with_runs(runs, self.runs.next_ident, under_way)
                self._advance()
            else:
                return

    def _merge(self, lo: int, hi: int) -> None:
        group = self.runs.runs[lo:hi]
        tally = _Tally(Filter.of_words(self._words_for(group)))
        table = self._free_table()
        sources = [self._txn.cursor(db=self._tables[run.table]).iternext() for run in group]
        self._fill(table, chain.from_iterable(map(tally.of, _merged(sources))), tally.filter)
        self._replace(lo, hi, table, tally.entries, tally.filter, self.runs.merging)

    def _advance(self, *, to_the_end: bool = False) -> None:
        """Write the next step of the merge under way (all that is left, with ``to_the_end``),
        after the last record its table holds, and finish it when none are left.
        What it writes is the merge's own: any process's commit can take it on."""
        merging = self.runs.merging
        if merging is None:
            return
        runs = self.runs.runs
        lo = _after(runs, merging) - len(merging.sources)
        txn, db = self._txn, self._tables[merging.table]
        target = txn.cursor(db=db)
        last = bytes(target.key()) if target.last() else None
        sources: list[Iterator[tuple[bytes, bytes]]] = []
        for run in runs[lo : lo + len(merging.sources)]:
            cursor = txn.cursor(db=self._tables[run.table])
            found = cursor.set_range(last) if last is not None else cursor.first()
            if found and cursor.key() == last:
                found = cursor.next()
            sources.append(cursor.iternext() if found else iter(()))
        step = max(_STEP, _CATCH_UP * self._filed)
        stream = _merged(sources, min(_MERGE_CHUNK, step // len(sources) + 1))
        put = 0
        for chunk in stream:
            target.putmulti(chunk, append=True)
            put += len(chunk)
            if put >= step and not to_the_end:
                more = next(stream, None)
                if more is None:
                    break
                target.putmulti(more, append=True)  # and the rest in a later commit
                return
        # Its filter and count, read back from all the steps' records.
        hi = lo + len(merging.sources)
        tally = _Tally(Filter.of_words(self._words_for(runs[lo:hi])))
        records = txn.cursor(db=db).iternext()
        while chunk := list(islice(records, _MERGE_CHUNK)):
            tally.of(chunk)
        txn.put(FILTER_KEY, tally.filter.to_bytes(), db=db, append=True)
        self._replace(lo, hi, merging.table, tally.entries, tally.filter, None)

    def _words_for(self, group: Sequence[Run]) -> int:
        """The words of a filter for what ``group``'s runs hold: theirs, added up (a run
        without a filter that can be read, as if each entry were a key)."""
        words = 0
        for run in group:
            made = None if run.cell is None else run.cell.of(self._txn)
            words += Filter.sized(run.entries).blocks if made is None else made.blocks
        return words

    def _replace(
        self, lo: int, hi: int, table: int, count: int, made: Filter, merging: Merging | None
    ) -> None:
        """Put the run just written into ``table`` in place of runs ``[lo, hi)``, whose tables
        are emptied."""
        group = self.runs.runs[lo:hi]
        for run in group:
            self._txn.drop(self._tables[run.table], delete=False)
        ident = self.runs.next_ident
        run = Run(ident, table, group[0].first, group[-1].end, count, *self._dbs(table))
        run = replace(run, cell=FilterCell(run.index_db, made))
        runs = (*self.runs.runs[:lo], run, *self.runs.runs[hi:])
        self.runs = self.runs.with_runs(runs, ident + 1, merging)

    def _fill(self, table: int, items: Iterator[tuple[bytes, bytes]], made: Filter) -> None:
        db = self._tables[table]
        self._txn.cursor(db=db).putmulti(items, append=True)
        self._txn.put(FILTER_KEY, made.to_bytes(), db=db, append=True)

    def _free_table(self) -> int:
        """A run table no run (nor the merge under way) uses, emptied (a table left behind by
        a tool is dropped). Should none be free, the merge under way is finished first."""
        used = self.runs.tables()
        for table in range(RUN_TABLES):
            if table not in used:
                db = self._tables[table]
                if self._txn.stat(db)["entries"]:
                    self._txn.drop(db, delete=False)
                return table
        if self.runs.merging is not None:
            self._advance(to_the_end=True)
            return self._free_table()
        raise FormatError("every run table is in use")  # _MAX_RUNS keeps three free

    def _dbs(self, table: int) -> tuple[Any, Any]:
        db = self._tables[table]
        return db, db


class _Tally:
    """What a merged run's records, met in key order, hold: their keys added to its filter
    and their entries counted (``entries``), a sorted chunk at a time (``of``)."""

    __slots__ = ("entries", "filter")

    def __init__(self, made: Filter) -> None:
        self.filter = made
        self.entries = 0

    def of(self, records: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        """``records`` as they are (entries only: no filter record), tallied. Address keys
        sort before index keys, so each kind is one stretch of a chunk."""
        keys = list(map(itemgetter(0), records))
        cut = bisect_left(keys, INDEX_TAG)
        addrs = b"".join(keys[:cut])
        if len(addrs) == cut * (1 + 32):
            self.filter.add_rows(addrs, 1 + 32, 1)
        else:  # not all digests: a tool's doing, which verify reports; each key on its own
            for key in keys[:cut]:
                self.filter.add(digest_hash(key[1:]))
        self.entries += cut
        # A prefix whose entries go on from the chunk before is added again: a bit set twice.
        prefixes = dict.fromkeys([key[1:-8] for key in keys[cut:]])
        self.filter.add_rows(b"".join(map(prefix_digest, prefixes)), 16)
        self.entries += sum(
            [1 + (len(value) - ENTRY_HEAD) // _POSTING for _, value in records[cut:]]
        )
        return records


def _after(runs: Sequence[Run], merging: Merging) -> int:
    """The position, in ``runs``, just past the runs the merge under way merges."""
    idents = [run.ident for run in runs]
    return idents.index(merging.sources[-1]) + 1


def _merged(
    sources: list[Iterator[tuple[bytes, bytes]]], chunk: int = _MERGE_CHUNK
) -> Iterator[list[tuple[bytes, bytes]]]:
    """The items of sorted ``sources`` (run tables, each ending with its filter, which is
    left out) in one sorted stream, in sorted chunks, holding at most ``chunk`` items of each.

    Items up to the smallest last key of the sources not yet read to the end are safe to
    give: they are sorted together (in C, as one list of a few sorted runs). A key in two
    sources (an event stored twice by another tool) is given once, with the value that sorts
    first.
    """
    buffers: list[list[tuple[bytes, bytes]]] = []
    more: list[bool] = []

    def fill(i: int) -> None:
        read = list(islice(sources[i], chunk))
        more[i] = len(read) == chunk
        if read and read[-1][0] == FILTER_KEY:
            read.pop()
            more[i] = False
        buffers[i] = read

    for i in range(len(sources)):
        buffers.append([])
        more.append(True)
        fill(i)
    key = itemgetter(0)
    last = b""
    while any(buffers):
        bounds = [b[-1][0] for b, m in zip(buffers, more, strict=True) if b and m]
        bound = min(bounds) if bounds else None
        taken: list[tuple[bytes, bytes]] = []
        for i, buffer in enumerate(buffers):
            if bound is None or (buffer and buffer[-1][0] <= bound):
                taken.extend(buffer)
                buffers[i] = []
            elif buffer:
                cut = bisect_right(buffer, bound, key=key)
                taken.extend(buffer[:cut])
                buffers[i] = buffer[cut:]
        taken.sort()
        keys = list(map(key, taken))
        if keys and (keys[0] == last or any(map(eq, keys, islice(keys, 1, None)))):
            taken = _once(taken, last)
        if taken:
            last = taken[-1][0]
            yield taken
        for i, buffer in enumerate(buffers):
            if not buffer and more[i]:
                fill(i)


def _once(items: list[tuple[bytes, bytes]], last: bytes) -> list[tuple[bytes, bytes]]:
    """Sorted ``items`` with each key but its first, and ``last`` (given before), left out."""
    kept = []
    for item in items:
        if item[0] != last:
            last = item[0]
            kept.append(item)
    return kept
