"""The event types Oloproof writes, and the only place that builds a ``ledger.Event``.

Every event body is a plain mapping of CBOR-able values. Types and schema versions:

    oloproof.run         a run began: its id, system identity, config, dataset, evaluators
    oloproof.execution   one case executed by one system identity (output, artifacts, error)
    oloproof.stage       one stage output of a staged system (retrieve or generate)
    oloproof.judgment    one evaluator's verdict on one execution
    oloproof.case_result one case's place in one run: links the execution and its judgments
    oloproof.run_end     a run finished, was interrupted or was stopped
    oloproof.decision    a policy applied to a run (rules and gate)
    oloproof.diagnosis   a diagnosis of a run's failures, linking its child runs
    oloproof.comparison  a paired comparison of two runs under a policy
    oloproof.calibration a judge measured against human labels
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ledger import Event, encode, internal_key

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

SCHEMA = 1

# Index names the viewer pages through (``oloproof.view.data``). A run's problem cases (errored,
# or with a failed or missing verdict) are filed under its id, under its id and one kind, and
# under its id, a status and each criterion concerned, so a filtered page of them is read from
# the index instead of by replaying the run. A run event files itself under ``RUN_ID/indexed``:
# runs recorded before these indexes existed lack that entry, and readers fall back to a scan.
FAILURES = "failures"
FAILURES_KIND = "failures_kind"
FAILURES_CRITERION = "failures_criterion"
# One case of one run, by ``RUN_ID/CASE_ID``: a case's page is found without reading the run.
RUN_CASE = "run_case"
# Who links to an address, where no other index tells: a case result under its execution, an
# execution under each stage output it used.
LINKED_FROM = "linked_from"


def identity_key(material: Any) -> str:
    """A fast internal key (blake3) of CBOR-able ``material``: cache identities, fingerprints."""
    return internal_key(encode(material))


def make(kind: str, body: Mapping[str, Any], refs: Iterable[str] = ()) -> Event:
    """Build an event of ``kind`` at the current schema version."""
    return Event(type=kind, schema=SCHEMA, body=dict(body), refs=tuple(refs))


def index_entries(address: str, event: Event) -> Iterable[tuple[str, str]]:
    """The derived index entries of one event (given to the ledger as its indexer)."""
    body = event.body
    kind = event.type
    if kind == EXECUTION:
        yield ("exec", body["identity"])
        for ref in event.refs:
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
        if isinstance(body.get("execution"), str):
            yield (LINKED_FROM, body["execution"])
        yield from _failure_entries(body)
    elif kind == RUN:
        yield (FAILURES_KIND, f"{body['run_id']}/indexed")
    elif kind in (RUN_END, DECISION):
        yield ("run_meta", body["run_id"])
    elif kind == DIAGNOSIS:
        yield ("diagnoses", body["run_id"])
    elif kind == COMPARISON:
        yield ("comparisons", body["candidate"]["run_id"])
    elif kind == CALIBRATION:
        yield ("calibration", body["identity"])


def problem_kinds(body: Mapping[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """A case result's problem kinds (``errored``, ``failed``, ``missing``), and the criteria
    it failed and those it is missing; a graded value of exactly 0 counts as failed."""
    failed = [
        c
        for c, v in body["verdicts"].items()
        if v["s"] == "fail" or (v["s"] == "value" and v.get("v") == 0.0)
    ]
    missing = [c for c, v in body["verdicts"].items() if v["s"] == "missing"]
    kinds = [
        k
        for k, on in (
            ("errored", body["status"] == "errored"),
            ("failed", failed),
            ("missing", missing),
        )
        if on
    ]
    return kinds, failed, missing


def _failure_entries(body: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    kinds, failed, missing = problem_kinds(body)
    if not kinds:
        return
    run_id = body["run_id"]
    yield (FAILURES, run_id)
    for kind in kinds:
        yield (FAILURES_KIND, f"{run_id}/{kind}")
    for criterion in failed:
        yield (FAILURES_CRITERION, f"{run_id}/failed/{criterion}")
    for criterion in missing:
        yield (FAILURES_CRITERION, f"{run_id}/missing/{criterion}")
