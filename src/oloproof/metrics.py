"""Metrics derived by replaying case results: counts, values and intervals, never stored truth.

A metric is tallied from the verdict summaries of a run's case_result events (each a copy of a
judgment event's verdict, which ``verify`` checks). Memory grows with the number of distinct
values, not with the number of cases, but for 8 bytes a case answered that count the cases
repeating an earlier one (``RunTally.repeated``).

A pass/fail metric is a proportion (k passes of n observed, Clopper-Pearson). A graded metric
is a mean (betting interval), except that one whose observed values are all exactly 0 or 1 is
reported as a proportion: for binary data the exact binomial interval is the right one.

A case that should have been judged and was not (the case errored or timed out, the judge gave
no verdict, the case never ran) is *missing*. It never leaves the evidence quietly:
``bounded_interval`` counts every missing case as failing for the lower bound and as passing for
the upper bound (``oloproof.stats.bounded_proportion`` / ``bounded_mean_counts``), and that is
the interval rules decide on. A case result without a verdict for a criterion counts as missing
(``no_verdict``) for it.

A missing case of a metric whose values can lie between 0 and 1 (``MetricTally.graded``) could
have had any of them, and its value would also have chosen the method: a value between 0 and
1 makes the metric a mean even when every observed value is 0 or 1. Its bounded interval is
therefore the widest that either method gives with the unknown values at their ends (decision
schema 5; ``any_value``).
"""

from __future__ import annotations

import bisect
import itertools
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from ledger import Event, FormatError, Ledger
from ledger.address import format_address, parse_address
from oloproof.bodies import CaseResultBody
from oloproof.display import an_event
from oloproof.events import CASE_RESULT, RUN_CASE
from oloproof.lazyseq import LazySequence
from oloproof.lineorder import LineOrder
from oloproof.repeats import bounds, errored_repeats
from oloproof.results import Interval, MetricKind
from oloproof.stats import (
    betting_interval_counts,
    bounded_mean_counts,
    bounded_proportion,
    clopper_pearson,
    widest,
)


