"""The application's own checks for ``oloproof verify``: every stored summary re-derives.

Metrics, labels and decisions are derived by replaying events; where Oloproof stores a summary
as a convenience, these checks re-derive it and report each one that no longer matches as a
``StaleSummary`` problem naming the event's address. Requirements:

1. Verdict copies: every case_result's copy of a verdict (``verdicts[criterion]``) equals the
   judgment event it points at (``judgments[criterion]``) in status, value and reason; the
   pointer is a stored judgment of that criterion, among the case_result's links; and a pass,
   fail or value verdict always has a judgment behind it. Its slice labels are what
   ``systems.rag.staged_labels`` gives from the execution it links (a repeated case's first)
   and its expected values, at the run's top_k and relevance unit; a run that is not staged
   labels none. A run recorded before it said how its labels read relevance
   (``positions_in_unit`` is None) may hold relevant_position read by document instead.
2. Decisions: every decision equals the one ``runner.decide_run`` re-derives from the run's
   policy and a tally replayed from the run's case results as they stood when it was made
   (the first ``cases`` case results its run_end counted, in append order), so a decision of
   a run that was interrupted and later resumed is checked against its own cases; and under
   the rules it was made by (``count_rules_need_suite``: a schema 1 decision let a count
   PASS on a subset; ``counts_missing_repeats``: a schema 2 decision left a repeated run's
   repeats without a verdict out of its counts and reasons; ``no_evidence_blocks``: a schema 3
   decision let a gate with nothing under it pass when ``block_on`` let its rules through;
   ``missing_any_value``: a schema 4 decision counted a missing case of a graded metric as 0
   and 1 alone, Clopper-Pearson when its observed values were all 0 or 1;
   ``judge_beats_chance``: a schema 5 decision let a judge that its calibration did not show
   better than chance decide a rule without minimums; ``unobserved_before_judge``: a schema 6
   decision made a metric its uncalibrated judge never answered MANUAL_REVIEW;
   ``observed_as_judged``: a schema 7 decision read a repeated run's observed cases alone as
   a mean whenever a repeat had no verdict). A run with a policy whose last run_end was not
   ``stopped`` has a decision: it is written in the commit of that end.
3. Intervals: every interval a run_end stored for its report (``stats.remembered``)
   recomputes to the same bounds.
4. Diagnoses: every diagnosis re-derives equal from its parent and child runs
   (``oloproof.diagnosis.audit``).
5. Comparisons: every comparison equals ``compare.derive_comparison`` of the two runs' case
   results and the recorded policy (the recording ``oloproof_version`` aside), under the rules
   it was made by (``no_evidence_blocks``: a schema 4 comparison let a gate with nothing under
   it pass when ``block_on`` let its rules through; ``judge_beats_chance``: a schema 6
   comparison let a judge at chance decide; ``unobserved_before_judge`` and
   ``output_exclusions_missing``: a schema 7 comparison made a metric its uncalibrated judge
   never answered MANUAL_REVIEW, left out a pair one run's output alone excluded, and counted
   missing an errored case its labels exclude: ``errored_case_exclusions``;
   ``repeat_exclusions_missing``: a schema 8 comparison left out of its case a repeat its
   output alone excluded; ``counts_repeated_pairs``: a schema 9 comparison did not count the
   pairs that repeat an earlier one).
6. Refs (``MisnamedRef``): each run id's ref names that run's run event.
7. Streaming: runs are visited one at a time, so memory grows with the largest run, never with
   the ledger. An event whose bytes are corrupt is skipped: the ledger's own check names it.
   Nothing is repaired or written.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from ledger import CorruptEventError, Event, Ledger, LedgerError, Problem
from ledger.memo import Recent
from oloproof import events as ev
from oloproof import stats
from oloproof.bodies import (
    CaseResultBody,
    DecisionBody,
    RunEndBody,
    comparison_body,
    decision_body,
    execution_body,
    judgment_body,
    run_body,
    run_end_body,
    verdict_copy,
)
from oloproof.compare import derive_comparison
from oloproof.config import recorded_compare_policy
from oloproof.diagnosis.audit import STALE_SUMMARY, stale_summary, verify_diagnosis
from oloproof.errors import OloproofError
from oloproof.events import plain
from oloproof.metrics import RunTally, SeenCases, case_result_body, criteria_of
from oloproof.policy import calibrations_relied_on
from oloproof.relevance import DOCUMENT, retrieval_units, run_unit
from oloproof.repeats import combine_verdicts
from oloproof.runner import decide_run
from oloproof.store import misnamed_run
from oloproof.stored_runs import StoredRun, load_run
from oloproof.systems.rag import staged_labels

__all__ = ["STALE_SUMMARY", "AuditCounts", "application_checks"]

# Judgments remembered between case results: cached ones recur (a repeated case, a resumed
# run), mostly close together; a judge's reason can be long, so the memo stays small.
_JUDGMENTS_KEPT = 4096
_OBSERVED = ("pass", "fail", "value")
_CALIBRATION_INDEX = "calibration"  # events.index_entries files calibrations by judge identity
MISNAMED_REF = "MisnamedRef"  # a run id's ref that names another event


@dataclass
class AuditCounts:
    """How many stored summaries the checks re-derived (for the verify report)."""

    case_results: int = 0
    decisions: int = 0
    diagnoses: int = 0
    comparisons: int = 0

    def __str__(self) -> str:
        return (
            f"re-derived {self.decisions} decision(s), {self.diagnoses} diagnosis(es) and "
            f"{self.comparisons} comparison(s); checked the verdict copies of "
            f"{self.case_results} case result(s)"
        )

    def to_dict(self) -> dict[str, int]:
        """A plain-data form, for JSON output."""
        return {
            "case_results": self.case_results,
            "decisions": self.decisions,
            "diagnoses": self.diagnoses,
            "comparisons": self.comparisons,
        }


def application_checks(ledger: Ledger, counts: AuditCounts | None = None) -> Iterator[Problem]:
    """Every ``StaleSummary`` and ``MisnamedRef`` problem in ``ledger`` (give it to
    ``ledger.verify``)."""
    counts = counts if counts is not None else AuditCounts()
    yield from _check_refs(ledger)
    judgments = _Judgments(ledger)
    for address in ledger.lookup("type", ev.RUN):
        event = _read(ledger, address)
        if event is not None:
            body = run_body(event)
            yield from _check_run(
                ledger, StoredRun(body["run_id"], address, body), judgments, counts
            )
    for address in ledger.lookup("type", ev.DIAGNOSIS):
        if _read(ledger, address) is not None:
            counts.diagnoses += 1
            yield from stale_summary(address, "diagnosis", verify_diagnosis(ledger, address))
    for address in ledger.lookup("type", ev.COMPARISON):
        event = _read(ledger, address)
        if event is not None:
            counts.comparisons += 1
            yield from stale_summary(address, "comparison", verify_comparison(ledger, event))


def run_problems(ledger: Ledger, address: str) -> list[Problem]:
    """The ``StaleSummary`` problems ``verify`` finds in the run whose run event is stored at
    ``address`` (its case results' copies and labels, a second result for a case, its
    decisions), in the order it prints them: what ``ledger import`` says of a run it brought."""
    body = run_body(ledger.get(address))
    run = StoredRun(body["run_id"], address, body)
    return list(_check_run(ledger, run, _Judgments(ledger), AuditCounts()))


# -- refs: each run id's names its run ----------------------------------------------------


def _check_refs(ledger: Ledger) -> Iterator[Problem]:
    for name, address in ledger.refs(ev.RUN_ID_PREFIX):
        event = _read(ledger, address)  # None: the ledger's own check names a missing one
        wrong = None if event is None else misnamed_run(name, event)
        if wrong is not None:
            yield Problem(MISNAMED_REF, address, wrong, name=name)


# -- one run: its case results' verdict copies, and its decisions ---------------------------


@dataclass
class _Decision:
    address: str
    body: DecisionBody
    cases: int  # the case results the tally held when it was made
    links: tuple[str, ...]  # its refs: the run, its run_end, the calibrations it relied on


def _check_run(
    ledger: Ledger, run: StoredRun, judgments: _Judgments, counts: AuditCounts
) -> Iterator[Problem]:
    decisions, problems = _decisions(ledger, run)
    yield from problems
    labelling = _labelling(run)
    tally = RunTally(criteria_of(run.body), list(run.body["slices"])) if decisions else None
    seen = SeenCases()
    for address in ledger.iter_lookup("run_cases", run.run_id):
        event = _read(ledger, address)
        if event is None:
            continue
        counts.case_results += 1
        body = case_result_body(event)
        differences = _copy_differences(body, event.refs, run, judgments)
        differences += _label_differences(ledger, body, labelling)
        yield from stale_summary(address, "case_result", differences)
        if body in seen:
            # A run executes a case once (a resume skips finished cases), so a second result is
            # another writer's: reports count the first, which this one cannot overrule.
            detail = (
                f"case_result: {run.run_id} already holds a result for case "
                f"{body['case_id']!r}; its reports count the first"
            )
            yield Problem(STALE_SUMMARY, address, detail)
            continue
        while tally is not None and decisions and decisions[0].cases == seen.count:
            counts.decisions += 1
            yield from _check_decision(ledger, decisions.pop(0), run, tally)
        seen.add(body)
        if tally is not None:
            tally.add(body)
    for decision in decisions:
        counts.decisions += 1
        if tally is not None and decision.cases == seen.count:
            yield from _check_decision(ledger, decision, run, tally)
        else:
            detail = (
                f"decision: its run_end counts {decision.cases} case(s), but the ledger holds "
                f"{seen.count} case result(s) of {run.run_id}"
            )
            yield Problem(STALE_SUMMARY, decision.address, detail)


def _decisions(ledger: Ledger, run: StoredRun) -> tuple[list[_Decision], list[Problem]]:
    """The run's decisions, ordered by how many cases they were made on; and broken ones."""
    found: list[_Decision] = []
    problems: list[Problem] = []
    last_end: tuple[str, RunEndBody] | None = None
    decided = False
    for address in ledger.lookup("run_meta", run.run_id):
        event = _read(ledger, address)
        if event is not None and event.type == ev.RUN_END:
            last_end = address, run_end_body(event)
            problems.extend(_interval_problems(address, last_end[1]))
        if event is None or event.type != ev.DECISION:
            continue
        decided = True
        linked = _read(ledger, event.refs[1]) if len(event.refs) >= 2 else None
        end = run_end_body(linked) if linked is not None and linked.type == ev.RUN_END else None
        if event.refs[:1] != (run.address,) or end is None or end["run_id"] != run.run_id:
            detail = f"decision: its links do not name run {run.run_id} and one of its run_ends"
            problems.append(Problem(STALE_SUMMARY, address, detail))
            continue
        found.append(_Decision(address, decision_body(event), int(end["cases"]), event.refs))
    found.sort(key=lambda d: d.cases)
    if last_end is not None and not decided:
        problems.extend(_undecided_end(run, *last_end))
    return found, problems


