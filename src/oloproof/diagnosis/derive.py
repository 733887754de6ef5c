"""Derive a diagnosis body from the ledger: the selection, the evidence, every label and count.

Requirements this module meets:

1. The selection (the parent's failed cases with gold context, and those excluded for lacking
   it) is read from the parent run's case results, the same for every intervention. So are
   the cases it cannot select for want of an outcome, each excluded and counted: those with no
   verdict on the criterion (why, as the parent recorded it: ``no_verdict``) and the planned
   cases with no result at all (``unfinished``). The diagnosis records how many of the
   parent's results it read (``parent_results``), and is re-derived from those alone: a parent
   resumed later has more, which the diagnosis never saw. A diagnosis recorded before it
   counted them (schema 2) reads both counts and ``parent_results`` as ``None``, and is
   re-derived as it was written: from every result, without the counts.
2. Every field of a diagnosis that is not one of its inputs (the parent run, the criterion,
   the intervention, the child runs, the carried gold-context diagnosis) is computed here from
   events alone: the parent's recorded retrievals and contexts, the child runs' verdicts and
   run_end records, and the carried diagnosis. Recording a diagnosis (``diagnosis.run``) and
   checking one (``diagnosis.audit``) both call ``derive_diagnosis``, so they cannot disagree.
3. A diagnosis whose child runs did not all finish records ``state`` (``stopped`` or
   ``interrupted``) and a ``reason`` naming the child run; a complete one records neither.
4. A replay case is read from the intervention's own execution too: the best relevant position
   in the ranking it made, and the relevant passages it admitted that the budget dropped
   (``budget_dropped``; not for a ranking criterion, which no context can change). A replay's
   summary counts its UNRESOLVED cases by reason (``unresolved``: passed under the control, or
   a role gave no verdict), from schema 4; before, it did not (``None``: not counted).
5. With repeats, a case's outcome per role combines its repeats (``combine``: any pass is a
   pass), and each case counts its passes per role.
6. Nothing per case is held beyond the selection's ids and the digests of their results in
   the parent: each case's events (those results, and its result in each child run, found
   through the ``run_case`` index) are read when the case is derived, the records are
   consumed one at a time, and the summary counts them as they pass.
7. The records are stored in ``oloproof.diagnosis_page`` events of ``PAGE_SIZE`` records, in
   case-id order, which the diagnosis links; a reader reads them one page at a time
   (``diagnosis_cases``), or finds one case by bisecting them (``diagnosis_case``).
8. A gold-context case whose control (in any repeat) retrieved other passages than the parent
   run did is counted (``control_drifted``) and marked so, and its recovery is not given the
   stage the parent's retrieval would name. A replay case whose intervention handed generate
   exactly what its control did (the same generate stage identity, first repeats) was not
   tested: ``context_unchanged``, counted apart, with how many of them passed all the same
   (``context_unchanged_passed``); not for a ranking criterion, which reads no context. Both
   from schema 6 (``CONTEXTS_COMPARED``); each field is there only when it counts a case.
9. Relevance is read in the unit the parent's retrieval metrics read it in
   (``relevance_unit``, recorded), so no position or label can contradict them; retrieval
   metrics in different units are refused. A diagnosis recorded before schema 5 read it by
   document, and is re-derived so.
10. From schema 7 (``GOLD_CHECKED``): a gold-context case whose control was handed its very
    gold passages is not recovered by passing with them (``context_unchanged``); one whose
    parent retrieval holds other text under a gold passage's doc_id and chunk_id gets no stage
    (``gold_text_differs``); and a parent case run with repeats that failed in some and not in
    others is excluded and counted (``failed_in_some_repeats``), never dropped without a word.
    A diagnosis of an earlier schema is re-derived without them, as it was made.
11. From schema 8 (``SHOWN_CONFIRMS``): a replay confirms a carried RANKED_OUT case only when
    it recovered with a relevant passage in its context (within the intervention's cut and not
    dropped by the budget); the RANKED_OUT cases that recovered without one are counted apart
    (``ranked_out_not_shown``, there only when it counts a case). Before, every recovered
    RANKED_OUT case was confirmed, and such a diagnosis is re-derived so.
12. From schema 9 (``FIRST_RAN_READ``): a role's context and ranking are read from its first
    repeat that ran to the end, not from its first repeat whatever became of it: an errored
    first repeat skipped the context checks (a pass in a later repeat then read as a recovery
    under the very context the control had) and left the intervention's position unknown. And
    (``NO_VERDICT_APART``) the RANKED_OUT cases a role of the replay gave no verdict on are
    counted apart (``ranked_out_not_observed``, there only when it counts a case), so that
    "0 of N also recovered" never stands for N cases that errored. Before, neither, and such a
    diagnosis is re-derived so.
13. From schema 10 (``REPEATS_COMPARED``): whether the intervention changed a case's context
    is read from every repeat of each role that ran to the end, not from the first alone. When
    those repeats were handed different contexts (a retriever that does not return the same
    thing twice), the intervention changed the context in some repeats and not in others, so
    the case is UNRESOLVED (``context_varied_between_repeats``), neither recovered nor left
    unchanged. Before, the first repeat that ran to the end decided, and such a diagnosis is
    re-derived so.
14. From schema 11 (``CONTEXT_DRIFT_READ``): a gold-context control that retrieved what the
    parent did but assembled another context from it (a tokenizer reading a file no
    fingerprint covers) drifted as well (``control_drifted``), since the labels read where the
    parent's relevant passage was in its context. Before, only the retrieval was compared, and
    such a diagnosis is re-derived so.
15. From schema 12 (``PARENT_REPEATS_READ``): a parent case's evidence (and a replay's
    retrieval) is read from its first repeat that ran to the end: a first repeat that errored
    recorded no retrieval, which read as "none retrieved" and drifted from every control. And
    a gold-context control is compared with every such repeat, not with the first alone. A
    parent whose repeats retrieved or assembled differently (a retriever that does not return
    the same thing twice) holds its own evidence against the first repeat's positions: one
    repeat may have handed the model the relevant passage and still failed. Before, such a
    case could read RANKED_OUT with a control that happened to retrieve as the first repeat
    did, and is re-derived so.
"""

from __future__ import annotations

