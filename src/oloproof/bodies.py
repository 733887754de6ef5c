"""The body of each event type, as Oloproof reads it: one typed definition per type.

Each is a ``TypedDict``, so a body stays the plain dict the ledger stores and decodes (no object
is built per event on the hot path), while the writers build it and the readers read it under
the type checker. ``oloproof.schemas`` publishes their JSON Schemas under ``schemas/events/``
for tools that read a ledger, and a test checks every event of real runs against them.

These are the bodies as read: through ``events.upcast`` (every older schema reads as the
current one) and ``stored_form.expand`` (texts, a staged execution's retrieval and addresses
put back). What is nested inside a project's own files (its config, policy, evaluator specs,
a system's fingerprints) is described by those files' schemas and kept as plain maps here.

A reader takes a body through the function named after its type (``run_body``,
``diagnosis_body``, …; a case result's is ``metrics.case_result_body``), which checks the
event's type once where it is read, so every key read after it is checked by the type checker.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, cast

from typing_extensions import TypedDict

from ledger import Event, FormatError

Map = dict[str, Any]


class TextBody(TypedDict):
    """``oloproof.text``: one passage text, stored once."""

    text: str


class CaseBody(TypedDict):
    """``oloproof.case``: what a case result takes from its case, stored once for every run of
    the dataset when it is not small."""

    expected: Map
    metadata: Map


class EvaluatorBody(TypedDict):
    """``oloproof.evaluator``: an evaluator's spec, stored once for all its judgments when it
    is not small."""

    evaluator: Map


class StageBody(TypedDict):
    """``oloproof.stage``: one output of a staged system's retrieve or generate stage."""

    stage: str
    identity: str
    retrieval: NotRequired[Map]  # a retrieve stage's retrieval/v1
    output: NotRequired[Any]  # a generate stage's output
    model_calls: NotRequired[list[Map]]  # model_call/v1 records made by generate


class StageRef(TypedDict):
    stage: str
    identity: str
    address: str


class ExecutionBody(TypedDict):
    """``oloproof.execution``: one case executed by one system identity."""

    identity: str
    input: Any
    status: Literal["ok", "errored"]
    output: Any
    artifacts: dict[str, list[Any]]  # kind (retrieval/v1, context/v1, …) -> records
    error: NotRequired[Map]
    stages: NotRequired[list[StageRef]]


class JudgmentBody(TypedDict):
    """``oloproof.judgment``: one evaluator's verdict on one execution (its first ref)."""

    criterion: str
    evaluator: Map
    identity: str
    status: Literal["pass", "fail", "value", "missing", "excluded"]
    value: float | None
    reason: str | None
    detail: Map


class VerdictCopy(TypedDict):
    """A verdict as a case result keeps it: status, graded value, why missing or excluded; with
    --repeats, how many repeats the value averages and how many were missing."""

    s: Literal["pass", "fail", "value", "missing", "excluded"]
    v: NotRequired[float]
    r: NotRequired[str]
    n: NotRequired[int]
    m: NotRequired[int]


class CaseResultBody(TypedDict):
    """``oloproof.case_result``: one case's place in one run."""

    run_id: str
    case_id: str
    line: int
    input_key: str
    expected: Map
    metadata: Map
    execution: str
    status: Literal["ok", "errored"]
    verdicts: dict[str, VerdictCopy]
    judgments: dict[str, str]
    cache: Map
    labels: NotRequired[dict[str, str]]
    stages: NotRequired[dict[str, bool]]  # stage -> whether it came from the stage cache
    repeats: NotRequired[list[Map]]  # with --repeats: each repeat's execution and verdicts


class DatasetRef(TypedDict):
    path: str
    sha256: str
    cases: int


class EvaluatorEntry(TypedDict):
    criterion: str
    kind: str
    spec: Map