def _undecided_end(run: StoredRun, address: str, end: RunEndBody) -> list[Problem]:
    """The run's last run_end, when it has a policy and no decision, though the run was not
    stopped: it writes its decision in the commit of that end (``runner._finish``), so a
    ledger holding the end alone lacks its decision (an archive imported without it), and
    every read of the run refuses it (``stored_runs.check_decided``). Nothing said so: the
    import exited 0 and ``verify`` found the ledger ok, while ``runs`` blamed the indexes."""
    if run.body.get("policy") is None or end["state"] == "stopped":
        return []
    detail = (
        f"run_end: {run.run_id} has a policy and this end record ({end['state']}), but no "
        "decision, which a run writes with its end: the ledger lacks it, and the run's gate "
        "cannot be read"
    )
    return [Problem(STALE_SUMMARY, address, detail)]


def _interval_problems(address: str, end: RunEndBody) -> list[Problem]:
    """Each interval a run_end stored for its report (``stats.remembered``) that does not
    recompute to the same bounds."""
    differences = []
    for entry in end.get("intervals") or ():
        wrong = stats.stored_entry_differences(entry)
        if wrong is not None:
            differences.append(f"intervals: {wrong}")
    return list(stale_summary(address, "run_end", differences))


def _check_decision(
    ledger: Ledger, decision: _Decision, run: StoredRun, tally: RunTally
) -> Iterator[Problem]:
    try:
        derived = decide_run(
            run.body,
            tally,
            cast(Ledger, _AsDecided(ledger, decision.links)),
            count_rules_need_suite=decision.body["count_rules_need_suite"],
            counts_missing_repeats=decision.body["counts_missing_repeats"],
            no_evidence_blocks=decision.body["no_evidence_blocks"],
            missing_any_value=decision.body["missing_any_value"],
            judge_beats_chance=decision.body["judge_beats_chance"],
            unobserved_before_judge=decision.body["unobserved_before_judge"],
            observed_as_judged=decision.body["observed_as_judged"],
        )
    except (LedgerError, OloproofError, KeyError, TypeError, ValueError) as exc:
        differences = [f"cannot re-derive it: {type(exc).__name__}: {exc}"]
    else:
        differences = differences_between(plain(decision.body), plain(derived))
    yield from stale_summary(decision.address, "decision", differences)


