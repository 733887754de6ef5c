"""The cache identities of a run, and what a run remembers so each identity is made once.

- An execution's identity: the system's identity (its kind, name, ``version``, settings and code
  fingerprint), any intervention, and the case input's key.
- A judgment's identity: the evaluator's spec and the digests of exactly the parts of the case it
  declares it reads (``oloproof.evaluators.reads``), each as stored (every secret the run keeps
  out replaced, and then beside the case's id: ``ev.kept_apart``). It is looked up among the
  judgments of the execution judged.
- ``RunMemory``: what a run has made so far, so a repeated input shares it.

Where a result comes from is one of ``HIT`` (reused from an earlier run), ``MISS`` (made by this
run) and ``SHARED`` (a repeat within this run taking what an earlier case of it made).
"""

from __future__ import annotations

import asyncio
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from blake3 import blake3

from ledger import CodecError, Ledger, encode, internal_key
from oloproof import events as ev
from oloproof.evaluators.base import CaseView
from oloproof.evaluators.reads import ReadDeclaration
from oloproof.results import Verdict
from oloproof.systems.base import Execution, System, plain_output

HIT, MISS, SHARED = "hit", "miss", "shared"


def system_identity(system: dict[str, Any], intervention: dict[str, Any] | None) -> str:
    """What makes two executions of one input comparable: the system and any intervention."""
    return ev.identity_key({"system": system, "intervention": intervention})


def execution_identity(system_key: str, input_key: str, repeat: int = 0) -> str:
    """The execution cache key: the system identity, the case input's key and, for a repeated
    execution of the same case (a sampled model asked again), its repeat index; repeat 0 is
    the plain key, so the first execution of every case keeps its cache."""
    parts = [system_key, input_key] if repeat == 0 else [system_key, input_key, repeat]
    return ev.identity_key(parts)


def judgment_identity(spec_key: str, reads: bytes) -> str:
    """The judgment cache key: the evaluator's spec and the digests of exactly what it reads
    (``ReadKeys.of``).

    It is looked up among the judgments of the execution judged, so a judgment is reused for
    that execution only.
    """
    return internal_key(spec_key.encode() + b"|" + reads)


class ReadKeys:
    """The digests of the parts of one case that evaluators read, each worked out once."""

    def __init__(self, view: CaseView) -> None:
        self._view = view
        self._digests: dict[str, bytes] = {}
        self._declared: dict[ReadDeclaration, bytes] = {}

    def of(self, declaration: ReadDeclaration) -> bytes:
        """The digests of the parts ``declaration`` reads, in its order, end to end."""
        # Evaluators that read the same parts (hit_rate, recall, ndcg...) share one answer.
        found = self._declared.get(declaration)
        if found is None:
            found = self._declared[declaration] = self._of(declaration)
        return found

    def _of(self, declaration: ReadDeclaration) -> bytes:
        digests = []
        for name, value in declaration.parts(self._view):
            digest = self._digests.get(name) if name is not None else None
            if digest is None:
                # As stored: the identity is stored, and a digest of a secret would let a guess
                # at it be checked (see ``ev.kept_apart``).
                digest = blake3(_encoded(ev.kept_apart(self._view.case_id, value))).digest()
                if name is not None:
                    self._digests[name] = digest
            digests.append(digest)
        return b"".join(digests)


def _encoded(value: Any) -> bytes:
    """A value's bytes as it would be stored (a tuple as a list, a model as its fields)."""
    try:
        return encode(value)
    except CodecError:  # not plain yet (a raw output holding a model, say)
        return encode(plain_output(value))


def cached_judgments(ledger: Ledger, exec_address: str) -> dict[str, tuple[str, Mapping[str, Any]]]:
    """The reusable judgments of an execution, by judgment identity (the latest of each).

    A missing judgment (a judge call that failed) is never reused: it is tried again.
    """
    found: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for address, event in ledger.lookup_events("judgment", exec_address):
        if event.body["status"] != "missing":
            found[event.body["identity"]] = (address, event.body)
        else:
            found.pop(event.body["identity"], None)
    return found


def reuses_executions(system: System) -> bool:
    """Whether the system lets an execution be reused by a later run (an HTTP endpoint whose
    project declared no ``reuse`` does not: Oloproof cannot see the code behind it)."""
    return bool(getattr(system, "reuses_executions", True))