class RunBody(TypedDict):
    """``oloproof.run``: a run began."""

    run_id: str
    created_at: str
    oloproof_version: str
    config_path: str
    config: Map  # the project file as loaded (schemas/config.json)
    system: Map  # the system's identity
    fingerprints: Map
    dataset: DatasetRef
    planned_cases: int
    evaluators: list[EvaluatorEntry]
    slices: list[str]
    min_slice_support: int
    policy: Map | None  # schemas/policy.json
    policy_path: str | None
    parent: Map | None  # a diagnosis's child run: its parent run and intervention
    # relevant_position labels read relevance in the retrieval metrics' unit (schema 2: True);
    # None: schema 1, labelled in it or by document (see oloproof.events)
    positions_in_unit: bool | None
    subset: NotRequired[Map]  # --sample, --cases, --shard: what chose the cases
    repeats: NotRequired[int]


def planned_cases(body: Mapping[str, Any]) -> int:
    """How many cases the run of ``body`` planned (a run recorded before it said so planned its
    whole cases file)."""
    return int(body.get("planned_cases", body["dataset"]["cases"]))


def not_run(body: Mapping[str, Any], finished: int) -> int:
    """How many cases the run of ``body`` planned but has no result for, of which ``finished``
    have one (an interrupted or stopped run's, or a crashed one's)."""
    return max(0, planned_cases(body) - finished)


class RunCache(TypedDict):
    execution: list[int]  # reused, made, shared within the run
    judgment: list[int]
    stages: dict[str, list[int]]  # stage -> [hits, misses]


class RunEndBody(TypedDict):
    """``oloproof.run_end``: a run finished, was interrupted or was stopped."""

    run_id: str
    state: str
    reason: str | None
    cases: int
    errored: int
    redacted: int | None  # None: written before redactions were counted
    cache: RunCache
    judges: NotRequired[Map]  # per LLM judge: calls, tokens, cost, reused judgments
    engine: NotRequired[Map]  # a run on Ray: replicas, workers lost, cases sent again
    intervals: NotRequired[list[list[Any]]]  # the intervals its report computed
    # A run with --repeats: how many of its repeats' executions errored (absent before it was
    # recorded, and for a run without repeats).
    repeats_errored: NotRequired[int]
    # Cases a go of the run wrote and then ended without an end record (killed): the cache
    # counts and judge usage above leave them out (absent when there are none).
    uncounted: NotRequired[int]
    # The system's own model calls (``oloproof.call_totals``): absent when it made and reused
    # none, and before it was recorded.
    model_calls: NotRequired[Map]


class Gate(TypedDict):
    blocked: bool
    exit_code: int


class DecisionBody(TypedDict):
    """``oloproof.decision``: a policy applied to a run."""

    run_id: str
    policy: Map
    policy_path: str | None
    # Whether an observed_count rule could PASS only on a run that --sample or --limit left no
    # case out of; False before schema 2, which let it PASS on the cases that ran.
    count_rules_need_suite: bool
    # Whether a repeat without a verdict counts against an observed_count rule and, when such
    # repeats change a rule's outcome, makes its reason missing_cases_decide; False before
    # schema 3, which did neither.
    counts_missing_repeats: bool
    # Whether a gate with nothing under it (no case answered, or a rule that observed no case)
    # blocks whatever block_on says; False before schema 4, which let block_on pass it.
    no_evidence_blocks: bool
    # Whether a missing case of a metric whose values can lie between 0 and 1 (graded, or
    # pass/fail over repeats) counts at whichever of them bounds the interval widest, the
    # method included; False before schema 5, which counted it as 0 and 1 alone.
    missing_any_value: bool
    # Whether a judge's rule needs its calibration to show it better than chance; False before
    # schema 6, which let a judge at chance decide a rule without minimums.
    judge_beats_chance: bool
    # Whether a rule whose metric observed no case is INSUFFICIENT_EVIDENCE whatever its
    # judge's standing; False before schema 7, which made it MANUAL_REVIEW when its judge was
    # not calibrated (a standing block_on could let through).
    unobserved_before_judge: bool
    # Whether a rule's observed_only reads a repeated case on its judged repeats (a proportion
    # when they make every case 0 or 1); False before schema 8, which read the observed cases
    # as a mean whenever a repeat had no verdict.
    observed_as_judged: bool
    rules: list[Map]
    gate: Gate