import bisect
import itertools
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from ledger import Event, Ledger, address_of
from ledger.address import format_address, parse_address
from oloproof import events as ev
from oloproof.bodies import (
    CaseResultBody,
    ChildRun,
    DiagnosisBody,
    ExecutionBody,
    Map,
    diagnosis_body,
    diagnosis_page_body,
    execution_body,
    not_run,
    run_body,
)
from oloproof.diagnosis.labels import (
    COMPLETE,
    CONTEXT_UNCHANGED,
    CONTROL_NOT_OBSERVED,
    FAILED,
    FAILED_IN_SOME_REPEATS,
    GOLD_CONTEXT,
    INTERVENTION_NOT_OBSERVED,
    INTERVENTION_RECOVERY,
    INTERVENTION_UNSUPPORTED,
    NO_GOLD_CONTEXT,
    NO_STRENGTH,
    NO_VERDICT,
    NOT_OBSERVED,
    PASSED,
    RANKED_OUT,
    RECOVERED,
    STILL_FAILED,
    STOPPED,
    UNRESOLVED,
    Evidence,
    assembled_alike,
    budget_dropped,
    child_labels,
    combine,
    evidence_of,
    failed_repeats,
    given_gold,
    gold_label,
    gold_text_differs,
    implicated,
    is_failure,
    label_counts,
    outcome_of,
    replay_result,
    retrieved_alike,
)
from oloproof.errors import ConfigError
from oloproof.events import plain
from oloproof.lazyseq import LazySequence
from oloproof.metrics import SeenCases, case_result_body, case_result_of
from oloproof.relevance import (
    DOCUMENT,
    RANKING_EVALUATORS,
    described,
    retrieval_units,
    run_unit,
)
from oloproof.store import load_event
from oloproof.stored_runs import (
    StoredRun,
    check_case_index,
    check_run_indexes,
    latest_end,
    load_run,
)

# Fields of a diagnosis body that verify re-derives (the rest are its inputs, and its pages,
# whose records it re-derives one by one).
DERIVED_FIELDS = (
    "run_id",
    "run",
    "parent_results",
    "criterion",
    "intervention",
    "system_kind",
    "top_k",
    "relevance_unit",
    "summary",
    "state",
    "reason",
)


UNRESOLVED_COUNTED: Final = 4
"""The diagnosis schema from which a replay's summary counts its UNRESOLVED cases."""

UNIT_READ: Final = 5
"""The diagnosis schema from which relevance is read in the run's relevance unit; before, by
document whatever the retrieval metrics read (``relevance_unit`` reads ``document``)."""

CONTEXTS_COMPARED: Final = 6
"""The diagnosis schema from which a gold-context control's retrieval is compared with the
parent's, and a replay's generate input with its control's. They came within schema 5, so a
schema-5 diagnosis recorded before them re-derives with them (see docs/diagnosis.md)."""

GOLD_CHECKED: Final = 7
"""The diagnosis schema from which a gold-context recovery is checked against the control's
context (``context_unchanged``) and the parent's retrieval of its gold passages' ids
(``gold_text_differs``), and a parent's cases that failed in some repeats only are excluded
(``failed_in_some_repeats``)."""

SHOWN_CONFIRMS: Final = 8
"""The diagnosis schema from which a replay confirms a RANKED_OUT case only when a relevant
passage reached the model under it."""

FIRST_RAN_READ: Final = 9
"""The diagnosis schema from which a role's context and ranking are read from its first repeat
that ran to the end; before, from its first repeat (none, when that one errored)."""

REPEATS_COMPARED: Final = 10
"""The diagnosis schema from which whether the intervention changed a case's context is read
from every repeat of each role that ran to the end; before, from the first of them alone."""

CONTEXT_DRIFT_READ: Final = 11
"""The diagnosis schema from which a gold-context control that assembled another context than
the parent did, from the same retrieval, drifted too; before, only one that retrieved other
passages did."""

PARENT_REPEATS_READ: Final = 12
"""The diagnosis schema from which a parent case's evidence is read from its first repeat that
ran to the end, and a gold-context control is compared with every such repeat; before, both
read the parent's first repeat alone, even one that errored."""

BUDGET_UNOBSERVED_COUNTED: Final = 13
"""The diagnosis schema from which a replay counts the cases whose context under the
intervention is unknown, no execution of theirs having run to the end
(``budget_not_observed``): the budget count cannot have looked at them."""

REPEATS_UNJUDGED_COUNTED: Final = 14
"""The diagnosis schema from which, with repeats, a case counts the repeats of each role that
gave no verdict (``intervention_unjudged``, ``control_unjudged``), so that a recovery "in k of
K" is not read as K - k failures when some of them errored."""

NO_VERDICT_APART: Final = 9
"""The diagnosis schema from which a replay counts the RANKED_OUT cases that a role gave no
verdict on (``ranked_out_not_observed``)."""


class PackedIds(LazySequence[str]):
    """Case ids, packed end to end in one bytes object with where each starts: about 8 bytes
    an id beside its text, where a list of str objects takes about 60 (a diagnosis of 100,000
    cases keeps 33,000 of them while its child runs go on). Sorted ids stay sorted, so
    ``bisect`` searches them."""

    def __init__(self, ids: Iterable[str]) -> None:
        text = bytearray()
        starts = array("Q", [0])
        for case_id in ids:
            # surrogatepass: any str an id can be comes back exactly as it went in.
            text += case_id.encode("utf-8", "surrogatepass")
            starts.append(len(text))
        self._text = bytes(text)
        self._starts = starts

    def __len__(self) -> int:
        return len(self._starts) - 1

    def _item(self, i: int) -> str:
        return self._text[self._starts[i] : self._starts[i + 1]].decode("utf-8", "surrogatepass")


@dataclass(frozen=True)
class Unjudged:
    """The parent's cases whose outcome on the criterion is unknown: those with no verdict, by
    id in order with why each has none, and how many planned cases have no result."""

    ids: Sequence[str]
    why: Sequence[str]  # the missing verdict's reason, in the order of ``ids``
    unfinished: int

    def summary(self) -> Map:
        return {
            "no_verdict": dict(sorted(Counter(self.why).items())),
            "unfinished": self.unfinished,
        }


NOT_COUNTED: Final[Map] = {"no_verdict": None, "unfinished": None}
"""The summary's counts of unjudged cases in a diagnosis recorded before it counted them."""


@dataclass(frozen=True)
class Unstable:
    """The parent's cases run with repeats that failed the criterion in some of them and not in
    the others, by id in order, with how many of how many repeats failed."""

    ids: Sequence[str]
    failed: Sequence[int]  # in the order of ``ids``
    repeats: Sequence[int]


