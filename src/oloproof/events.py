"""The event types Oloproof writes, their schema versions, and the only place that builds a
``ledger.Event``.

Every event body is a plain mapping of CBOR-able values. Types, with their current schema:

    oloproof.run         2  a run began: its id, system identity, config, dataset, evaluators
    oloproof.execution   2  one case executed by one system identity (output, artifacts, error)
    oloproof.stage       2  one stage output of a staged system (retrieve or generate)
    oloproof.text        1  one passage text, stored once however many events hold it
    oloproof.judgment    1  one evaluator's verdict on one execution
    oloproof.case        1  a case's expected values and metadata, when too long to inline
    oloproof.case_result 3  one case's place in one run: links the execution and its judgments
    oloproof.run_end     2  a run finished, was interrupted or was stopped
    oloproof.decision    5  a policy applied to a run (rules and gate)
    oloproof.diagnosis   5  a diagnosis of a run's failures, linking its child runs
    oloproof.diagnosis_page 1  a run of a diagnosis's per-case records, in case-id order
    oloproof.comparison  5  a paired comparison of two runs under a policy
    oloproof.calibration 1  a judge measured against human labels

Schema versions are enforced on every read (``upcast``, which the store gives the ledger as
its ``Application.upcast``): an event of an older schema is read through the upcasters
``upcast_vN_vN+1(body) -> body`` registered for its type, in order, so the code only ever sees
the current shape; its stored bytes are never rewritten. An event whose schema is newer than
this code is refused with one sentence naming it (``UnsupportedFormatError``), never misread.
Types that are not Oloproof's pass through unchanged.

Changes so far:

- ``oloproof.run`` 2: ``positions_in_unit`` says the run's ``relevant_position`` labels read
  relevance in its retrieval metrics' unit (``relevance.run_unit``; no such label when they
  have none), which ``verify`` derives them again by. Schema 1 does not say: a release before
  that reading labelled by document whatever the unit, and one since in the unit, both at
  schema 1. It reads as ``None``, and ``verify`` accepts either reading of such a run's labels.

- ``oloproof.run_end`` 2: ``redacted``, how many occurrences of configured secrets the run
  replaced in what it stored (``oloproof.redaction``). Schema 1 had no such count; it reads as
  ``None``: not counted, as runs written before redaction existed did not redact.

- ``oloproof.execution``, ``oloproof.stage`` and ``oloproof.case_result`` 2: stored compactly
  (passage texts as ``oloproof.text`` events, a staged execution's retrieval as its stage,
  addresses once, in the refs: ``oloproof.stored_form``, which puts everything back on every
  read). As read, the shape is schema 1's: the upcasters from 1 change nothing.

- ``oloproof.case_result`` 3: expected values and metadata that encode long are an
  ``oloproof.case`` event the result refers to, not a copy in every run's result. As read, the
  shape is unchanged (``oloproof.stored_form`` puts them back).

- ``oloproof.judgment`` 2: an evaluator spec that encodes long (a large inline JSON Schema, a
  judge's long prompt) is an ``oloproof.evaluator`` event every judgment of it refers to, not
  a copy in each. As read, the shape is schema 1's.

- ``oloproof.diagnosis`` 2: the per-case records (``cases``, and ``excluded``) are in
  ``oloproof.diagnosis_page`` events the diagnosis links (``case_pages``, ``excluded_pages``),
  so neither the event nor the command that writes it grows with the selection; ``selected``
  is the case ids of the case pages. Schema 1 kept all three in the body; it reads with both
  page lists empty and its lists where they were (``diagnosis.derive.diagnosis_cases`` reads
  either).

- ``oloproof.diagnosis`` 3: the parent's cases of unknown outcome on the criterion are counted
  in the summary (``no_verdict``, by why the verdict is missing, and ``unfinished``, planned
  cases with no result) and the ones without a verdict are excluded records (reason
  ``no_verdict``), and ``parent_results`` says how many of the parent's case results it read
  (a parent resumed later holds more). Schema 2 did neither: the counts and
  ``parent_results`` read as ``None``, and ``verify`` re-derives such a diagnosis as schema 2
  did.

- ``oloproof.diagnosis`` 4: a replay counts the cases its intervention gave no verdict
  (``unresolved``). Schema 3 did not: ``None`` on a replay; a gold-context diagnosis counted them
  among its labels and reads unchanged.

- ``oloproof.diagnosis`` 5: relevance is read in the run's relevance unit, as its retrieval
  metrics read it (``relevance_unit``: ``chunk`` matches a passage by its chunk, not by its
  document), for the best relevant position, whether a relevant passage reached the model and
  every label that follows from them. Schema 4 read it by document whatever the metrics read:
  ``relevance_unit`` reads ``document``, and ``verify`` re-derives such a diagnosis that way.

- ``oloproof.decision`` 2: an ``observed_count`` rule on a run whose ``--sample`` or
  ``--limit`` may have left cases out is at best INSUFFICIENT_EVIDENCE (``subset_of_cases``),
  and the body says it was decided so (``count_rules_need_suite``). Schema 1 let such a rule
  PASS on the cases that ran: it reads as ``False``, and ``verify`` re-derives it as it was made.

- ``oloproof.decision`` 3: in a repeated run, a case that passed its judged repeats but has
  repeats without a verdict may hide a failure, so an ``observed_count`` rule counts it as it
  counts a missing case (``passes_unconfirmed``); and a rule whose outcome those repeats
  change says ``missing_cases_decide`` with ``observed_only`` and how many repeats
  (``missing_repeats``), as for missing cases (``counts_missing_repeats``). Schema 2 counted
  such a case as a pass and gave the interval's own reason: ``False``, and ``verify``
  re-derives it as it was made.

- ``oloproof.decision`` 4: a gate with nothing under it (no case of the run answered, or a rule
  whose metric observed no case) blocks whatever ``block_on`` says (``no_evidence_blocks``).
  Schema 3 let it pass when ``block_on`` left its rules' outcomes out: ``False``, and
  ``verify`` re-derives it as it was made.

- ``oloproof.decision`` 5: a missing case of a metric whose values can lie between 0 and 1 (a
  graded one, or a pass/fail one over repeats) counts at whichever of those values bounds the
  interval widest, the method it would choose included (``missing_any_value``). Schema 4
  counted it as 0 and 1 alone, with Clopper-Pearson when the observed values were all 0 or 1,
  though a value between would have made the interval betting and wider: ``False``, and
  ``verify`` re-derives it as it was made.

- ``oloproof.decision`` 6: a rule on a judge's metric is decided on the metric only when the
  judge's calibration shows it better than chance (the lower bounds of sensitivity and
  specificity add up to more than 1), whatever minimums the rule sets (``judge_beats_chance``).
  Schema 5 let a judge that passes everything decide a rule without minimums: ``False``, and
  ``verify`` re-derives it as it was made.

- ``oloproof.decision`` 7: a rule whose metric observed no case is INSUFFICIENT_EVIDENCE
  (``no_observed_cases``), so its gate blocks whatever ``block_on`` says, whatever its judge's
  standing (``unobserved_before_judge``). Schema 6 asked the judge first: a metric its
  uncalibrated judge never answered was MANUAL_REVIEW, and ``block_on: [FAIL]`` passed the
  gate. ``False``, and ``verify`` re-derives it as it was made.

- ``oloproof.decision`` 8: in a repeated run, what the observed cases alone give (a rule's
  ``observed_only``, and so whether its reason is ``missing_cases_decide``) reads each case on
  its judged repeats: a case that passed both its judged repeats is 1, and cases all 0 or 1
  are a proportion (Clopper-Pearson) there (``observed_as_judged``). Schema 7 read them by the
  betting interval whenever a repeat had no verdict, so a rule such a repeat decided could
  read ``interval_overlaps_threshold``: ``False``, and ``verify`` re-derives it as it was made.

- ``oloproof.comparison`` 2: each run's reference says how many of its case results the
  comparison read (``results``), which is what ``verify`` re-derives it from (a run resumed
  since holds more). Schema 1 did not: ``None``, and it is re-derived from every result.

- ``oloproof.comparison`` 3: a case whose expected values differ between the runs is not
  paired, and a rule on a metric whose evaluator changed, or on an uncalibrated judge's metric,
  is not decided on its interval (``like_for_like``). Schema 2 did neither: ``False``, and
  ``verify`` re-derives it as it was made.

- ``oloproof.comparison`` 4: a case of a repeated run some of whose repeats have no verdict is
  not compared on its judged repeats alone: the interval counts each such repeat against the
  candidate (``counts_missing_repeats``), and its metric row and decisions say how many
  (``partial``, ``missing_repeats``). Schema 3 read such a case as the mean of its judged
  repeats: ``False``, and ``verify`` re-derives it as it was made.

- ``oloproof.comparison`` 5: a gate with nothing under it (no case paired, or a rule that read
  no pair of its metric) blocks whatever ``block_on`` says (``no_evidence_blocks``), as a
  decision's does since its schema 4. Schema 4 let it pass when ``block_on`` left its rules'
  outcomes out: ``False``, and ``verify`` re-derives it as it was made.

- ``oloproof.comparison`` 6: when one run planned only cases the other planned too (the same
  cases file; the same selection, the whole file, or two ``--limit`` of the same filters),
  a planned case neither run holds is counted once, as not run, and a case one run holds is
  never counted again as not run (``counts_unrun_once``). Schema 5 counted each run's
  unfinished cases whenever the plans differed: ``False``, and ``verify`` re-derives it as it
  was made.

- ``oloproof.comparison`` 7: a rule on a judge's metric needs the judge shown better than
  chance, as a decision's does since its schema 6 (``judge_beats_chance``). Schema 6: ``False``.

- ``oloproof.comparison`` 8: a rule that read no pair of its metric is INSUFFICIENT_EVIDENCE
  whatever its judge's standing, as a decision's is since its schema 7
  (``unobserved_before_judge``); and a pair that one run's output alone excluded (it recorded no
  retrieval, say) while the other run observed it counts as missing, not as excluded
  (``output_exclusions_missing``): a candidate that stops recording what a metric reads no
  longer drops the cases it would fail from the comparison. A case not paired because it
  errored is excluded, not missing, for a metric its labels or expected values exclude it
  from (``errored_case_exclusions``): no answer could have made it count. Schema 7: all three
  ``False``.

- ``oloproof.comparison`` 9: in a paired case both runs observed, and on the side one run
  observed of a missing pair, a repeat that its output alone excluded (it recorded no
  citations, say) counts as a repeat without a verdict (``repeat_exclusions_missing``), as a
  pair one run's output excluded counts as missing since schema 8: a candidate whose repeats
  record nothing where they would fail no longer passes on the repeats that recorded
  something. Schema 8 left such repeats out of their case: ``False``, and ``verify``
  re-derives it as it was made.

- ``oloproof.comparison`` 10: the paired cases whose judgments in both runs are an earlier
  paired case's (the same input and the expected values its evaluators read) are counted,
  ``repeated_pairs`` (given only when some are), and said under the comparison: the intervals
  count each as an independent pair (``counts_repeated_pairs``). Schema 9 did not count them:
  ``False``, and ``verify`` re-derives it as it was made.

``make`` passes every body through ``oloproof.redaction.redact`` (the chokepoint that keeps
configured secrets out of the ledger).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from ledger import Event, FormatError, UnsupportedFormatError, encode, internal_key
from oloproof.redaction import kept_out_all, kept_out_found, redact
from oloproof.repeats import repeat_counts

RUN = "oloproof.run"
EXECUTION = "oloproof.execution"
STAGE = "oloproof.stage"
JUDGMENT = "oloproof.judgment"
CASE_RESULT = "oloproof.case_result"
RUN_END = "oloproof.run_end"
DECISION = "oloproof.decision"
DIAGNOSIS = "oloproof.diagnosis"
COMPARISON = "oloproof.comparison"
CALIBRATION = "oloproof.calibration"
TEXT = "oloproof.text"
CASE = "oloproof.case"
EVALUATOR = "oloproof.evaluator"
DIAGNOSIS_PAGE = "oloproof.diagnosis_page"

RUN_ID_PREFIX: Final = "run_"  # every run id's, and no address's or other ref's

SCHEMAS: Final[Mapping[str, int]] = {
    RUN: 2,
    EXECUTION: 2,
    STAGE: 2,
    JUDGMENT: 2,
    CASE_RESULT: 3,
    RUN_END: 2,
    DECISION: 8,
    DIAGNOSIS: 14,
    COMPARISON: 10,
    CALIBRATION: 1,
    TEXT: 1,
    CASE: 1,
    EVALUATOR: 1,
    DIAGNOSIS_PAGE: 1,
}
"""The schema each event type is written at today."""

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]


def upcast_run_v1_v2(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 did not say which reading of relevance its relevant_position labels follow
    (by document, or in the unit of its retrieval metrics): ``positions_in_unit`` is ``None``
    (either)."""
    return {**body, "positions_in_unit": None}