class ChildRun(TypedDict):
    """One child run of a diagnosis: which of its runs it is, and where it is stored."""

    label: str
    role: str  # intervention or control
    run_id: str
    address: str
    repeat: NotRequired[int]  # with repeats above 1: which repeat of its role (from 1)


class DiagnosisBody(TypedDict):
    """``oloproof.diagnosis``: a run's failures re-executed under an intervention."""

    run_id: str
    run: str
    # How many of the parent's case result entries it read (the first, in append order);
    # None before schema 3, which read them all.
    parent_results: int | None
    criterion: str
    intervention: Map
    repeats: int
    system_kind: str | None
    top_k: int | None
    # document or chunk: how relevance was read (oloproof.relevance); document before schema 5.
    relevance_unit: str
    child_runs: list[ChildRun]
    carried_from: str | None
    # The per-case records, in oloproof.diagnosis_page events (read them through
    # diagnosis.derive.diagnosis_cases and diagnosis_excluded).
    case_pages: list[str]
    excluded_pages: list[str]
    summary: Map
    state: NotRequired[str]  # present when a child run did not finish
    reason: NotRequired[str | None]
    # Schema 1 kept the records here (its page lists read as empty).
    selected: NotRequired[list[str]]
    excluded: NotRequired[list[Map]]
    cases: NotRequired[list[Map]]


class DiagnosisPageBody(TypedDict):
    """``oloproof.diagnosis_page``: consecutive per-case records of one diagnosis."""

    records: list[Map]


class RunRef(TypedDict):
    run_id: str
    address: str
    # How many of the run's case result entries the comparison read (the first, in append
    # order); None before schema 2, which read them all.
    results: int | None


class ComparisonBody(TypedDict):
    """``oloproof.comparison``: a paired comparison of two runs."""

    candidate: RunRef
    baseline: RunRef
    oloproof_version: str
    level: float
    policy: Map | None
    policy_path: str | None
    # Whether it compared like with like (schema 3): a case paired only with the same expected
    # values, and a rule decided only on a metric the same evaluator judged in both runs, a
    # judge's after its calibration.
    like_for_like: bool
    # Whether a repeat without a verdict counts against the candidate (schema 4) rather than
    # its case being read as the mean of its judged repeats.
    counts_missing_repeats: bool
    # Whether a planned case neither run holds is counted once when one run's plan holds the
    # other's (schema 6), rather than once per run that did not finish it.
    counts_unrun_once: bool
    # Whether a judge's rule needs its calibration to show it better than chance (schema 7).
    judge_beats_chance: bool
    # Whether a rule that read no pair of its metric is INSUFFICIENT_EVIDENCE whatever its
    # judge's standing (schema 8), rather than MANUAL_REVIEW under an uncalibrated judge.
    unobserved_before_judge: bool
    # Whether a pair one run's output alone excluded (no citations recorded, say), the other
    # run observing it, counts as missing (schema 8) rather than as excluded.
    output_exclusions_missing: bool
    # Whether a case not paired because it errored is excluded for a metric its labels or
    # expected values exclude it from (schema 8), rather than missing.
    errored_case_exclusions: bool
    # Whether a repeat one run's output alone excluded, in a case the other run observed,
    # counts as a repeat without a verdict (schema 9) rather than being left out of its case.
    repeat_exclusions_missing: bool
    # Whether the paired cases that repeat an earlier pair's judgments in both runs are counted
    # (schema 10): ``repeated_pairs``, given only when some are.
    counts_repeated_pairs: bool
    # Whether a gate with nothing under it (no case paired, or a rule that read no pair)
    # blocks whatever block_on says; False before schema 5, which let block_on pass it.
    no_evidence_blocks: bool
    paired_cases: int
    repeated_pairs: NotRequired[int]
    unpaired: list[Map]
    metrics: list[Map]
    not_compared: list[Map]
    min_slice_support: int
    slices: list[Map]
    decisions: list[Map]
    gate: Map | None