@dataclass
class Made:
    """One execution as a run holds it."""

    address: str
    execution: Execution | None  # None: it errored
    source: str  # HIT (reused from an earlier run) or MISS (executed by this run)
    fresh: bool  # its event is new to the ledger, so every judgment of it is this run's


class RunMemory:
    """What this run has made, so that a repeated input shares it instead of making it again.

    In full while its events wait to be written; once written, only 128 bits of the identity
    of each execution the run made (about 16 bytes a case executed, in a ``KeySet``) and of
    each judgment it made of an execution whose event existed before the run: the rest is read
    back from the ledger.
    """

    def __init__(self) -> None:
        self.executions: dict[str, asyncio.Future[Made]] = {}
        self.judgments: dict[tuple[str, str], tuple[Verdict, str, str]] = {}
        self.executed_fresh = KeySet()
        self.executed_stale = KeySet()
        self.judged_stale = KeySet()

    def finished(self) -> Finished:
        """What the run has finished making so far: once its events are written, ``forget``
        it."""
        done = [(i, f) for i, f in self.executions.items() if f.done()]
        return Finished(done, list(self.judgments))

    def forget(self, written: Finished) -> None:
        """Let go of what ``finished`` listed, now that the ledger holds its events."""
        executions, judgments = self.executions, self.judgments
        for identity, future in written.executions:
            if executions.get(identity) is future:
                del executions[identity]
        for pair in written.judgments:
            judgments.pop(pair, None)


@dataclass(frozen=True, slots=True)
class Finished:
    """``RunMemory.finished``: executions (each with its future) and judgments."""

    executions: list[tuple[str, asyncio.Future[Made]]]
    judgments: list[tuple[str, str]]


class KeySet:
    """A set of 128-bit keys (``bits``) in about 16 bytes a key, where a set of ints takes
    about 90: keys added lately sit in a set, and every ``_FOLD`` of them are folded into two
    arrays of their high and low 64 bits, sorted by the high, which a lookup bisects.

    The lookup bisects with ``bisect`` over a memoryview of the arrays, not with numpy's
    ``searchsorted``: that lets go of the GIL, and in a run, whose systems and writes work on
    other threads, getting it back took 13 us a lookup on average and up to 7 ms (two lookups
    a case, 9% of a 200,000-case run), where bisecting takes about 2 us."""

    _FOLD = 1 << 14

    def __init__(self) -> None:
        self._new: set[int] = set()
        self._high: Any = None  # numpy uint64 arrays, sorted by high
        self._low: Any = None
        # Their views: indexing one gives a Python int, without a copy of the array.
        self._high_view: Sequence[int] = ()
        self._low_view: Sequence[int] = ()
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __contains__(self, key: object) -> bool:
        if key in self._new:
            return True
        high = self._high_view
        if not high or not isinstance(key, int) or not 0 <= key < 1 << 128:
            return False
        top, low, lows = key >> 64, key & _LOW, self._low_view
        at, end = bisect_left(high, top), len(high)
        while at < end and high[at] == top:
            if lows[at] == low:
                return True
            at += 1
        return False

    def add(self, key: int) -> None:
        if key in self:
            return
        self._new.add(key)
        self._count += 1
        if len(self._new) >= self._FOLD:
            self._fold()

    def _fold(self) -> None:
        import numpy as np

        count = len(self._new)
        high = np.fromiter((k >> 64 for k in self._new), dtype=np.uint64, count=count)
        low = np.fromiter((k & _LOW for k in self._new), dtype=np.uint64, count=count)
        order = np.argsort(high)
        high, low = high[order], low[order]
        if self._high is not None:
            # Inserted into the arrays in one copy each, rather than sorting their concatenation
            # (which held the keys three and a half times over at its peak). Only the highs need
            # be in order: a lookup checks the low of every key that shares its high.
            at = np.searchsorted(self._high, high)
            high, low = np.insert(self._high, at, high), np.insert(self._low, at, low)
        self._high, self._low = high, low
        self._high_view, self._low_view = memoryview(self._high), memoryview(self._low)
        self._new = set()


_LOW = (1 << 64) - 1


def bits(*keys: str) -> int:
    """128 bits standing for a key (or a pair of keys: an address and an identity)."""
    value = 0
    for key in keys:
        value ^= int(key.removeprefix("sha256:")[:32], 16)
    return value