class _AsDecided:
    """The ledger as a decision or comparison saw it: of a judge's calibrations, only those it
    links.

    A decision relies on the newest calibration of each judge at the time it was made, and
    links it. A calibration recorded later must not change what re-deriving it gives, so the
    ``calibration`` index answers with the linked calibrations alone; all else is the ledger.
    """

    def __init__(self, ledger: Ledger, links: Iterable[str]) -> None:
        self._ledger = ledger
        self._linked = set(links)

    def latest(self, index: str, key: str) -> str | None:
        if index != _CALIBRATION_INDEX:
            return self._ledger.latest(index, key)
        found = [a for a in self._ledger.lookup(index, key) if a in self._linked]
        return found[-1] if found else None

    def lookup(self, index: str, key: str) -> list[str]:
        found = self._ledger.lookup(index, key)
        if index != _CALIBRATION_INDEX:
            return found
        return [a for a in found if a in self._linked]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ledger, name)


def _copy_differences(
    body: CaseResultBody, refs: Sequence[str], run: StoredRun, judgments: _Judgments
) -> list[str]:
    differences: list[str] = []
    if run.address not in refs:
        differences.append(f"its links do not name run {run.run_id}")
    repeats = body.get("repeats")
    if not repeats:
        return differences + _verdict_differences(body, refs, judgments, "")
    # A repeated case (oloproof.repeats): each repeat's copies match its judgments, and the
    # case's verdicts are what combining the repeats' gives.
    for index, repeat in enumerate(repeats):
        differences += _verdict_differences(repeat, refs, judgments, f"repeat {index}: ")
    per_repeat = [r.get("verdicts") or {} for r in repeats]
    combined = combine_verdicts(per_repeat)
    # A release before a repeat's exclusion stayed its own excluded the whole case for it:
    # what it recorded is read as it was made, as decisions of older rules are.
    before = combine_verdicts(per_repeat, as_recorded_before=True)
    if plain(body.get("verdicts")) not in (plain(combined), plain(before)):
        differences.append(
            f"verdicts: stored {body.get('verdicts')!r}, its repeats give {combined!r}"
        )
    return differences