class CalibrationBody(TypedDict):
    """``oloproof.calibration``: a judge measured against human labels."""

    identity: str
    judge: Map
    level: float
    labels: Map
    counts: dict[str, int]
    agreement: Map
    sensitivity: Map
    specificity: Map
    disagreements: list[Any]
    missing: list[Any]
    missing_reasons: dict[str, int]
    excluded: list[Any]
    recorded_at: str
    reply_models: NotRequired[list[str | None]]


BODIES: dict[str, type] = {
    "oloproof.run": RunBody,
    "oloproof.execution": ExecutionBody,
    "oloproof.stage": StageBody,
    "oloproof.text": TextBody,
    "oloproof.case": CaseBody,
    "oloproof.evaluator": EvaluatorBody,
    "oloproof.judgment": JudgmentBody,
    "oloproof.case_result": CaseResultBody,
    "oloproof.run_end": RunEndBody,
    "oloproof.decision": DecisionBody,
    "oloproof.diagnosis": DiagnosisBody,
    "oloproof.diagnosis_page": DiagnosisPageBody,
    "oloproof.comparison": ComparisonBody,
    "oloproof.calibration": CalibrationBody,
}
"""Each event type's body definition (the keys are ``events.SCHEMAS``'s)."""


def _checked(event: Event, kind: str) -> Mapping[str, Any]:
    if event.type != kind:
        raise FormatError(f"expected an event of type {kind}, found one of type {event.type}")
    return event.body


def run_body(event: Event) -> RunBody:
    """The body of a run event, typed."""
    return cast(RunBody, _checked(event, "oloproof.run"))


def verdict_copy(status: str, value: Any, reason: str | None) -> dict[str, Any]:
    """The verdict copy a case_result holds of a judgment: ``{"s", "v"?, "r"?}``.

    ``v`` is there for a graded verdict, ``r`` for an excluded or missing one (as
    ``oloproof.execute`` writes it).
    """
    copy: dict[str, Any] = {"s": status}
    if status == "value" and value is not None:
        copy["v"] = value
    if status in ("excluded", "missing") and reason is not None:
        copy["r"] = reason
    return copy


def execution_body(event: Event) -> ExecutionBody:
    """The body of an execution event, typed."""
    return cast(ExecutionBody, _checked(event, "oloproof.execution"))


def judgment_body(event: Event) -> JudgmentBody:
    """The body of a judgment event, typed."""
    return cast(JudgmentBody, _checked(event, "oloproof.judgment"))


def run_end_body(event: Event) -> RunEndBody:
    """The body of a run_end event, typed."""
    return cast(RunEndBody, _checked(event, "oloproof.run_end"))


def decision_body(event: Event) -> DecisionBody:
    """The body of a decision event, typed."""
    return cast(DecisionBody, _checked(event, "oloproof.decision"))


def diagnosis_body(event: Event) -> DiagnosisBody:
    """The body of a diagnosis event, typed."""
    return cast(DiagnosisBody, _checked(event, "oloproof.diagnosis"))


def diagnosis_page_body(event: Event) -> DiagnosisPageBody:
    """The body of a diagnosis page event, typed."""
    return cast(DiagnosisPageBody, _checked(event, "oloproof.diagnosis_page"))


def comparison_body(event: Event) -> ComparisonBody:
    """The body of a comparison event, typed."""
    return cast(ComparisonBody, _checked(event, "oloproof.comparison"))