def upcast_run_end_v1_v2(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 counted no redactions: ``redacted`` is ``None`` (not counted)."""
    return {**body, "redacted": None}


def upcast_decision_v1_v2(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 let an observed_count rule PASS on a subset of the cases: the rule read so."""
    return {**body, "count_rules_need_suite": False}


def upcast_decision_v2_v3(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 2 read a repeated case on its judged repeats in a count, and gave a rule that its
    repeats without a verdict decided the interval's own reason: ``counts_missing_repeats``
    is false."""
    return {**body, "counts_missing_repeats": False}


def upcast_decision_v3_v4(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 3 let a gate with nothing under it (no case answered, or a rule that observed no
    case) pass when ``block_on`` let its rules through: ``no_evidence_blocks`` is false."""
    return {**body, "no_evidence_blocks": False}


def upcast_decision_v4_v5(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 4 counted a missing case of a graded metric as 0 and 1 alone, with
    Clopper-Pearson when the observed values were all 0 or 1: ``missing_any_value`` is false."""
    return {**body, "missing_any_value": False}


def upcast_decision_v5_v6(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 5 let a judge its calibration did not show better than chance decide a rule
    without minimums: ``judge_beats_chance`` is false."""
    return {**body, "judge_beats_chance": False}


def upcast_decision_v6_v7(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 6 asked a rule's judge before its metric's observations, so a metric its
    uncalibrated judge never answered was MANUAL_REVIEW: ``unobserved_before_judge`` is
    false."""
    return {**body, "unobserved_before_judge": False}


def upcast_decision_v7_v8(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 7 read a repeated run's observed cases alone by the betting interval whenever a
    repeat had no verdict: ``observed_as_judged`` is false."""
    return {**body, "observed_as_judged": False}


def upcast_diagnosis_v1_v2(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 kept its case records in the body: no pages (the lists stay where they are)."""
    return {**body, "case_pages": [], "excluded_pages": []}


def upcast_diagnosis_v2_v3(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 2 did not count the parent's cases of unknown outcome, nor say how many of its
    results it read: ``None`` (not counted; all of them)."""
    summary = {**body["summary"], "no_verdict": None, "unfinished": None}
    return {**body, "summary": summary, "parent_results": None}


def upcast_diagnosis_v3_v4(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 3 did not count a replay's UNRESOLVED cases: ``unresolved`` is ``None`` (not
    counted). A gold-context diagnosis counted them among its labels, and reads unchanged."""
    replay = body.get("system_kind") == "rag" and body["intervention"]["kind"] != "gold-context"
    if not replay:
        return body
    return {**body, "summary": {**body["summary"], "unresolved": None}}


def upcast_diagnosis_v4_v5(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 4 read relevance by document, whatever unit the retrieval metrics read it in:
    ``relevance_unit`` is ``document``."""
    return {**body, "relevance_unit": "document"}


def upcast_diagnosis_v5_v6(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 5 compared neither each case's control retrieval with the run's nor a replay's
    context with its control's: the body is the same, and it is re-derived without those
    comparisons (``diagnosis.derive.CONTEXTS_COMPARED``)."""
    return body


def upcast_diagnosis_v6_v7(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 6 checked a gold-context recovery neither against the control's context nor
    against the retrieved text of its gold passages' ids, and selected a parent's cases that
    failed in some repeats only neither way: the body is the same, and it is re-derived without
    those checks (``diagnosis.derive.GOLD_CHECKED``)."""
    return body


def upcast_diagnosis_v7_v8(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 7 confirmed a replay's RANKED_OUT case whenever it recovered, its relevant passage
    shown to the model or not: the body is the same, and it is re-derived so
    (``diagnosis.derive.SHOWN_CONFIRMS``)."""
    return body


def upcast_diagnosis_v8_v9(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 8 read a role's context from its first repeat even when that one errored, and
    counted a replay's RANKED_OUT cases without a verdict as unconfirmed: the body is the same,
    and it is re-derived so (``diagnosis.derive.FIRST_RAN_READ``, ``NO_VERDICT_APART``)."""
    return body


def upcast_diagnosis_v9_v10(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 9 read whether the intervention changed a case's context from each role's first
    repeat that ran to the end alone: the body is the same, and it is re-derived so
    (``diagnosis.derive.REPEATS_COMPARED``)."""
    return body


def upcast_diagnosis_v10_v11(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 10 compared a gold-context control's retrieval with the parent's, not the context
    it assembled from it: the body is the same, and it is re-derived so
    (``diagnosis.derive.CONTEXT_DRIFT_READ``)."""
    return body


def upcast_diagnosis_v11_v12(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 11 compared a gold-context control with the parent's first repeat alone, not with
    each of its repeats: the body is the same, and it is re-derived so
    (``diagnosis.derive.PARENT_REPEATS_READ``)."""
    return body


def upcast_diagnosis_v12_v13(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 12 did not count a replay's cases whose context under the intervention is
    unknown (``budget_not_observed``), which is there only when it counts a case: the body is
    the same, and it is re-derived without it (``diagnosis.derive.BUDGET_UNOBSERVED_COUNTED``)."""
    return body


def upcast_diagnosis_v13_v14(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 13 did not count, with repeats, each role's repeats without a verdict
    (``intervention_unjudged``, ``control_unjudged``, there only when they count one): the body
    is the same, and it is re-derived without them
    (``diagnosis.derive.REPEATS_UNJUDGED_COUNTED``)."""
    return body


def upcast_comparison_v1_v2(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 1 did not say how many case results of each run it read: ``None`` (all)."""
    runs = {role: {**body[role], "results": None} for role in ("candidate", "baseline")}
    return {**body, **runs}


def upcast_comparison_v2_v3(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 2 paired a case whatever its expected values, and decided a rule on a metric
    whatever judged it: ``like_for_like`` is false."""
    return {**body, "like_for_like": False}


def upcast_comparison_v3_v4(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 3 read a case with repeats without a verdict as the mean of its judged repeats:
    ``counts_missing_repeats`` is false."""
    return {**body, "counts_missing_repeats": False}


def upcast_comparison_v4_v5(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 4 let a gate with nothing under it (no case paired, or a rule that read no pair)
    pass when ``block_on`` let its rules through: ``no_evidence_blocks`` is false."""
    return {**body, "no_evidence_blocks": False}


def upcast_comparison_v5_v6(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 5 counted each run's unfinished cases as not run whenever the two runs planned
    different cases, a case the other run held included: ``counts_unrun_once`` is false."""
    return {**body, "counts_unrun_once": False}


def upcast_comparison_v6_v7(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 6 let a judge at chance decide a rule: ``judge_beats_chance`` is false."""
    return {**body, "judge_beats_chance": False}


def upcast_comparison_v7_v8(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 7 asked a rule's judge before its metric's pairs, left out a pair one run's
    output alone excluded, and counted missing an errored case its labels exclude:
    ``unobserved_before_judge``, ``output_exclusions_missing`` and ``errored_case_exclusions``
    are false."""
    later = ("unobserved_before_judge", "output_exclusions_missing", "errored_case_exclusions")
    return {**body, **dict.fromkeys(later, False)}


def upcast_comparison_v8_v9(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 8 left a repeat its output alone excluded out of its case, the other run
    observing it: ``repeat_exclusions_missing`` is false."""
    return {**body, "repeat_exclusions_missing": False}


def upcast_comparison_v9_v10(body: dict[str, Any]) -> dict[str, Any]:
    """Schema 9 did not count the pairs that repeat an earlier one: ``counts_repeated_pairs``
    is false."""
    return {**body, "counts_repeated_pairs": False}


def unchanged(body: dict[str, Any]) -> dict[str, Any]:
    """A step whose change is in how the body is stored, not in how it reads."""
    return body


UPCASTERS: Final[Mapping[tuple[str, int], Upcaster]] = {
    (RUN, 1): upcast_run_v1_v2,
    (RUN_END, 1): upcast_run_end_v1_v2,
    (DECISION, 1): upcast_decision_v1_v2,
    (DECISION, 2): upcast_decision_v2_v3,
    (DECISION, 3): upcast_decision_v3_v4,
    (DECISION, 4): upcast_decision_v4_v5,
    (DECISION, 5): upcast_decision_v5_v6,
    (DECISION, 6): upcast_decision_v6_v7,
    (DECISION, 7): upcast_decision_v7_v8,
    (DIAGNOSIS, 1): upcast_diagnosis_v1_v2,
    (DIAGNOSIS, 2): upcast_diagnosis_v2_v3,
    (DIAGNOSIS, 3): upcast_diagnosis_v3_v4,
    (DIAGNOSIS, 4): upcast_diagnosis_v4_v5,
    (DIAGNOSIS, 5): upcast_diagnosis_v5_v6,
    (DIAGNOSIS, 6): upcast_diagnosis_v6_v7,
    (DIAGNOSIS, 7): upcast_diagnosis_v7_v8,
    (DIAGNOSIS, 8): upcast_diagnosis_v8_v9,
    (DIAGNOSIS, 9): upcast_diagnosis_v9_v10,
    (DIAGNOSIS, 10): upcast_diagnosis_v10_v11,
    (DIAGNOSIS, 11): upcast_diagnosis_v11_v12,
    (DIAGNOSIS, 12): upcast_diagnosis_v12_v13,
    (DIAGNOSIS, 13): upcast_diagnosis_v13_v14,
    (COMPARISON, 1): upcast_comparison_v1_v2,
    (COMPARISON, 2): upcast_comparison_v2_v3,
    (COMPARISON, 3): upcast_comparison_v3_v4,
    (COMPARISON, 4): upcast_comparison_v4_v5,
    (COMPARISON, 5): upcast_comparison_v5_v6,
    (COMPARISON, 6): upcast_comparison_v6_v7,
    (COMPARISON, 7): upcast_comparison_v7_v8,
    (COMPARISON, 8): upcast_comparison_v8_v9,
    (COMPARISON, 9): upcast_comparison_v9_v10,
    (EXECUTION, 1): unchanged,
    (STAGE, 1): unchanged,
    (JUDGMENT, 1): unchanged,
    (CASE_RESULT, 1): unchanged,
    (CASE_RESULT, 2): unchanged,
}
"""``(type, N) -> upcast_vN_vN+1``: one step from schema N to N + 1 of a type."""

# Index names the viewer pages through (``oloproof.view.data``). A run's problem cases (errored,
# or with a failed or missing verdict, in any of its repeats: ``problem_kinds``) are filed under
# its id, under its id and one kind, and under its id, a status and each criterion concerned, so
# a filtered page of them is read from the index instead of by replaying the run. A ledger filed
# by older rules has its indexes rebuilt under the current ``INDEXES`` before it is read. The
# cases filed as failed on a criterion are every case that could be the lower side of a flip on
# it, so the viewer finds a comparison's flips among them (``oloproof.flips``).
FAILURES = "failures"
FAILURES_KIND = "failures_kind"
FAILURES_CRITERION = "failures_criterion"
# One case of one run, by ``RUN_ID/CASE_ID``: a case's page is found without reading the run.
RUN_CASE = "run_case"
# Who links to an address, where no other index tells: a case result under its execution, an
# execution under each stage output it used.
LINKED_FROM = "linked_from"


def plain(value: Any) -> Any:
    """Mappings as dicts and sequences as lists, for comparison and JSON (a
    stored body as plain data)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def identity_key(material: Any) -> str:
    """A fast internal key (blake3) of CBOR-able ``material``: cache identities, fingerprints."""
    return internal_key(encode(material))


def input_key(case_input: Any) -> str:
    """The key of a case's input, as it is stored: with the secrets the run keeps out replaced,
    so that the ledger holds nothing a guess at one could be checked against (the input's key
    is stored beside it), and a rotated secret leaves the key, and the cache, as it was."""
    return identity_key(kept_out_all(case_input))


def input_keys(case_id: str, case_input: Any) -> tuple[str, str]:
    """A case's ``input_key``, and the key its executions are found by (``kept_apart``)."""
    kept, found = kept_out_found(case_input)
    key = identity_key(kept)
    return key, identity_key({"input": key, "case": case_id}) if found else key


def kept_apart(case_id: str, material: Any) -> Any:
    """``material`` (what a case's execution or stage is given) as the key of its execution
    or stage takes it: as stored, each secret the run keeps out replaced, and then, if any was,
    beside its case's id. Two cases whose material differs only in which secret it holds are
    stored alike, and would otherwise share one execution: the second given the first's answer.
    A later run of the same case still finds it (a rotated secret keeps the cache), as does
    any case whose material holds no secret."""
    kept, found = kept_out_found(material)
    return {"case": case_id, "kept_out": kept} if found else kept


JUDGE_TYPES: Final[frozenset[str]] = frozenset(
    {"groundedness_judge", "citation_support_judge", "answer_judge", "rubric_judge"}
)
"""The evaluator ``type`` values that name an LLM judge (``judge_config.JudgeConfig``'s)."""


def judge_identity(spec: Mapping[str, Any]) -> str:
    """The key a judge's calibrations are bound to: the key of its ``spec`` without its
    criterion (a name for the metric, which can change without changing the judge)."""
    return identity_key({key: value for key, value in spec.items() if key != "criterion"})


def make(kind: str, body: Mapping[str, Any], refs: Iterable[str] = ()) -> Event:
    """Build an event of ``kind`` at its current schema, with configured secrets redacted."""
    return Event(type=kind, schema=SCHEMAS[kind], body=redact(dict(body)), refs=tuple(refs))


def upcast(address: str, event: Event) -> Event:
    """``event`` as this code reads it: upcast to its type's current schema (see the module)."""
    current = SCHEMAS.get(event.type)
    if current is None or event.schema == current:
        return event
    if event.schema > current:
        raise UnsupportedFormatError(
            f"event {address} is {event.type} schema {event.schema}, but this oloproof reads "
            f"{event.type} up to schema {current} — upgrade oloproof to read it"
        )
    body = dict(event.body)
    for version in range(event.schema, current):
        step = UPCASTERS.get((event.type, version))
        if step is None:
            raise FormatError(
                f"event {address} is {event.type} schema {event.schema}, which this oloproof "
                f"cannot read: it has no upcaster from schema {version}"
            )
        body = step(body)
    return Event(event.type, current, body, event.refs)


# Names the rules of ``index_entries``: change it with them, and every ledger written under the
# old rules has its indexes rebuilt when next opened for writing (``ledger.Application``); one
# opened read-only (the viewer) is refused until then (``StaleIndexesError``). 5: a repeated
# case whose repeats errored or went without a verdict is filed among the failures. 6: a
# repeated case some of whose repeats failed a criterion was filed apart, under
# ``failed_repeats``. 7: such a case is filed among the failures, as failed on that criterion.
INDEXES: Final = "oloproof-indexes-7"


def index_entries(address: str, event: Event) -> Iterable[tuple[str, str]]:
    """The derived index entries of one event (given to the ledger as its indexer)."""
    body = event.body
    kind = event.type
    if kind == EXECUTION:
        yield ("exec", body["identity"])
        # Its first refs are the stage outputs it used; the texts it holds come after them.
        for ref in event.refs[: len(body.get("stages") or ())]:
            yield (LINKED_FROM, ref)
    elif kind == JUDGMENT:
        # Filed under the execution judged (its first ref), not the judgment's own identity:
        # one execution's judgments then sit together in the index, so a run dirties one index
        # page per case instead of one per judgment (the keys are otherwise random hashes).
        yield ("judgment", event.refs[0])
    elif kind == STAGE:
        yield ("stage", body["identity"])
    elif kind == CASE_RESULT:
        yield ("run_cases", body["run_id"])
        yield (RUN_CASE, f"{body['run_id']}/{body['case_id']}")
        execution = body.get("execution")
        if isinstance(execution, int):  # stored as the position of its address in the refs
            execution = event.refs[execution]
        if isinstance(execution, str):
            yield (LINKED_FROM, execution)
        yield from failure_entries(body)
    elif kind in (RUN_END, DECISION):
        yield ("run_meta", body["run_id"])
    elif kind == DIAGNOSIS:
        yield ("diagnoses", body["run_id"])
    elif kind == COMPARISON:
        yield ("comparisons", body["candidate"]["run_id"])
    elif kind == CALIBRATION:
        yield ("calibration", body["identity"])


def is_failed(verdict: Mapping[str, Any]) -> bool:
    """Whether a stored verdict failed: a fail, or a graded value of exactly 0."""
    return verdict["s"] == "fail" or (verdict["s"] == "value" and verdict.get("v") == 0.0)


def problem_kinds(body: Mapping[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """A case result's problem kinds (``errored``, ``failed``, ``missing``), and the criteria
    it failed and those it is missing; a graded value of exactly 0 counts as failed.

    A repeated case (``oloproof.repeats``) errored when one of its repeats did, failed each
    criterion that some repeat failed (as an ``observed_count`` rule counts it: a case that
    passed 2 of 3 times is a failure there), and misses a verdict on each criterion that some
    repeat has none on (its combined verdict's ``m``), as ``inspect --failures`` lists it: its
    combined verdicts alone would hide all three.
    """
    repeats = body.get("repeats")
    counts = repeat_counts(repeats)
    verdicts: Mapping[str, Mapping[str, Any]] = body["verdicts"]
    failed = [c for c, v in verdicts.items() if is_failed(v) or failed_repeats(repeats, c)]
    missing = [c for c, v in verdicts.items() if v["s"] == "missing" or v.get("m")]
    kinds = [
        k
        for k, on in (
            ("errored", body["status"] == "errored" or (counts and counts.errored)),
            ("failed", failed),
            ("missing", missing or (counts and counts.without_verdict)),
        )
        if on
    ]
    return kinds, failed, missing


def failed_repeats(repeats: Sequence[Mapping[str, Any]] | None, criterion: str) -> int:
    """How many of a repeated case's ``repeats`` (its ``body.get("repeats")``) failed
    ``criterion`` (``is_failed``); 0 for a case executed once, which has none."""
    if not repeats:  # every case of a run without --repeats: asked on the hot path
        return 0
    return sum(
        1
        for repeat in repeats
        if (verdict := repeat["verdicts"].get(criterion)) is not None and is_failed(verdict)
    )


def failure_entries(body: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    """The failures indexes' ``(index, key)`` entries a case result is filed under (none for
    a case with no problem): the viewer counts them to check what those indexes find."""
    run_id = body["run_id"]
    kinds, failed, missing = problem_kinds(body)
    if not kinds:
        return
    yield (FAILURES, run_id)
    for kind in kinds:
        yield (FAILURES_KIND, f"{run_id}/{kind}")
    for criterion in failed:
        yield (FAILURES_CRITERION, f"{run_id}/failed/{criterion}")
    for criterion in missing:
        yield (FAILURES_CRITERION, f"{run_id}/missing/{criterion}")