def _verdict_differences(
    body: Mapping[str, Any], refs: Sequence[str], judgments: _Judgments, where: str
) -> list[str]:
    verdicts: Mapping[str, Any] = body.get("verdicts") or {}
    pointers: Mapping[str, str] = body.get("judgments") or {}
    differences: list[str] = []
    for criterion, pointer in sorted(pointers.items()):
        judgment = judgments.get(pointer)
        if judgment is _CORRUPT:
            continue  # the ledger's own check names it
        if pointer not in refs:
            differences.append(
                f"{where}verdict {criterion}: judgment {pointer} is not among its links"
            )
        if judgment is None:
            differences.append(f"{where}verdict {criterion}: judgment {pointer} is not stored")
        elif judgment[0] != ev.JUDGMENT or judgment[1] != criterion:
            differences.append(
                f"{where}verdict {criterion}: {pointer} is not a judgment of {criterion!r}"
            )
        else:
            copy = plain(verdicts.get(criterion))
            expected = verdict_copy(*judgment[2:])
            if copy != expected:
                differences.append(
                    f"{where}verdict {criterion}: stored {copy!r}, judgment {pointer} says "
                    f"{expected!r}"
                )
    for criterion, verdict in sorted(verdicts.items()):
        if criterion not in pointers and verdict.get("s") in _OBSERVED:
            differences.append(
                f"{where}verdict {criterion}: {verdict['s']!r} with no judgment behind it"
            )
    return differences


