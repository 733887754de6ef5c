"""What a diagnosis found, in the count and label lines every reader of it shows.

Requirements this module meets:

1. ``oloproof diagnose``, ``oloproof inspect DIAGNOSIS`` and the viewer's diagnosis page say
   what a diagnosis found in the same words, made here alone: the line a diagnosis that did
   not finish opens with, then its counts and labels (``stopped_lines``, ``count_lines``). The
   Selected and Excluded lines before them are ``scope``'s; the Reused lines after them are
   ``derive.Reused``'s.
2. With ``--repeats K`` (K > 1) the Control line counts the cases that passed in at least one
   of the K re-executions, and the Recovered line says in how many repeats each recovered case
   recovered; a single re-execution says neither.
3. A replay counts its own UNRESOLVED cases right after its recoveries, then the RANKED_OUT
   cases it confirmed (and, when there are some, those that recovered with no relevant
   passage in the context, which confirm nothing, and those a role gave no verdict on, which
   neither confirm nor fail to), then the labels it carries from a gold-context diagnosis,
   each counted against that diagnosis's own selection. The cases its
   intervention left unchanged are counted in a line of their own only when one of them passed
   all the same: that pass is the system's own variation, and without the line "0 of N
   recovered" would hide it.
4. A gold-context diagnosis whose control retrieved differently from the parent run says how
   many cases that touched, right after its Control line (no line when none). The Control line
   says how many cases the control gave no verdict on, when there are some, so that "0 of N
   passed" never stands for N cases that errored.
5. Nothing here reads the ledger: every line is made from the stored bodies alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from oloproof.diagnosis import labels as dg

if TYPE_CHECKING:
    from oloproof.diagnosis.derive import Diagnosis

# What each label line says after "LABEL: k of n, ", by reason (a reason has one label).
PHRASES: dict[str, str] = {
    dg.RELEVANT_NOT_RETRIEVED: "recovered; no relevant evidence was retrieved",
    dg.RELEVANT_RANKED_OUT: "recovered; relevant evidence was retrieved below the top-k cut",
    dg.RELEVANT_DROPPED: "recovered; relevant evidence within top-k was left out of the context",
    dg.FAILS_WITH_GOLD: "still failed with the gold context",
    dg.INTERVENTION_UNSUPPORTED: "the system is not staged, so no case was re-executed",
    dg.PASSES_UNDER_CONTROL: "passed under the control as well, so unstable rather than diagnosed",
    dg.RECOVERS_ONLY_WITH_GOLD_ALONE: (
        "recovered, but the relevant evidence had already reached the model; "
        "only the gold passages alone helped"
    ),
    dg.NO_RELEVANCE_LABELS: (
        "recovered, but without relevance labels the failing stage cannot be told"
    ),
    dg.RETRIEVAL_DRIFTED: (
        "recovered, but the control retrieved or assembled other passages than the run did, so "
        "the run's retrieval and context no longer tell which stage failed"
    ),
    dg.GOLD_TEXT_DIFFERS: (
        "recovered, but the retrieval holds other text than the gold passage under its doc_id "
        "and chunk_id (the corpus or the gold passage changed since the case was written), so "
        "the run's retrieval no longer tells which stage failed"
    ),
    dg.CONTEXT_UNCHANGED: (
        "passed with the gold passages, but the control had handed the model those very "
        "passages, so the pass is the system's own variation, not a recovery"
    ),
    dg.CONTEXT_VARIED: (
        "a role's repeats were handed different contexts (a retriever or a context assembly "
        "that does not give the same twice), in some of them the very one the other role had, "
        "so the intervention changed the context in some repeats only: neither a recovery nor "
        "a failure of it"
    ),
    dg.CONTROL_NOT_OBSERVED: "the control gave no verdict (errored or missing)",
    dg.INTERVENTION_NOT_OBSERVED: "the intervention gave no verdict (errored or missing)",
}

HYPOTHESIS = "This is a hypothesis to test, not an established cause."


def stopped_lines(body: Mapping[str, Any]) -> list[str]:
    """The line a diagnosis whose child runs did not all finish opens with (else none)."""
    state = body.get("state", dg.COMPLETE)
    if state == dg.COMPLETE:
        return []
    return [
        f"{state.capitalize()}: {body.get('reason')}; cases it did not reach are UNRESOLVED "
        "(not observed)"
    ]


def count_lines(diagnosis: Diagnosis) -> list[str]:
    """What the diagnosis found: its counts and labels, after its Selected and Excluded lines
    (and the line of one that did not finish) and before its Reused lines."""
    body = diagnosis.body
    summary = body["summary"]
    staged = body["system_kind"] == "rag"
    if not staged:
        return label_lines(summary)
    if summary["selected"] == 0:
        return [f"Nothing was re-executed: {_why_nothing(body)}."]
    if body["intervention"]["kind"] == dg.GOLD_CONTEXT:
        return [
            control_line(body),
            *drift_lines(summary),
            recovered_line(body, dg.GOLD_LABEL),
            *label_lines(summary),
            *implicated_lines(summary),
        ]
    return _replay_lines(diagnosis)


def label_lines(summary: Mapping[str, Any], key: str = "labels") -> list[str]:
    """``LABEL: k of n, phrase`` for each (label, reason) counted under ``key`` (none when a
    diagnosis recorded before it was counted holds ``None`` there)."""
    n = summary["selected"]
    lines = []
    for entry in summary.get(key) or []:
        phrase = PHRASES.get(entry["reason"], entry["reason"])
        lines.append(f"{entry['label']}: {entry['count']} of {n}, {phrase}")
    return lines


def implicated_lines(summary: Mapping[str, Any]) -> list[str]:
    recovered = summary["recovered"]
    noun = "failure" if recovered == 1 else "failures"
    lines = [
        f"Implicated: {f['factor']}, in {f['count']} of the {recovered} recovered {noun}."
        for f in summary.get("implicated", [])
    ]
    experiments: list[str] = []
    for factor in summary.get("implicated", []):
        experiments.extend(e for e in factor["experiments"] if e not in experiments)
    lines.extend(f"Candidate experiment: {e}. {HYPOTHESIS}" for e in experiments)
    return lines


def _why_nothing(body: Mapping[str, Any]) -> str:
    """Why a diagnosis selected no case: failures without gold context, or no failure."""
    summary = body["summary"]
    criterion = body["criterion"]
    unstable = summary.get(dg.FAILED_IN_SOME_REPEATS)
    if summary["excluded"]:
        if unstable:
            return (
                f"no case that failed {criterion} in every repeat of the parent run declares "
                "gold context"
            )
        return "no failed case declares gold context"
    if unstable:
        return (
            f"every case that failed {criterion} in the parent run passed in another of its repeats"
        )
    if summary.get("no_verdict") or summary.get("unfinished"):
        return f"no case with a verdict on {criterion} failed in the parent run"
    return f"no case failed {criterion} in the parent run"


def control_line(body: Mapping[str, Any]) -> str:
    """How many selected cases passed under the control (in any repeat, with repeats), and how
    many gave it no verdict, when some did: "0 of 3 passed" alone reads as three failures."""
    summary = body["summary"]
    repeats = body.get("repeats", 1)
    n = summary["selected"]
    if repeats == 1:
        line = (
            f"Control: {summary['control_passed']} of {n} passed when re-executed without the "
            "intervention"
        )
    else:
        line = (
            f"Control: {summary['control_passed']} of {n} passed in at least one of {repeats} "
            "re-executions without the intervention"
        )
    unobserved = _control_not_observed(body)
    if unobserved and repeats == 1:
        line += f"; {unobserved} of {n} gave no verdict (errored or missing)"
    elif unobserved:
        line += (
            f"; {unobserved} of {n} passed in none and gave no verdict in at least one "
            "(errored or missing)"
        )
    return line


def _control_not_observed(body: Mapping[str, Any]) -> int:
    """The cases counted UNRESOLVED because the control gave no verdict: among a gold-context
    diagnosis's labels, a replay's own UNRESOLVED cases (0 for a replay recorded before those
    were counted, which cannot tell)."""
    summary = body["summary"]
    key = "labels" if body["intervention"]["kind"] == dg.GOLD_CONTEXT else "unresolved"
    return sum(
        entry["count"]
        for entry in summary.get(key) or []
        if entry["reason"] == dg.CONTROL_NOT_OBSERVED
    )


def drift_lines(summary: Mapping[str, Any]) -> list[str]:
    """How many cases' controls retrieved or assembled differently from the parent run (none:
    no line)."""
    drifted = summary.get("control_drifted") or 0
    if not drifted:
        return []
    return [
        f"Drifted: {drifted} of {summary['selected']}, the control retrieved or assembled other "
        "passages than the run did, so the system re-executed is not the one that ran (an "
        "index, a tokenizer or another file outside its fingerprint changed, or its retriever "
        "is not deterministic); no stage is read from the run's retrieval or context for them"
    ]


def unchanged_lines(summary: Mapping[str, Any]) -> list[str]:
    """The cases the intervention left as the control had them, when one of them passed all
    the same (else no line)."""
    passed = summary.get("context_unchanged_passed") or 0
    if not passed:
        return []
    return [
        f"UNRESOLVED: {summary['context_unchanged']} of {summary['selected']}, the "
        f"intervention gave the model the very context the control did ({dg.CONTEXT_UNCHANGED})"
        f", so it tested nothing there; {passed} passed under it all the same, which is the "
        "system's own variation, not a recovery"
    ]


def recovered_line(body: Mapping[str, Any], label: str) -> str:
    """The recovered count; with repeats, how many repeats each recovered case passed in."""
    summary = body["summary"]
    line = f"Recovered under {label}: {summary['recovered']} of {summary['selected']}"
    repeats = body.get("repeats", 1)
    spread = summary.get("recovered_in") or []
    if repeats > 1 and spread:
        line += "; " + ", ".join(
            f"{s['cases']} recovered in {s['passes']} of {repeats}{unjudged(s.get('unjudged'))}"
            for s in spread
        )
    return line


def unjudged(count: int | None) -> str:
    """`` (k without a verdict)`` after a count of repeats, when some repeats had none."""
    return f" ({count} without a verdict)" if count else ""


def budget_lines(body: Mapping[str, Any], label: str) -> list[str]:
    """The cases whose admitted relevant passage the budget dropped again (none: no line)."""
    summary = body["summary"]
    count = summary.get("budget_dropped") or 0
    if not count:
        return []
    line = (
        f"Undone by the token budget: {count} of {summary['selected']}, a relevant passage "
        f"admitted under {label} was dropped by token_budget ({dg.BUDGET_DROPPED})"
    )
    unobserved = summary.get("budget_not_observed") or 0
    if unobserved:
        line += (
            f"; {unobserved} more not observed (no execution of theirs under the intervention "
            "ran to the end), so whether the budget undid it there is unknown"
        )
    lines = [line]
    intervention = body["intervention"]
    if intervention["kind"] == dg.TOP_K:
        lines.append(
            f"Candidate experiment: a larger token budget at top-k {intervention['top_k']} "
            f"(--intervention token-budget --token-budget N --top-k {intervention['top_k']}). "
            f"{HYPOTHESIS}"
        )
    else:
        lines.append(f"Candidate experiment: a larger token budget. {HYPOTHESIS}")
    return lines


def _replay_lines(diagnosis: Diagnosis) -> list[str]:
    body = diagnosis.body
    summary = body["summary"]
    label = dg.intervention_label(body["intervention"])
    # The replay's own UNRESOLVED cases follow its recoveries, before any carried labels: a
    # reranker that never ran reads "UNRESOLVED: 4 of 4", not only "0 of 4" recovered.
    lines = [
        control_line(body),
        recovered_line(body, label),
        *label_lines(summary, "unresolved"),
        *unchanged_lines(summary),
    ]
    budget = budget_lines(body, label)
    if diagnosis.carried is None:
        lines.extend(budget)
        if not diagnosis.ranking:  # where gold context is refused, the advice could not be taken
            lines.append("No gold-context diagnosis of this run yet; run one to label the cases.")
        return lines
    carried = diagnosis.carried["summary"]
    confirmed = (
        f"Confirmed under {label}: {summary['confirmed']} of {summary['ranked_out']} "
        "RANKED_OUT cases also recovered"
    )
    not_shown = summary.get("ranked_out_not_shown") or 0
    if not_shown:
        confirmed += (
            f"; {not_shown} more recovered with no relevant passage in the context, which "
            "confirms nothing"
        )
    unobserved = summary.get("ranked_out_not_observed") or 0
    if unobserved:
        confirmed += f"; {unobserved} gave no verdict (errored or missing)"
    undone = summary.get("ranked_out_budget_dropped") or 0
    if undone:
        confirmed += f"; the token budget undid {undone} of the {summary['ranked_out']}"
    lines.append(confirmed)
    lines.extend(budget)
    lines.append(
        f"Labels from gold context (diagnosis {diagnosis.carried_address}): "
        f"{carried['recovered']} of {carried['selected']} recovered"
    )
    lines.extend(label_lines(carried))
    return lines