@dataclass
class MetricTally:
    """The running tally of one criterion over some cases."""

    criterion: str
    kind: MetricKind
    passed: int = 0
    failed: int = 0
    values: Counter[float] = field(default_factory=Counter)
    missing: Counter[str] = field(default_factory=Counter)
    excluded: Counter[str] = field(default_factory=Counter)
    partial: Counter[tuple[float, float, float]] = field(default_factory=Counter)
    """Cases of a repeated run with some repeats missing: (value, lower, upper) counts, the
    value over the observed repeats and the bounds with the missing ones failing or passing
    (``oloproof.repeats.bounds``)."""
    missing_repeats: int = 0
    unconfirmed_repeats: int = 0
    """Of ``missing_repeats``, those of cases whose judged repeats all passed
    (``passes_unconfirmed``)."""
    repeats: int = 1
    """How many times the run executed each case (``--repeats``, from its case results): a
    pass/fail case's value is then a pass rate, 1/K apart from 0 and from 1 at the nearest."""
    any_value: bool = True
    """Whether ``bounded_interval`` lets a missing case of a ``graded`` metric take any value
    from 0 to 1 (today), or only 0 and 1 (decisions of schema 4 and before, which ``verify``
    re-derives so: ``runner.decide_run``)."""

    def add(self, summary: Mapping[str, Any], *, repeats: int = 1) -> None:
        """Count one case's verdict summary; ``repeats``: how many times it was executed."""
        self.repeats = max(self.repeats, repeats)
        status = summary["s"]
        if status == "pass":
            self.passed += 1
        elif status == "fail":
            self.failed += 1
        elif status == "value":
            value = float(summary["v"])
            self.values[value] += 1
            if summary.get("m"):
                self.partial[(value, *bounds(summary))] += 1
                self.missing_repeats += int(summary["m"])
                if value == 1.0:
                    self.unconfirmed_repeats += int(summary["m"])
        elif status == "excluded":
            self.excluded[summary.get("r", "excluded")] += 1
        else:
            self.missing[summary.get("r", "missing")] += 1

    @property
    def observed(self) -> int:
        return self.passed + self.failed + sum(self.values.values())

    @property
    def n_missing(self) -> int:
        return sum(self.missing.values())

    @property
    def n_excluded(self) -> int:
        return sum(self.excluded.values())

    @property
    def is_proportion(self) -> bool:
        # A pass/fail criterion has values only in a repeated run (each a case's pass rate over
        # its repeats); then, as for graded values, only 0s and 1s make a proportion. A case
        # with repeats without a verdict counts here as its judged repeats say (2 passes of 2
        # is 1): what the observed cases alone give. Its missing repeats are counted by
        # ``bounded_interval``, whichever method this chooses.
        return all(v in (0.0, 1.0) for v in self.values)

    @property
    def successes(self) -> int:
        """Passes, counting a graded value of exactly 1 as a pass."""
        return self.passed + self.values.get(1.0, 0)

    @property
    def failures(self) -> int:
        """Observed cases that did not fully pass (value below 1)."""
        return self.observed - self.successes

    @property
    def passes_unconfirmed(self) -> int:
        """Cases counted among ``successes`` that have repeats without a verdict: any of those
        repeats may have failed, so no count of failures can call such a case a pass."""
        return sum(count for (value, _, _), count in self.partial.items() if value == 1.0)

    @property
    def estimate(self) -> float | None:
        n = self.observed
        if n == 0:
            return None
        total = self.passed + sum(v * c for v, c in self.values.items())
        return total / n

    def interval(self, level: float, *, proportion: bool | None = None) -> Interval | None:
        """Clopper-Pearson for a proportion, else the betting interval; ``proportion`` overrides
        what this tally's own values suggest (a slice follows its whole run's metric)."""
        n = self.observed
        if n == 0:
            return None
        if self.is_proportion if proportion is None else proportion:
            return clopper_pearson(self.successes, n, level)
        return betting_interval_counts(self._value_counts(), level)

    @property
    def graded(self) -> bool:
        """Whether a case's value can lie between 0 and 1: a graded metric's, or a pass/fail
        metric's in a repeated run (a case's pass rate over its repeats; a pass/fail tally
        holds values only there). A missing case of such a metric could have had any of them."""
        return self.kind == "mean" or bool(self.values)

    def bounded_interval(
        self, level: float, *, proportion: bool | None = None, not_run: int = 0
    ) -> Interval | None:
        """The interval with every missing case counted against it (see the module docstring).

        ``not_run`` adds cases of the run that never ran (an interrupted run) to the missing
        ones. With nothing missing it equals ``interval``; None when nothing was observed.

        For a ``graded`` metric the lower bound is the lowest that any values of the missing
        cases (and of the missing repeats) give, the upper bound the highest. Each method's
        bounds only rise with each value, but the values also choose the method (all 0 or 1
        is Clopper-Pearson, any other betting), so the extremes of both are joined
        (``stats.widest``): Clopper-Pearson's with the unknown values at 0 or 1 where they
        all can be (``_binary_completion``), and betting's with them at their ends, or as near
        as a value the betting interval reads can be (``_read_as_mean``). Each way the values
        could be chooses its own method there, so ``proportion`` changes nothing. With
        ``any_value`` False, as decisions of schema 4 and before were made: a metric whose
        observed values are all 0 or 1 (or ``proportion``) is Clopper-Pearson with the missing
        cases at 0 and 1 alone.
        """
        n = self.observed
        if n == 0:
            return None
        missing = self.n_missing + not_run
        as_proportion = self.is_proportion if proportion is None else proportion
        if not (self.any_value and self.graded and (missing or self.partial)):
            return self._bounded_at_0_and_1(level, as_proportion, missing)
        low = self._read_as_mean(self._completed(missing, at_top=False), 0.0)
        high = self._read_as_mean(self._completed(missing, at_top=True), 1.0)
        lowers = [betting_interval_counts(low, level)]
        uppers = [betting_interval_counts(high, level)]
        for at_top, bounds_of in ((False, lowers), (True, uppers)):
            binary = self._binary_completion(missing, at_top=at_top)
            if binary is not None:
                bounds_of.append(clopper_pearson(*binary, level))
        return widest(lowers, uppers)

    def _bounded_at_0_and_1(self, level: float, as_proportion: bool, missing: int) -> Interval:
        """Every missing case at 0 for the lower bound and 1 for the upper, read with the
        method the observed values choose: exact for a pass/fail metric without repeats (its
        cases are 0 or 1 whatever they said), and how every decision of schema 4 and before
        was made."""
        if self.partial:
            # Cases with missing repeats: at their lower bounds for the lower end, upper for
            # the upper, read as a mean (as decisions of schema 4 and before read them).
            lower_end = betting_interval_counts(self._completed(missing, at_top=False), level)
            upper_end = betting_interval_counts(self._completed(missing, at_top=True), level)
            return Interval(lower_end.lower, upper_end.upper, level, lower_end.method)
        if as_proportion:
            return bounded_proportion(self.successes, self.observed, missing, level)
        return bounded_mean_counts(self._value_counts(), missing, level)

    def _completed(self, missing: int, *, at_top: bool) -> Counter[float]:
        """The value counts with every unknown value at the bottom of its range (or, ``at_top``,
        the top): each missing case at 0 (1), each case with missing repeats at its value with
        them failing (passing)."""
        counts = self._value_counts()
        for (value, lower, upper), count in self.partial.items():
            counts[value] -= count
            counts[upper if at_top else lower] += count
        counts[1.0 if at_top else 0.0] += missing
        return +counts

    def _read_as_mean(self, counts: Counter[float], end: float) -> Counter[float]:
        """``counts``, with the unknown values at ``end`` (0 or 1), as near as the betting
        interval can read them: values all 0 or 1 are read by Clopper-Pearson, so then one
        unknown value moves off ``end`` by the least a case's value can, 1/K for a pass rate
        over K repeats. A graded value can lie as near as any, so its counts stay: the betting
        bound there is the limit of values that approach 0 (or 1), not one reached."""
        step = 1 / self.repeats if self.kind == "pass_fail" and self.repeats > 1 else 0.0
        if not step or any(value not in (0.0, 1.0) for value in counts):
            return counts
        # Every unknown value is at ``end`` here, and one is. A missing case can be ``step``
        # from it; a case with missing repeats too, unless some of its repeats were excluded
        # (fewer repeats make a coarser step), where the bound is then a little wider.
        moved = Counter(counts)
        moved[end] -= 1
        moved[abs(end - step)] += 1
        return +moved

    def _binary_completion(self, missing: int, *, at_top: bool) -> tuple[int, int] | None:
        """(passes, cases) of the lowest (``at_top``: highest) way the unknown values could all
        be 0 or 1, which the Clopper-Pearson interval would read; None when some value cannot
        be (an observed one between, or a case whose missing repeats leave it between)."""
        counts = self._value_counts()
        for (value, lower, upper), count in self.partial.items():
            counts[value] -= count
            # Its range reaches 0 only when no judged repeat passed, and 1 only when every one
            # did (it has one), so at most one of the two is open to it, at either end.
            if lower == 0.0:
                counts[0.0] += count
            elif upper == 1.0:
                counts[1.0] += count
            else:
                return None
        if any(count > 0 and value not in (0.0, 1.0) for value, count in counts.items()):
            return None
        cases = sum(counts.values()) + missing
        return counts[1.0] + (missing if at_top else 0), cases

    def _value_counts(self) -> Counter[float]:
        counts = Counter(self.values)
        counts[1.0] += self.passed
        counts[0.0] += self.failed
        return counts