@dataclass(frozen=True)
class _Labelling:
    """How a staged run labelled its cases."""

    top_k: int
    # The units its relevant_position labels may read relevance in, its own first (None: it
    # labels no position, its retrieval metrics having no one unit).
    readings: tuple[str | None, ...]


def _labelling(run: StoredRun) -> _Labelling | None:
    """How ``run`` labelled its cases, or None for a system that labels none."""
    system = run.body["system"]
    if system.get("kind") != "rag":
        return None
    unit = run_unit(retrieval_units(run.body["evaluators"]))
    if run.body.get("positions_in_unit"):
        return _Labelling(int(system["top_k"]), (unit,))
    # A release before the run said which reading it labels by read relevance by document.
    return _Labelling(int(system["top_k"]), tuple(dict.fromkeys((unit, DOCUMENT))))


def _label_differences(
    ledger: Ledger, body: CaseResultBody, labelling: _Labelling | None
) -> list[str]:
    stored: Mapping[str, Any] = body.get("labels") or {}
    if labelling is None:
        derived: list[Mapping[str, str]] = [{}]
    else:
        repeats = body.get("repeats")
        first: Mapping[str, Any] = repeats[0] if repeats else body
        artifacts = None
        if first["status"] != "errored":
            try:
                execution = ledger.get(first["execution"])
            except LedgerError:
                return []  # the ledger's own check names a corrupt or missing event
            if execution.type != ev.EXECUTION:
                return []
            artifacts = execution_body(execution)["artifacts"]
        derived = [
            staged_labels(artifacts, body["expected"], labelling.top_k, unit)
            for unit in labelling.readings
        ]
    differences = []
    for name in sorted({*stored, *derived[0]}):
        given = [labels.get(name) for labels in derived]
        if stored.get(name) in given:
            continue
        own = given[0]
        text = (
            f"labels: stored {_label(name, stored.get(name))}, its execution and expected values "
            f"give {_value(own)}"
        )
        if any(other != own for other in given[1:]):
            text += (
                f" ({_value(given[1])} read by document, as a release before the run said which "
                "reading did)"
            )
        differences.append(text)
    return differences


def _label(name: str, value: Any) -> str:
    return f"no {name}" if value is None else f"{name} {value!r}"


def _value(value: str | None) -> str:
    return "none" if value is None else repr(value)


_CORRUPT: tuple[Any, ...] = ("corrupt",)
_Judgment = tuple[Any, ...]


