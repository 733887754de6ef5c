"""Which of the parent run's cases a diagnosis covers, in the words every reader of it shows.

Requirements this module meets:

1. ``oloproof diagnose``, ``oloproof inspect DIAGNOSIS`` and the viewer's diagnosis page show
   the same Selected line and the same Excluded lines, made here alone.
2. There is an Excluded line for each kind of parent case the diagnosis could not select:
   failed without gold context, failed in some of its repeats and not in others, with no
   verdict on the criterion, never finished (those after the first not for a diagnosis
   recorded before it counted them).
3. The cases behind a line (``exclusions``) are its first ``EXCLUDED_IDS_SHOWN`` excluded
   records in case-id order, then how many more there are and that ``inspect --json`` lists
   them all. The records are read one page at a time and only the ids shown are kept, so a
   diagnosis excluding thousands of cases costs no more memory than one excluding twenty.
   The unfinished cases have no records: their ids are not known.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oloproof.diagnosis.labels import FAILED_IN_SOME_REPEATS, NO_GOLD_CONTEXT, NO_VERDICT
from oloproof.display import plural, printable

if TYPE_CHECKING:
    from ledger import Ledger
    from oloproof.bodies import DiagnosisBody

NO_GOLD_CONTEXT_HINT = (
    "declare the passages that would have answered the case in its `expected.gold_context`, "
    "as a list of `{doc_id, text}` objects; an intervention needs them to tell a retrieval "
    "failure from a generation one"
)

EXCLUDED_IDS_SHOWN = 20
"""How many case ids are named under one Excluded line before it says how many more."""


def failed_cases(n: int) -> str:
    return "1 failed case" if n == 1 else f"{n} failed cases"


def selected_line(summary: Mapping[str, Any]) -> str:
    return (
        f"Selected: {failed_cases(summary['selected'])} with gold context (observed; no "
        "population claim)"
    )


def exclusion_lines(body: Mapping[str, Any]) -> list[tuple[str | None, str]]:
    """``(reason, line)`` for each kind of case the diagnosis excluded. The reason is that of
    the excluded records behind the line; the unfinished cases have none."""
    summary = body["summary"]
    lines: list[tuple[str | None, str]] = []
    if summary["excluded"]:
        lines.append(
            (
                NO_GOLD_CONTEXT,
                f"Excluded: {failed_cases(summary['excluded'])}, {NO_GOLD_CONTEXT} - "
                f"{NO_GOLD_CONTEXT_HINT}",
            )
        )
    unstable = summary.get(FAILED_IN_SOME_REPEATS) or 0
    if unstable:
        lines.append(
            (
                FAILED_IN_SOME_REPEATS,
                f"Excluded: {unstable} {plural(unstable, 'case')} that failed "
                f"{body['criterion']} in some repeats of the parent run and not in others "
                f"({FAILED_IN_SOME_REPEATS}), so {_pronoun(unstable)} "
                f"{'is' if unstable == 1 else 'are'} unstable without any intervention - "
                f"oloproof inspect {body['run_id']} --failures shows their repeats",
            )
        )
    no_verdict = summary.get("no_verdict") or {}
    if no_verdict:
        n = sum(no_verdict.values())
        why = ", ".join(f"{count} {reason}" for reason, count in no_verdict.items())
        lines.append(
            (
                NO_VERDICT,
                f"Excluded: {n} {plural(n, 'case')} with no verdict on {body['criterion']} in "
                f"the parent run ({why}), so whether {_pronoun(n)} failed is unknown - "
                f"oloproof inspect {body['run_id']} --failures shows why",
            )
        )
    unfinished = summary.get("unfinished") or 0
    if unfinished:
        lines.append(
            (
                None,
                f"Excluded: {unfinished} planned {plural(unfinished, 'case')} never finished in "
                f"the parent run, so whether {_pronoun(unfinished)} failed is unknown",
            )
        )
    return lines


def _pronoun(n: int) -> str:
    return "it" if n == 1 else "they"


@dataclass(frozen=True)
class ExcludedCase:
    case_id: str
    text: str
    """The id as printed, with why the case has no verdict when it has none."""


@dataclass(frozen=True)
class Exclusion:
    """One Excluded line, and the first of the cases behind it."""

    line: str
    cases: list[ExcludedCase]
    rest: str | None
    """``and N more (…)`` after the cases shown, when there are more."""

    def ids_line(self) -> str | None:
        """The cases shown, then ``rest``; None for a line whose cases are not known."""
        if not self.cases:
            return None
        listed = ", ".join(case.text for case in self.cases)
        return listed if self.rest is None else f"{listed} {self.rest}"


def exclusions(ledger: Ledger, address: str, body: DiagnosisBody) -> list[Exclusion]:
    """Each Excluded line of the diagnosis at ``address``, with the cases behind it."""
    # The CLI imports this module at start-up; derive brings the stored runs and calibration.
    from oloproof.diagnosis.derive import diagnosis_excluded

    shown: dict[str, list[ExcludedCase]] = {}
    more: Counter[str] = Counter()
    for record in diagnosis_excluded(ledger, body):
        cases = shown.setdefault(record["reason"], [])
        if len(cases) == EXCLUDED_IDS_SHOWN:
            more[record["reason"]] += 1
            continue
        text = printable(record["case_id"])
        if "why" in record:
            text += f" ({printable(record['why'])})"
        if record["reason"] == FAILED_IN_SOME_REPEATS:
            text += f" (failed in {record['failed']} of {record['repeats']} repeats)"
        cases.append(ExcludedCase(record["case_id"], text))
    found = []
    for reason, line in exclusion_lines(body):
        count = more[reason] if reason is not None else 0
        rest = (
            f"and {count} more (oloproof inspect {address} --json lists them all)"
            if count
            else None
        )
        found.append(Exclusion(line, shown.get(reason, []) if reason is not None else [], rest))
    return found