_NO_VERDICT: Mapping[str, Any] = {"s": "missing", "r": "no_verdict"}


@dataclass
class RunTally:
    """Every metric of one run, and of each slice value, tallied from case results."""

    criteria: dict[str, MetricKind]
    slices: list[str]
    metrics: dict[str, MetricTally] = field(default_factory=dict)
    slice_tallies: dict[tuple[str, str], dict[str, MetricTally]] = field(default_factory=dict)
    cases: int = 0
    errored: int = 0
    errored_cases: list[tuple[int, str, str]] = field(default_factory=list)
    """(line, case id, execution address) of each errored case, to say why they errored."""
    repeats_errored: int = 0
    """In a repeated run (``oloproof.repeats``): how many of its cases' repeats errored (those
    of a case whose every repeat errored too; the case is also counted in ``errored``)."""
    errored_repeat_cases: list[tuple[int, str, str]] = field(default_factory=list)
    """(line, case id, execution address) of each errored repeat, to say why they errored."""
    judged: array[int] = field(default_factory=lambda: array("Q"))
    """64 bits of the judgment addresses of each case answered and judged (``judged_key``)."""

    def __post_init__(self) -> None:
        for criterion, kind in self.criteria.items():
            self.metrics[criterion] = MetricTally(criterion, kind)

    def add(self, body: Mapping[str, Any]) -> None:
        self.cases += 1
        if body["status"] == "errored":
            self.errored += 1
            self.errored_cases.append(
                (int(body.get("line", 0)), body["case_id"], body["execution"])
            )
        repeats = body.get("repeats")
        if repeats:
            self._add_repeats(body, repeats)
        # A body built by hand for a report (no ledger behind it) may hold no judgments.
        judgments: Mapping[str, str] | None = body.get("judgments")
        if judgments and body["status"] != "errored":
            self.judged.append(judged_key(judgments.values()))
        verdicts: Mapping[str, Any] = body["verdicts"]
        executed = len(repeats) if repeats else 1
        for criterion, tally in self.metrics.items():
            tally.add(verdicts.get(criterion, _NO_VERDICT), repeats=executed)
        for name in self.slices:
            key = (name, slice_value(name, body))
            per_metric = self.slice_tallies.get(key)
            if per_metric is None:
                per_metric = {c: MetricTally(c, k) for c, k in self.criteria.items()}
                self.slice_tallies[key] = per_metric
            for criterion, tally in per_metric.items():
                tally.add(verdicts.get(criterion, _NO_VERDICT), repeats=executed)

    @property
    def repeated(self) -> int:
        """How many cases answered repeat an earlier case's input and the expected values its
        evaluators read: those whose judgments are all an earlier case's (``judged_key``).

        Each such case shares that case's execution and its verdicts, found by identity in the
        run's memory or cache (``oloproof.identities``): the intervals count it once more,
        though it holds nothing the first did not. Counted from the addresses the case results
        already hold, without a second look at the cases, so a run read back from the ledger
        counts what the run counted; a cached run as well as a first one. The keys take 8 bytes
        a case; they are counted at the end, as the cases file's duplicate ids are found."""
        return repeats_among(self.judged)

    def _add_repeats(self, body: Mapping[str, Any], repeats: list[Mapping[str, Any]]) -> None:
        errored = errored_repeats(repeats)
        if errored:
            self.repeats_errored += len(errored)
            line = int(body.get("line", 0))
            self.errored_repeat_cases += [(line, body["case_id"], e) for _, e in errored]