class _Judgments:
    """(type, criterion, status, value, reason) of judgment events, read once and remembered."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self._seen: Recent[str, _Judgment | None] = Recent(_JUDGMENTS_KEPT)

    def get(self, address: str) -> _Judgment | None:
        return self._seen.get(address, self._read)

    def _read(self, address: str) -> _Judgment | None:
        try:
            event = self._ledger.get(address)
        except CorruptEventError:
            return _CORRUPT
        except LedgerError:
            return None
        return _judgment_of(event)


def _judgment_of(event: Event) -> _Judgment:
    if event.type != ev.JUDGMENT:
        return (event.type,)  # the type alone says it is no judgment
    body = judgment_body(event)
    return (
        event.type,
        body.get("criterion"),
        body.get("status"),
        body.get("value"),
        body.get("reason"),
    )


# -- comparisons --------------------------------------------------------------------------


def verify_comparison(ledger: Ledger, event: Event) -> list[str]:
    """Re-derive a comparison from the two runs and its recorded policy; list differences."""
    body = comparison_body(event)
    try:
        candidate = load_run(ledger, body["candidate"]["address"])
        baseline = load_run(ledger, body["baseline"]["address"])
        policy = recorded_compare_policy(body["policy"]) if body.get("policy") else None
        recorded_path = body.get("policy_path")
        policy_path = Path(recorded_path) if recorded_path else None
        # Re-derived from the case results it read (a run resumed since holds more); one
        # recorded before it said how many (schema 1) from all of them.
        read = (body["candidate"]["results"], body["baseline"]["results"])
        derived = derive_comparison(
            cast(Ledger, _AsDecided(ledger, event.refs)),
            candidate,
            baseline,
            policy=policy,
            policy_path=policy_path,
            results=read,
            like_for_like=body["like_for_like"],
            counts_missing_repeats=body["counts_missing_repeats"],
            no_evidence_blocks=body["no_evidence_blocks"],
            # Only a comparison that counted some says so; one recorded before they were
            # counted, of runs that had not finished, is read as it was made.
            counts_not_run="not_run" in body,
            counts_unrun_once=body["counts_unrun_once"],
            judge_beats_chance=body["judge_beats_chance"],
            unobserved_before_judge=body["unobserved_before_judge"],
            output_exclusions_missing=body["output_exclusions_missing"],
            errored_case_exclusions=body["errored_case_exclusions"],
            repeat_exclusions_missing=body["repeat_exclusions_missing"],
            counts_repeated_pairs=body["counts_repeated_pairs"],
        )
    except (LedgerError, OloproofError, KeyError, TypeError, ValueError) as exc:
        return [f"cannot re-derive it: {type(exc).__name__}: {exc}"]
    # The version that recorded it is an input, not something the runs re-derive.
    derived["oloproof_version"] = body.get("oloproof_version")
    for role, count in zip(("candidate", "baseline"), read, strict=True):
        if count is None:
            derived[role]["results"] = None
    differences = differences_between(plain(body), plain(derived))
    relied_on = calibrations_relied_on(derived["decisions"])
    if sorted(event.refs) != sorted([candidate.address, baseline.address, *relied_on]):
        differences.append(
            "its links differ from the candidate and baseline runs and the calibrations its "
            "rules relied on"
        )
    return differences


# -- helpers ------------------------------------------------------------------------------


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT = _Absent()


def differences_between(stored: Any, derived: Any, path: str = "") -> list[str]:
    """Each place two plain values differ, as ``path: stored X, re-derived Y``."""
    if isinstance(stored, dict) and isinstance(derived, dict):
        found: list[str] = []
        for key in sorted(set(stored) | set(derived)):
            where = f"{path}.{key}" if path else str(key)
            found.extend(
                differences_between(stored.get(key, _ABSENT), derived.get(key, _ABSENT), where)
            )
        return found
    if isinstance(stored, list) and isinstance(derived, list) and len(stored) == len(derived):
        found = []
        for i, (a, b) in enumerate(zip(stored, derived, strict=True)):
            found.extend(differences_between(a, b, f"{path}[{i}]"))
        return found
    if stored == derived:
        return []
    return [f"{path or 'body'}: stored {stored!r}, re-derived {derived!r}"]


def _read(ledger: Ledger, address: str) -> Event | None:
    """The event at ``address``, or None when its bytes are corrupt or it is not stored."""
    try:
        return ledger.get(address)
    except LedgerError:
        return None