@dataclass(frozen=True)
class Selection:
    """The parent's failed cases: the selected ones and the excluded ones, by id in order, and
    the digest of each selected case's result (32 bytes a case; bodies are read when needed);
    its cases of unknown outcome (``None``: not counted, as before schema 3); and those that
    failed in some repeats only (``None``: not looked for, as before schema 7)."""

    run_id: str
    selected: Sequence[str]
    excluded: Sequence[str]
    digests: bytes  # the selected cases' result digests, in the order of ``selected``
    unjudged: Unjudged | None
    read: int  # the parent's case result entries read, in append order
    unstable: Unstable | None = None

    def result(self, ledger: Ledger, case_id: str) -> CaseResultBody:
        """The parent's case result body of a selected case."""
        at = bisect.bisect_left(self.selected, case_id)
        if at == len(self.selected) or self.selected[at] != case_id:
            raise KeyError(case_id)
        return self.result_at(ledger, at)

    def result_at(self, ledger: Ledger, at: int) -> CaseResultBody:
        """The parent's case result body of the selected case at position ``at``."""
        digest = self.digests[32 * at : 32 * (at + 1)]
        return case_result_body(ledger.get(format_address(digest)))

    def excluded_records(self) -> Iterator[Map]:
        """The record of each excluded case, as its diagnosis stores it: the failed cases
        without gold context, those that failed in some repeats only, then those without a
        verdict."""
        for case_id in self.excluded:
            yield {"case_id": case_id, "reason": NO_GOLD_CONTEXT}
        if self.unstable is not None:
            shaky = self.unstable
            for case_id, failed, repeats in zip(
                shaky.ids, shaky.failed, shaky.repeats, strict=True
            ):
                yield {
                    "case_id": case_id,
                    "reason": FAILED_IN_SOME_REPEATS,
                    "failed": failed,
                    "repeats": repeats,
                }
        if self.unjudged is not None:
            for case_id, why in zip(self.unjudged.ids, self.unjudged.why, strict=True):
                yield {"case_id": case_id, "reason": NO_VERDICT, "why": why}


def first_result(ledger: Ledger, run_id: str, case_id: str) -> CaseResultBody | None:
    """The case result of ``case_id`` in ``run_id`` that every command counts, or None."""
    address = case_result_of(ledger, run_id, case_id)
    return None if address is None else case_result_body(ledger.get(address))