_BUCKET = 1 << 14
"""Keys are counted in sets of about this many at most (about 1 MB each, for a moment)."""


def repeats_among(keys: array[int]) -> int:
    """How many of ``keys`` (``judged_key``s) equal an earlier one.

    Beyond ``_BUCKET`` keys, they are first parted by their leading bits into arrays of about
    ``_BUCKET`` each (equal keys fall in the same one), and each array is counted in a set of
    its own: 8 bytes a key more at most, where one set of them all would take about ten times
    that. Sorting them with numpy instead would cost its import, some 13 MB and a tenth of a
    second, more than the parting takes at a million keys."""
    bits = (len(keys) // _BUCKET).bit_length()
    if not bits:
        return len(keys) - len(set(keys))
    shift = 64 - bits
    parts = [array("Q") for _ in range(1 << bits)]
    appends = [part.append for part in parts]
    for key in keys:
        appends[key >> shift](key)
    del appends
    distinct = 0
    while parts:
        distinct += len(set(parts.pop()))
    return len(keys) - distinct


def pair_key(candidate: Iterable[str], baseline: Iterable[str]) -> int:
    """64 bits standing for a compared pair's judgment addresses, the candidate's and the
    baseline's (``judged_key`` of each): the baseline's are turned by a bit first, so a pair
    whose two runs share their judgments (a candidate that reused the baseline's) does not
    cancel out to the key of every other such pair."""
    base = judged_key(baseline)
    return judged_key(candidate) ^ ((base << 1 | base >> 63) & _KEY_BITS)


_KEY_BITS = (1 << 64) - 1


def judged_key(addresses: Iterable[str]) -> int:
    """64 bits standing for a case's judgment addresses: equal for two cases only when (but for
    a 1 in 2**64 chance) every judgment of one is the other's. A judgment's address covers the
    execution it judged (a ref), its evaluator and the digests of what it read: the same
    output, and the same expected values as far as any evaluator reads them."""
    key = 0
    for address in addresses:
        key ^= int(address.removeprefix("sha256:")[:16], 16)
    return key


def slice_value(name: str, body: Mapping[str, Any]) -> str:
    """The value of slice ``name`` for one case result (``(none)`` when it has none), as text:
    the row it counts in."""
    return slice_text(slice_datum(name, body))


def slice_text(value: Any) -> str:
    """The row a slice's value (``slice_datum``) counts in, as text."""
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def slice_datum(name: str, body: Mapping[str, Any]) -> Any:
    """The value of slice ``name`` for one case result as the case holds it (None when it has
    none), before ``slice_value`` makes text of it."""
    if not name.startswith("metadata."):
        return body.get("labels", {}).get(name)
    value: Any = body["metadata"]
    for part in name.split(".")[1:]:
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def case_results(
    ledger: Ledger, run_id: str, upto: int | None = None
) -> Iterator[tuple[str, CaseResultBody]]:
    """The case_result events of a run, the first per case id, in the dataset's line order;
    of its first ``upto`` case result entries in append order (all, for ``None``).

    A run writes a case once; a second result for it is another writer's (``verify`` names it),
    and every command counts the first, as the run's own tally and decision did.

    A run writes its cases in the order they finish, so they are put in line order here
    (``LineOrder``: sorted a chunk at a time, spilled to a temporary file beyond one chunk) by
    their line and address, then each body is read again as it is handed out.
    """
    unnumbered: dict[str, int] = {}  # written before case results had a line: by case id
    with LineOrder() as order:
        for address, event in itertools.islice(ledger.lookup_events("run_cases", run_id), upto):
            line = _line_of(case_result_body(event))
            if line is None:
                line = unnumbered.setdefault(event.body["case_id"], len(unnumbered)) - (1 << 62)
            order.add(line, parse_address(address))
        previous: int | None = None
        for line, digest in order:
            # A case id is on one line, and the order keeps the first written first.
            if line != previous:
                address = format_address(digest)
                yield address, case_result_body(ledger.get(address))
            previous = line


def result_entries(ledger: Ledger, run_id: str) -> int:
    """How many case result entries ``run_id`` has (a case written twice counts twice)."""
    return sum(1 for _ in ledger.iter_lookup("run_cases", run_id))


class RecordedCases:
    """A run's case results as a reader once read them: of its first ``upto`` case result
    entries in append order (all it has, for ``None``; ``results`` says how many), one at a
    time in line order, or one by case id. A comparison made before its run was resumed
    re-derives, and lists its flips, from what it read."""

    def __init__(self, ledger: Ledger, run_id: str, upto: int | None = None) -> None:
        self._ledger, self._run_id = ledger, run_id
        found = result_entries(ledger, run_id)
        self.results = found if upto is None else min(upto, found)
        # Only when the run has more now: the digests of the entries read, so that a case
        # found by id counts only if it is one of them.
        self._read: _Digests | None = None
        if found > self.results:
            lookup = ledger.iter_lookup("run_cases", run_id)
            self._read = _Digests(parse_address(a) for a in itertools.islice(lookup, self.results))

    def __iter__(self) -> Iterator[CaseResultBody]:
        return (body for _, body in case_results(self._ledger, self._run_id, self.results))

    def get(self, case_id: str) -> CaseResultBody | None:
        # The first result of a case id, as ``case_results`` hands out.
        address = self.address(case_id)
        return None if address is None else case_result_body(self._ledger.get(address))

    def __contains__(self, case_id: str) -> bool:
        return self.address(case_id) is not None

    def address(self, case_id: str) -> str | None:
        """The address of the result ``get`` reads, or None: one index lookup."""
        address = case_result_of(self._ledger, self._run_id, case_id)
        if address is None or self._read is None or parse_address(address) in self._read:
            return address
        return None


class _Digests(LazySequence[bytes]):
    """32-byte digests, sorted and packed end to end (32 bytes each, where a list of bytes
    objects takes about 75), found by bisection."""

    def __init__(self, digests: Iterable[bytes]) -> None:
        self._packed = b"".join(sorted(digests))

    def __len__(self) -> int:
        return len(self._packed) // 32

    def _item(self, i: int) -> bytes:
        return self._packed[32 * i : 32 * i + 32]

    def __contains__(self, digest: object) -> bool:
        if not isinstance(digest, bytes):
            return False
        at = bisect.bisect_left(self, digest)
        return at < len(self) and self._item(at) == digest


def case_result_of(ledger: Ledger, run_id: str, case_id: str) -> str | None:
    """The address of the first case result of ``case_id`` in ``run_id`` (the one every
    command counts), or None: one index lookup."""
    return next(ledger.iter_lookup(RUN_CASE, f"{run_id}/{case_id}"), None)


def stream_case_results(ledger: Ledger, run_id: str) -> Iterator[CaseResultBody]:
    """A run's case result bodies in write order, one per case id, holding none in memory.

    A run writes each case once (a resumed run skips finished cases), so the first body of a
    case id is its only one; a repeat is skipped rather than counted twice.
    """
    seen = SeenCases()
    for _, event in ledger.lookup_events("run_cases", run_id):
        body = case_result_body(event)
        if seen.add(body):
            yield body


class SeenCases:
    """The cases of one run met so far: a bit per line of the dataset (a case id is on one
    line), rather than a set of ids that would grow by about 60 bytes a case. Case results
    written before they had a line are kept by id."""

    def __init__(self) -> None:
        self._lines = bytearray()
        self._ids: set[str] = set()
        self.count = 0

    def __contains__(self, body: CaseResultBody) -> bool:
        line = _line_of(body)
        return body["case_id"] in self._ids if line is None else self._has_line(line)

    def has(self, case_id: str, line: int) -> bool:
        """Whether the case on dataset line ``line`` (or, for a result without a line, with
        ``case_id``) was met."""
        return self._has_line(line) or case_id in self._ids

    def _has_line(self, line: int) -> bool:
        byte, bit = divmod(line, 8)
        return byte < len(self._lines) and bool(self._lines[byte] >> bit & 1)

    def add(self, body: CaseResultBody) -> bool:
        """Count the case of ``body``; whether it was new."""
        if body in self:
            return False
        line = _line_of(body)
        if line is None:
            self._ids.add(body["case_id"])
        else:
            byte, bit = divmod(line, 8)
            if byte >= len(self._lines):
                self._lines.extend(bytes(byte + 1 - len(self._lines)))
            self._lines[byte] |= 1 << bit
        self.count += 1
        return True


def _line_of(body: CaseResultBody) -> int | None:
    """A case result's dataset line, None when it was written without one: before case results
    had one, or as ``0`` (lines count from 1), which the first release wrote for every case of
    a diagnosis's child runs, so that it names no line they share."""
    line = body.get("line")
    return line if isinstance(line, int) and line >= 1 else None


def case_result_body(event: Event) -> CaseResultBody:
    """The body of a case result event, typed (the run_cases index files nothing else)."""
    if event.type != CASE_RESULT:
        raise FormatError(f"a run's case index points at {an_event(event.type)}, not a case result")
    return cast(CaseResultBody, event.body)


def replay(
    bodies: Iterable[Mapping[str, Any]], criteria: dict[str, MetricKind], slices: list[str]
) -> RunTally:
    """Fold case result bodies into a tally (pure)."""
    tally = RunTally(criteria, slices)
    for body in bodies:
        tally.add(body)
    return tally


def tally_run(
    ledger: Ledger, run_id: str, criteria: dict[str, MetricKind], slices: list[str]
) -> RunTally:
    """Re-derive a run's metrics from the ledger alone."""
    return replay(stream_case_results(ledger, run_id), criteria, slices)


def criteria_of(run_body: Mapping[str, Any]) -> dict[str, MetricKind]:
    """The criteria a run's evaluators feed, with their kinds, from the run event."""
    return {e["criterion"]: e["kind"] for e in run_body["evaluators"]}