def select_cases(
    ledger: Ledger,
    parent: StoredRun,
    criterion: str,
    *,
    unjudged: bool = True,
    upto: int | None = None,
    unstable: bool = True,
) -> Selection:
    """Failed cases on ``criterion`` with gold context, and those excluded for lacking it;
    with ``unjudged``, the cases of unknown outcome too (``Unjudged``); with ``unstable``, the
    cases that failed in some repeats and not in others (``Unstable``). Of the parent's case
    result entries, the first ``upto`` are read (all, for ``None``).

    The parent's case results are streamed; only the failed and unjudged ones' ids (and the
    failed ones' result digests) are kept (the first result of a case id decides, as
    everywhere else).
    """
    # A failed case's value: twice the place of its result's digest in ``digests``, plus one
    # with gold context (an int, not a tuple: this dict is as long as the failures).
    failed: dict[str, int] = {}
    missing: dict[str, str] = {}  # case id -> why it has no verdict
    shaky: dict[str, tuple[int, int]] = {}  # case id -> (repeats failed, repeats)
    found = bytearray()
    seen = SeenCases()
    read = 0
    for address, event in itertools.islice(ledger.lookup_events("run_cases", parent.run_id), upto):
        read += 1
        body = case_result_body(event)
        if not seen.add(body):
            continue
        verdict = body["verdicts"].get(criterion)
        if is_failure(verdict):
            gold = bool(body["expected"].get("gold_context"))
            failed[body["case_id"]] = 2 * (len(found) // 32) + gold
            found += parse_address(address)
        elif verdict is None:
            missing[body["case_id"]] = NO_VERDICT
        elif verdict["s"] == "missing":
            missing[body["case_id"]] = verdict.get("r") or NO_VERDICT
        elif unstable and (failed_in := failed_repeats(verdict, body.get("repeats"), criterion)):
            shaky[body["case_id"]] = (failed_in, len(body.get("repeats") or ()))
    selected = sorted(case_id for case_id, value in failed.items() if value & 1)
    excluded = PackedIds(sorted(case_id for case_id, value in failed.items() if not value & 1))
    at = (32 * (failed[case_id] >> 1) for case_id in selected)
    digests = b"".join(found[i : i + 32] for i in at)
    unknown = None
    if unjudged:
        ids = sorted(missing)
        unfinished = not_run(parent.body, seen.count)
        unknown = Unjudged(PackedIds(ids), PackedIds(missing[i] for i in ids), unfinished)
    partly = None
    if unstable:
        order = sorted(shaky)
        partly = Unstable(
            PackedIds(order),
            array("I", (shaky[i][0] for i in order)),
            array("I", (shaky[i][1] for i in order)),
        )
    return Selection(parent.run_id, PackedIds(selected), excluded, digests, unknown, read, partly)


def artifact(execution: ExecutionBody, kind: str) -> Map | None:
    """The last artifact of ``kind`` an execution recorded, or None."""
    items = execution.get("artifacts", {}).get(kind) or [None]
    found: Map | None = items[-1]
    return found


@dataclass(frozen=True)
class _Parent:
    """What derivation reads of one selected case in the parent run."""

    expected: Mapping[str, Any]
    retrieval: Mapping[str, Any] | None
    context: Mapping[str, Any] | None
    evidence: Evidence
    # The execution of each later repeat that ran to the end (none for a case run once).
    later: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Inputs:
    """A diagnosis's inputs, as derivation reads them."""

    ledger: Ledger
    criterion: str
    intervention: Mapping[str, Any]
    top_k: int
    repeats: int
    selection: Selection
    # Whether the criterion scores the ranking alone: then what the budget did cannot matter.
    ranking_only: bool
    unit: str  # the relevance unit (oloproof.relevance)
    # Whether the child runs' contexts and retrievals are compared (CONTEXTS_COMPARED).
    compares: bool
    # Whether a gold recovery is checked against the control's context and the parent's
    # retrieval of the gold passages' ids (GOLD_CHECKED).
    checks_gold: bool = False
    # Whether a confirmation needs a relevant passage in the intervention's context
    # (SHOWN_CONFIRMS).
    checks_shown: bool = False
    # Whether a role's context is read from its first repeat that ran to the end
    # (FIRST_RAN_READ), and the RANKED_OUT cases without a verdict counted (NO_VERDICT_APART).
    reads_first_ran: bool = False
    counts_no_verdict: bool = False
    # Whether every repeat that ran to the end is read for it (REPEATS_COMPARED).
    compares_repeats: bool = False
    # Whether a control's context is compared with the parent's too (CONTEXT_DRIFT_READ).
    compares_context: bool = False
    # Whether a control is compared with every repeat of the parent (PARENT_REPEATS_READ).
    compares_parent_repeats: bool = False
    # Whether the cases the budget count could not read are counted (BUDGET_UNOBSERVED_COUNTED).
    counts_budget_unobserved: bool = False
    # Whether the repeats without a verdict are counted per role (REPEATS_UNJUDGED_COUNTED).
    counts_unjudged_repeats: bool = False


class Derivation:
    """A diagnosis being derived: its fields, then its case records one at a time, then its
    summary, which counts the records as they pass (so none of them is held).

    Consume ``records`` once, in full, before ``body``.
    """

    def __init__(
        self, fields: Map, selection: Selection, records: Iterator[Map], tally: _Tally
    ) -> None:
        self.fields = fields
        self.selection = selection
        self.records = records
        self._tally = tally

    def body(self, case_pages: list[str], excluded_pages: list[str]) -> DiagnosisBody:
        """The diagnosis body, its records stored in ``case_pages`` and ``excluded_pages``."""
        unjudged = self.selection.unjudged
        summary = {
            "selected": len(self.selection.selected),
            "excluded": len(self.selection.excluded),
            **(NOT_COUNTED if unjudged is None else unjudged.summary()),
            **self._tally.summary(),
        }
        unstable = self.selection.unstable
        if unstable is not None and len(unstable.ids):  # there only when it counts a case
            summary[FAILED_IN_SOME_REPEATS] = len(unstable.ids)
        body = {**self.fields, "case_pages": case_pages, "excluded_pages": excluded_pages}
        body["summary"] = summary
        return cast(DiagnosisBody, body)


def derive_diagnosis(
    ledger: Ledger,
    parent: StoredRun,
    *,
    criterion: str,
    intervention: Mapping[str, Any],
    child_runs: Sequence[ChildRun],
    carried_from: str | None,
    repeats: int = 1,
    selection: Selection | None = None,
    schema: int = ev.SCHEMAS[ev.DIAGNOSIS],
    parent_results: int | None = None,
) -> Derivation:
    """Every label and count of a diagnosis, from the parent, child runs and carried labels.

    ``selection`` is the one the child runs executed, when the caller made it; else it is
    selected here, from the parent's first ``parent_results`` case results (all, for
    ``None``), as a diagnosis of ``schema`` was (before 3: without the cases of unknown
    outcome, and not pinned to the results read). Cases are read one at a time from the ledger
    as ``records`` is consumed, once ``check_indexes`` has found the runs' indexes agreeing.
    """
    check_indexes(ledger, None if selection is not None else parent, child_runs)
    pinned = schema >= 3
    system = parent.body["system"]
    staged = system.get("kind") == "rag"
    top_k: int | None = system.get("top_k") if staged else None
    if selection is None:
        selection = select_cases(
            ledger,
            parent,
            criterion,
            unjudged=pinned,
            upto=parent_results,
            unstable=schema >= GOLD_CHECKED,
        )
    ranking_only = evaluator_type(parent.body, criterion) in RANKING_EVALUATORS
    unit = relevance_unit(parent, criterion) if schema >= UNIT_READ else DOCUMENT
    inputs = _Inputs(
        ledger,
        criterion,
        intervention,
        top_k or 0,
        repeats,
        selection,
        ranking_only,
        unit,
        schema >= CONTEXTS_COMPARED,
        schema >= GOLD_CHECKED,
        schema >= SHOWN_CONFIRMS,
        schema >= FIRST_RAN_READ,
        schema >= NO_VERDICT_APART,
        schema >= REPEATS_COMPARED,
        schema >= CONTEXT_DRIFT_READ,
        schema >= PARENT_REPEATS_READ,
        schema >= BUDGET_UNOBSERVED_COUNTED,
        schema >= REPEATS_UNJUDGED_COUNTED,
    )
    tally: _Tally
    if not staged:
        tally = _Tally(_unsupported_summary)
        records = _unsupported(inputs)
    elif intervention["kind"] == GOLD_CONTEXT:
        tally = _Tally(lambda cases: _gold_summary(inputs, cases))
        records = _gold(inputs, child_runs)
    else:
        carried = _Carried(ledger, carried_from)
        counted = schema >= UNRESOLVED_COUNTED
        tally = _Tally(lambda cases: _replay_summary(inputs, cases, carried.present, counted))
        records = _replay(inputs, child_runs, carried)
    fields: Map = {
        "run_id": parent.run_id,
        "run": parent.address,
        "parent_results": selection.read if pinned else None,
        "criterion": criterion,
        "intervention": dict(intervention),
        "repeats": repeats,
        "system_kind": system.get("kind"),
        "top_k": top_k,
        "relevance_unit": unit,
        "child_runs": [c.copy() for c in child_runs],
        "carried_from": carried_from,
    }
    expected = child_labels(intervention, repeats) if staged and selection.selected else []
    state, reason = _state(ledger, [label for label, _ in expected], child_runs)
    if state != COMPLETE:
        fields["state"] = state
        fields["reason"] = reason
    return Derivation(fields, selection, map(tally.add, records), tally)


def check_indexes(ledger: Ledger, parent: StoredRun | None, child_runs: Sequence[ChildRun]) -> None:
    """Refuse (``LedgerAccessError``, naming ``oloproof ledger rebuild-indexes``) to derive a
    diagnosis from runs whose indexes disagree with their events: a case they miss would
    change its labels and counts. The parent's cases are read through its list of cases (not
    checked for ``None``: the caller selected them from a run it checked), each child run's by
    their ids (``_Outcomes``)."""
    if parent is not None:
        check_run_indexes(ledger, parent)
    for child in child_runs:
        check_case_index(ledger, load_run(ledger, child["address"]))


def evaluator_type(run: Mapping[str, Any], criterion: str) -> str | None:
    """The type of the evaluator the run body ``run`` scores ``criterion`` with (None when it
    records none)."""
    spec = next((e.get("spec") for e in run["evaluators"] if e["criterion"] == criterion), None)
    kind: str | None = (spec or {}).get("type")
    return kind


def relevance_unit(parent: StoredRun, criterion: str) -> str:
    """The unit a diagnosis of ``parent`` on ``criterion`` reads relevance in: the parent's
    retrieval metrics' (``oloproof.relevance.run_unit``). Raise ``ConfigError`` when they
    disagree, as no position or label could then agree with all of them."""
    units = retrieval_units(parent.body["evaluators"])
    unit = run_unit(units, criterion)
    if unit is None:
        raise ConfigError(
            f"the retrieval metrics of run {parent.run_id} read relevance in different units "
            f"({described(units)}), so whether a relevant passage reached the model on "
            f"{criterion} has no one answer; give them one relevance_unit and run it again"
        )
    return unit


class _Tally:
    """The case records counted by what the summary reads of them: a few dozen kinds of case
    however many cases, so the summary is computed without holding the records."""

    _READ = (
        "label",
        "reason",
        "strength",
        "control",
        "intervention",
        "result",
        "intervention_passes",
        "intervention_unjudged",
        "control_drifted",
        "intervention_position",
    )

    def __init__(self, summarise: Callable[[Iterable[Map]], Map]) -> None:
        self._kinds: Counter[tuple[Any, ...]] = Counter()
        self._summarise = summarise

    def add(self, record: Map) -> Map:
        self._kinds[
            (
                *(record.get(name) for name in self._READ),
                tuple(record.get("drop_reasons", ())),
                (record.get("gold") or {}).get("label"),
                bool(record.get("budget_dropped")),
            )
        ] += 1
        return record

    def summary(self) -> Map:
        return self._summarise(_Counted(self._kinds))


class _Counted(Iterable[Map]):
    """Each counted case, as the summary reads it; iterable again and again."""

    def __init__(self, kinds: Counter[tuple[Any, ...]]) -> None:
        self._kinds = kinds

    def __iter__(self) -> Iterator[Map]:
        for key, count in self._kinds.items():
            *values, drops, gold_label, dropped = key
            case = dict(zip(_Tally._READ, values, strict=True))
            case.update(drop_reasons=list(drops), gold_label=gold_label, budget_dropped=dropped)
            for _ in range(count):
                yield case


def ran_to_the_end(result: CaseResultBody) -> list[str]:
    """The executions of a parent case's repeats that ran to the end, in order: its one
    execution for a case run once. A repeat that errored (its retriever timed out) recorded no
    retrieval to read or replay; a selected case failed in at least one that did not."""
    repeats = result.get("repeats") or ()
    ran = [r["execution"] for r in repeats if r["status"] == "ok"]
    return ran or [result["execution"]]


def _parent_case(inputs: _Inputs, case_id: str) -> _Parent:
    result = inputs.selection.result(inputs.ledger, case_id)
    read = ran_to_the_end(result) if inputs.compares_parent_repeats else [result["execution"]]
    execution = execution_body(inputs.ledger.get(read[0]))
    retrieval, context = artifact(execution, "retrieval/v1"), artifact(execution, "context/v1")
    evidence = evidence_of(retrieval, context, result["expected"], inputs.top_k, inputs.unit)
    return _Parent(result["expected"], retrieval, context, evidence, tuple(read[1:]))


def _state(
    ledger: Ledger, expected: Sequence[str], child_runs: Sequence[ChildRun]
) -> tuple[str, str | None]:
    """``complete``, or the state of the first child run that did not finish, and why."""
    for child in child_runs:
        end = latest_end(ledger, child["run_id"])
        state = end["state"] if end is not None else STOPPED
        if state != COMPLETE:
            why = (end.get("reason") if end else None) or "it recorded no end"
            return state, f"the {child['label']} run {child['run_id']} {state}: {why}"
    recorded = {child["label"] for child in child_runs}
    for label in expected:
        if label not in recorded:
            return STOPPED, f"the {label} run was never started"
    return COMPLETE, None


def _unsupported(inputs: _Inputs) -> Iterator[Map]:
    for case_id in inputs.selection.selected:
        yield {
            "case_id": case_id,
            "position": _parent_case(inputs, case_id).evidence.position,
            "label": UNRESOLVED,
            "reason": INTERVENTION_UNSUPPORTED,
            "strength": NO_STRENGTH,
        }


def _unsupported_summary(cases: Iterable[Map]) -> Map:
    return {"control_passed": None, "recovered": None, "labels": label_counts(cases)}


@dataclass(frozen=True)
class _Observed:
    """A case's outcomes under every repeat of one role, each repeat's execution (None for a
    repeat without a result), and the execution its context is read from (None: none ran to
    the end)."""

    outcomes: list[str]
    executions: list[str | None]
    execution: str | None
    # The executions whose contexts are compared: every repeat's that ran to the end (before
    # REPEATS_COMPARED, ``execution`` alone).
    compared: tuple[str, ...]

    @property
    def outcome(self) -> str:
        return combine(self.outcomes)

    @property
    def passes(self) -> int:
        return self.outcomes.count(PASSED)

    @property
    def unjudged(self) -> int:
        """The repeats without a verdict: errored, excluded, or never run."""
        return self.outcomes.count(NOT_OBSERVED)


class _Outcomes:
    """Each child run's verdict on the criterion for a case, read from its index when asked."""

    def __init__(self, inputs: _Inputs, child_runs: Sequence[ChildRun]) -> None:
        self._inputs = inputs
        self._runs: dict[str, list[str]] = {"intervention": [], "control": []}
        for child in child_runs:
            self._runs[child["role"]].append(child["run_id"])

    def of(self, role: str, case_id: str) -> _Observed:
        """A case's outcome in each repeat of ``role``; a repeat never run counts as missing."""
        seen = [self._seen(run_id, case_id) for run_id in self._runs[role]]
        outcomes = [s[0] if s else NOT_OBSERVED for s in seen]
        outcomes += [NOT_OBSERVED] * (self._inputs.repeats - len(outcomes))
        # The first repeat that ran to the end: an errored one recorded no context to compare
        # (before FIRST_RAN_READ, only the first repeat was looked at).
        read = seen if self._inputs.reads_first_ran else seen[:1]
        completed = tuple(s[1] for s in read if s is not None and s[2])
        ran = completed[0] if completed else None
        compared = completed if self._inputs.compares_repeats else completed[:1]
        return _Observed(outcomes, [s[1] if s else None for s in seen], ran, compared)

    def _seen(self, run_id: str, case_id: str) -> tuple[str, str, bool] | None:
        """A case's outcome in ``run_id``, its execution, and whether that ran to the end."""
        body = first_result(self._inputs.ledger, run_id, case_id)
        if body is None:
            return None
        outcome = outcome_of(body["verdicts"].get(self._inputs.criterion))
        return outcome, body["execution"], body["status"] == "ok"


def _repeat_counts(
    record: dict[str, Any], inputs: _Inputs, control: _Observed, treated: _Observed
) -> None:
    if inputs.repeats > 1:
        record["control_passes"] = control.passes
        record["intervention_passes"] = treated.passes
        if inputs.counts_unjudged_repeats:  # each only when it counts a repeat
            for role, observed in (("control", control), ("intervention", treated)):
                if observed.unjudged:
                    record[f"{role}_unjudged"] = observed.unjudged


def _recovered_in(cases: Iterable[Map]) -> list[dict[str, int]]:
    """How many recovered cases passed in each number of intervention repeats (and had no
    verdict in how many, where any), most passes first."""
    counts = Counter(
        (c["intervention_passes"], c.get("intervention_unjudged") or 0)
        for c in cases
        if c["strength"] == INTERVENTION_RECOVERY
    )
    return [
        {"passes": passes, "cases": counts[passes, unjudged]}
        | ({"unjudged": unjudged} if unjudged else {})
        for passes, unjudged in sorted(counts, key=lambda k: (-k[0], k[1]))
    ]


def _gold(inputs: _Inputs, child_runs: Sequence[ChildRun]) -> Iterator[Map]:
    observed = _Outcomes(inputs, child_runs)
    for case_id in inputs.selection.selected:
        parent = _parent_case(inputs, case_id)
        found = parent.evidence
        control, treated = observed.of("control", case_id), observed.of("intervention", case_id)
        drifted = inputs.compares and _drifted(inputs, parent, control)
        # Only a pass under gold beside a fail under the control is a recovery to check.
        checked = inputs.checks_gold and (control.outcome, treated.outcome) == (FAILED, PASSED)
        unchanged, varied = _sameness(_given_gold(inputs, parent, control) if checked else set())
        label = gold_label(
            evidence=found,
            top_k=inputs.top_k,
            control=control.outcome,
            intervention=treated.outcome,
            drifted=drifted,
            unchanged=unchanged,
            varied=varied,
            differs=checked and gold_text_differs(parent.retrieval, parent.expected),
        )
        record: dict[str, Any] = {
            "case_id": case_id,
            "position": found.position,
            "in_context": found.in_context,
            "drop_reasons": list(found.drop_reasons),
            "control": control.outcome,
            "intervention": treated.outcome,
            "label": label.label,
            "reason": label.reason,
            "strength": label.strength,
        }
        if drifted:  # only then: a diagnosis without drift reads as one made before the check
            record["control_drifted"] = True
        _repeat_counts(record, inputs, control, treated)
        yield record


def _given_gold(inputs: _Inputs, parent: _Parent, control: _Observed) -> set[bool]:
    """Whether the control handed the model the case's very gold passages, in each of its
    compared repeats (as a replay reads its roles' contexts from those repeats): one answer
    when they agree, both when they were handed different contexts."""
    bodies = (_executed(inputs, address) for address in control.compared)
    return {
        given_gold(artifact(body, "context/v1"), parent.expected)
        for body in bodies
        if body is not None
    }


def _sameness(found: set[bool]) -> tuple[bool, bool]:
    """(unchanged, varied) from whether the intervention left a case's context as the control
    had it, in each of the repeats compared: unchanged when in all of them, varied when in some
    and not in others."""
    return found == {True}, len(found) > 1


def _drifted(inputs: _Inputs, parent: _Parent, control: _Observed) -> bool:
    """Whether any repeat of the control retrieved other passages than the parent run did (in
    any of its repeats that ran to the end), or assembled another context from them: the
    system re-executed is then not the one whose retrieval and context the labels read."""
    recorded = [(parent.retrieval, parent.context)]
    if inputs.compares_parent_repeats:
        bodies = (_executed(inputs, address) for address in parent.later)
        recorded += [(artifact(b, "retrieval/v1"), artifact(b, "context/v1")) for b in bodies if b]
    for address in control.executions:
        body = _executed(inputs, address)
        if body is None:
            continue
        for retrieval, context in recorded:
            if not retrieved_alike(retrieval, artifact(body, "retrieval/v1")):
                return True
            if inputs.compares_context and not assembled_alike(
                context, artifact(body, "context/v1")
            ):
                return True
    return False


def _executed(inputs: _Inputs, address: str | None) -> ExecutionBody | None:
    """The execution at ``address`` when it ran to the end (else None: it recorded no
    context or retrieval to read)."""
    body = execution_body(inputs.ledger.get(address)) if address is not None else None
    return body if body is not None and body.get("status") == "ok" else None


def _gold_summary(inputs: _Inputs, cases: Iterable[Map]) -> Map:
    summary: dict[str, Any] = {
        "control_passed": sum(c["control"] == PASSED for c in cases),
        "recovered": sum(c["strength"] == INTERVENTION_RECOVERY for c in cases),
        "labels": label_counts(cases),
        "implicated": implicated(cases),
    }
    drifted = sum(bool(c["control_drifted"]) for c in cases)
    if drifted:
        summary["control_drifted"] = drifted
    if inputs.repeats > 1:
        summary["recovered_in"] = _recovered_in(cases)
    return summary


def _replay(inputs: _Inputs, child_runs: Sequence[ChildRun], carried: _Carried) -> Iterator[Map]:
    observed = _Outcomes(inputs, child_runs)
    for case_id in inputs.selection.selected:
        parent = _parent_case(inputs, case_id)
        control, treated = observed.of("control", case_id), observed.of("intervention", case_id)
        executed = _executed(inputs, treated.execution)
        unchanged, varied = _sameness(_unchanged(inputs, treated, control))
        result, strength = replay_result(
            control=control.outcome,
            intervention=treated.outcome,
            unchanged=unchanged,
            varied=varied,
        )
        gold = carried.get(case_id)
        record: dict[str, Any] = {
            "case_id": case_id,
            "position": parent.evidence.position,
            "control": control.outcome,
            "intervention": treated.outcome,
            "result": result,
            "strength": strength,
            "gold": None if gold is None else {k: gold[k] for k in ("label", "reason", "strength")},
            **_as_replayed(inputs, parent, executed),
        }
        _repeat_counts(record, inputs, control, treated)
        yield record


def _replay_summary(inputs: _Inputs, cases: Iterable[Map], carried: bool, counted: bool) -> Map:
    def ranked_out() -> Iterator[Map]:
        return (c for c in cases if c["gold_label"] == RANKED_OUT)

    cut = int(inputs.intervention.get("top_k", inputs.top_k))

    def confirms(case: Map) -> bool:
        return case["result"] == RECOVERED and (not inputs.checks_shown or _shown(case, cut))

    summary: dict[str, Any] = {
        "control_passed": sum(c["control"] == PASSED for c in cases),
        "recovered": sum(c["result"] == RECOVERED for c in cases),
        "ranked_out": None if not carried else sum(1 for _ in ranked_out()),
        "confirmed": None if not carried else sum(confirms(c) for c in ranked_out()),
        "budget_dropped": None if inputs.ranking_only else sum(c["budget_dropped"] for c in cases),
        "ranked_out_budget_dropped": None
        if not carried or inputs.ranking_only
        else sum(c["budget_dropped"] for c in ranked_out()),
    }
    # The budget count reads the context a case's intervention assembled, which the ledger
    # holds only for an execution that ran to the end: the cases with none are counted, so
    # that count is never read as covering every case.
    budget_unobserved = sum(c["intervention_position"] == NOT_OBSERVED for c in cases)
    if inputs.counts_budget_unobserved and not inputs.ranking_only and budget_unobserved:
        summary["budget_not_observed"] = budget_unobserved  # only when it counts a case
    if counted:
        # A case the control passed, or a role gave no verdict on, neither recovered nor failed
        # to: counted apart, so "0 of N recovered" cannot stand for "nothing ran". One the
        # intervention left unchanged is counted below, on its own.
        summary["unresolved"] = label_counts(
            {"label": UNRESOLVED, "reason": c["result"]}
            for c in cases
            if c["result"] not in (RECOVERED, STILL_FAILED, CONTEXT_UNCHANGED)
        )
    # A case whose intervention position is unknown (no repeat of it ran to the end, or before
    # FIRST_RAN_READ its first did not) is neither confirmed nor said to have recovered
    # without a relevant passage.
    not_shown = sum(
        c["result"] == RECOVERED and c["intervention_position"] != NOT_OBSERVED and not confirms(c)
        for c in ranked_out()
    )
    if carried and not_shown:  # there only when it counts a case, as ``context_unchanged``
        summary["ranked_out_not_shown"] = not_shown
    # A RANKED_OUT case a role gave no verdict on could neither confirm its label nor fail to:
    # counted apart, as the Control line counts the cases the control gave none on.
    unobserved = sum(
        c["result"] in (CONTROL_NOT_OBSERVED, INTERVENTION_NOT_OBSERVED) for c in ranked_out()
    )
    if carried and inputs.counts_no_verdict and unobserved:  # only when it counts a case
        summary["ranked_out_not_observed"] = unobserved
    unchanged = sum(c["result"] == CONTEXT_UNCHANGED for c in cases)
    if unchanged:
        # Apart from ``unresolved``, and only when there are some, as ``control_drifted``. The
        # line about them is printed only when one of them passed, where it would otherwise
        # have read as a recovery.
        summary["context_unchanged"] = unchanged
        summary["context_unchanged_passed"] = sum(
            c["result"] == CONTEXT_UNCHANGED and c["intervention"] == PASSED for c in cases
        )
    if inputs.repeats > 1:
        summary["recovered_in"] = _recovered_in(cases)
    return summary


def _shown(case: Map, cut: int) -> bool:
    """Whether a relevant passage reached the model under the intervention: its best one lies
    within the intervention's cut of its own ranking, and the budget did not drop every one
    it admitted. A RANKED_OUT case has none within the run's cut, so every relevant passage
    within the intervention's is one it admitted (``budget_dropped``)."""
    position = case["intervention_position"]
    return position.isdigit() and int(position) <= cut and not case["budget_dropped"]


def _unchanged(inputs: _Inputs, treated: _Observed, control: _Observed) -> set[bool]:
    """Whether the intervention called generate exactly as the control did, for each pair of
    their compared repeats: the same generate stage identity (the input, the passages kept
    with their positions and tokens, the code, and what else of the context generate reads).
    Empty for a ranking criterion, which reads the ranking, never generate."""
    if not inputs.compares or inputs.ranking_only:
        return set()
    mine, theirs = (
        [_generate_identity(_executed(inputs, address)) for address in role.compared]
        for role in (treated, control)
    )
    return {m is not None and m == t for m in mine for t in theirs}


def _generate_identity(execution: ExecutionBody | None) -> str | None:
    if execution is None:
        return None
    return next(
        (s["identity"] for s in execution.get("stages", []) if s["stage"] == "generate"), None
    )


def _as_replayed(inputs: _Inputs, parent: _Parent, body: ExecutionBody | None) -> dict[str, Any]:
    """What the intervention made of a case (its first repeat's execution that ran to the end,
    None when none did): its ranking's best relevant position and the positions of the relevant
    passages it admitted that the budget dropped."""
    if body is None:
        return {"intervention_position": NOT_OBSERVED, "budget_dropped": []}
    ranking = artifact(body, "retrieval/v1")
    context = artifact(body, "context/v1")
    cut = int(inputs.intervention.get("top_k", inputs.top_k))
    dropped = (
        []
        if inputs.ranking_only
        else budget_dropped(
            parent.retrieval, inputs.top_k, ranking, context, parent.expected, cut, inputs.unit
        )
    )
    moved = evidence_of(ranking, None, parent.expected, None, inputs.unit)
    return {
        "intervention_position": moved.position,
        "budget_dropped": dropped,
    }


class _Carried:
    """The carried gold-context diagnosis's case records, met in case-id order as the replay
    reaches its cases (both are the parent's selection, in that order)."""

    def __init__(self, ledger: Ledger, carried_from: str | None) -> None:
        self.present = carried_from is not None
        self._records: Iterator[Map] = iter(())
        if carried_from is not None:
            self._records = diagnosis_cases(ledger, diagnosis_body(ledger.get(carried_from)))
        self._next = next(self._records, None)

    def get(self, case_id: str) -> Map | None:
        while self._next is not None and self._next["case_id"] < case_id:
            self._next = next(self._records, None)
        if self._next is not None and self._next["case_id"] == case_id:
            return self._next
        return None


# -- a diagnosis's pages ------------------------------------------------------------------

PAGE_SIZE: Final = 256
"""Case records in one ``oloproof.diagnosis_page``: a reader holds one page at a time."""


def pages_of(records: Iterable[Map]) -> Iterator[tuple[Event, list[Map]]]:
    """``records`` as consecutive diagnosis pages of up to ``PAGE_SIZE`` records, each with the
    records it holds."""
    records = iter(records)
    while chunk := list(itertools.islice(records, PAGE_SIZE)):
        yield ev.make(ev.DIAGNOSIS_PAGE, {"records": chunk}), chunk


def put_pages(ledger: Ledger, records: Iterable[Map]) -> list[str]:
    """Store ``records`` as diagnosis pages, one at a time; their addresses in order."""
    return [ledger.put(page) for page, _ in pages_of(records)]


def page_addresses(records: Iterable[Map]) -> list[str]:
    """The addresses ``put_pages`` would give the pages of ``records``, storing nothing."""
    return [address_of(page) for page, _ in pages_of(records)]


def paged(records: Iterable[Map], pages: list[str]) -> Iterator[Map]:
    """``records`` as they pass, the address of each page they make appended to ``pages``
    (``page_addresses`` of records that are consumed once)."""
    for page, chunk in pages_of(records):
        pages.append(address_of(page))
        yield from chunk


def _read_pages(ledger: Ledger, pages: Sequence[str]) -> Iterator[Map]:
    for page in pages:
        yield from diagnosis_page_body(ledger.get(page))["records"]


def diagnosis_cases(ledger: Ledger, body: DiagnosisBody) -> Iterator[Map]:
    """A stored diagnosis's case records in case-id order, one page read at a time."""
    yield from body.get("cases", [])  # schema 1 kept them in the body
    yield from _read_pages(ledger, body["case_pages"])


def diagnosis_excluded(ledger: Ledger, body: DiagnosisBody) -> Iterator[Map]:
    """A stored diagnosis's excluded cases (failed, but without gold context)."""
    yield from body.get("excluded", [])
    yield from _read_pages(ledger, body["excluded_pages"])


def diagnosis_case(ledger: Ledger, body: DiagnosisBody, case_id: str) -> Map | None:
    """One case's record in a stored diagnosis, or None: the pages are in case-id order, so
    this reads about log2(pages) of them."""
    inline = [c for c in body.get("cases", []) if c["case_id"] == case_id]
    if inline:
        return inline[0]
    pages = body["case_pages"]
    low, high = 0, len(pages)
    while low < high:
        middle = (low + high) // 2
        records = diagnosis_page_body(ledger.get(pages[middle]))["records"]
        if not records or case_id < records[0]["case_id"]:
            high = middle
        elif case_id > records[-1]["case_id"]:
            low = middle + 1
        else:
            return next((r for r in records if r["case_id"] == case_id), None)
    return None


def diagnosis_refs(body: DiagnosisBody) -> list[str]:
    """The links of a diagnosis event: its parent run, each child run, the carried diagnosis,
    then its pages."""
    refs = [body["run"], *(c["address"] for c in body["child_runs"])]
    carried_from = body["carried_from"]
    if carried_from:
        refs.append(carried_from)
    return [*refs, *body["case_pages"], *body["excluded_pages"]]


def latest_gold_diagnosis(
    ledger: Ledger, run_id: str, criterion: str, unit: str, read: int
) -> str | None:
    """The address of the latest complete gold-context diagnosis of ``run_id`` on ``criterion``
    that read relevance in ``unit`` (its labels say where relevant passages were) and the
    parent's first ``read`` case results, as the replay does. One that read fewer (made before
    the parent was resumed) selected fewer cases: carried, it would leave the others without a
    label while its counts read as the whole selection's."""
    for address in reversed(ledger.lookup("diagnoses", run_id)):
        body = diagnosis_body(ledger.get(address))
        if (
            body["intervention"]["kind"] == GOLD_CONTEXT
            and body["criterion"] == criterion
            and body.get("state", COMPLETE) == COMPLETE
            and body["relevance_unit"] == unit
            and body.get("parent_results") in (None, read)
        ):
            return address
    return None


# -- reading a stored diagnosis -----------------------------------------------------------


@dataclass(frozen=True)
class Diagnosis:
    """A stored diagnosis, and the gold-context diagnosis whose labels it carries (if any)."""

    address: str
    body: DiagnosisBody
    carried_address: str | None = None
    carried: DiagnosisBody | None = None
    ranking: bool = False
    """Its criterion scores the ranking alone: no gold-context diagnosis of it can be run
    (``labels.unchangeable``), so none carries labels to it, and none is advised."""

    @property
    def state(self) -> str:
        """``complete``, ``stopped`` or ``interrupted``."""
        return self.body.get("state", COMPLETE)

    def to_json(self, ledger: Ledger) -> dict[str, Any]:
        """A plain-data form for ``--json``: each body with its records read from its pages,
        and ``reused_generations`` when a child run read answers from the stage cache."""
        data: dict[str, Any] = {
            "address": self.address,
            "diagnosis": whole(ledger, self.body),
            "carried": None
            if self.carried is None
            else {"address": self.carried_address, "diagnosis": whole(ledger, self.carried)},
        }
        return {**data, **reused_json(ledger, self.body)}


@dataclass(frozen=True)
class Reused:
    """A child run that read ``reused`` of its ``generations`` from the stage cache instead of
    generating them (its run_end's count of the generate stage).

    Such an answer was observed once, by an earlier run, and a diagnosis that reads it again
    is not a new observation of it: every reader of the diagnosis says so, in ``line``.
    """

    label: str
    role: str
    run_id: str
    reused: int
    generations: int

    @property
    def line(self) -> str:
        return (
            f"Reused: {self.reused} of {self.generations} generations of the {self.label} run "
            "were read from the stage cache, not generated again; diagnose without "
            "--reuse-generations to generate them afresh"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "role": self.role,
            "run_id": self.run_id,
            "reused": self.reused,
            "generations": self.generations,
        }


def reused_generations(ledger: Ledger, body: DiagnosisBody) -> list[Reused]:
    """Each child run of ``body`` that read generations from the stage cache (none: empty)."""
    reused = []
    for child in body["child_runs"]:
        end = latest_end(ledger, child["run_id"])
        stages = end["cache"].get("stages", {}) if end is not None else {}
        hit, miss = stages.get("generate", (0, 0))
        if hit:
            reused.append(Reused(child["label"], child["role"], child["run_id"], hit, hit + miss))
    return reused


def reused_json(ledger: Ledger, body: DiagnosisBody) -> dict[str, Any]:
    """``{"reused_generations": [...]}`` for the ``--json`` forms of a diagnosis, or nothing
    when no child run read from the stage cache, as the text forms print no Reused line."""
    reused = reused_generations(ledger, body)
    return {"reused_generations": [r.to_json() for r in reused]} if reused else {}


def whole(ledger: Ledger, body: DiagnosisBody) -> dict[str, Any]:
    """A diagnosis body as plain data with ``selected``, ``cases`` and ``excluded`` read from
    its pages (the size of the selection: for output that lists every case)."""
    cases = [plain(c) for c in diagnosis_cases(ledger, body)]
    return {
        **plain(body),
        "selected": [c["case_id"] for c in cases],
        "cases": cases,
        "excluded": [plain(c) for c in diagnosis_excluded(ledger, body)],
    }


def load_diagnosis(ledger: Ledger, text: str) -> Diagnosis:
    """The diagnosis named by an address or prefix, with the diagnosis it carries labels from."""
    address, event = load_event(ledger, text, ev.DIAGNOSIS, "a diagnosis")
    return with_carried(ledger, address, diagnosis_body(event))


def with_carried(ledger: Ledger, address: str, body: DiagnosisBody) -> Diagnosis:
    """The diagnosis ``body`` stored at ``address``, with the diagnosis it carries labels from."""
    carried_from = body.get("carried_from")
    carried = diagnosis_body(ledger.get(carried_from)) if carried_from else None
    scored_by = evaluator_type(run_body(ledger.get(body["run"])), body["criterion"])
    return Diagnosis(address, body, carried_from, carried, scored_by in RANKING_EVALUATORS)
