"""``oloproof diagnose``: re-execute a run's failed cases under an intervention, beside a control.

Also renders a diagnosis for ``oloproof inspect`` (one line per case). Only the light label
and scope modules are imported at start-up; the runner and what it needs load when a command
runs.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import typer

from ledger import Event, Ledger
from oloproof import events as ev
from oloproof.cli.inspect_cmd import RENDERERS, note_latest
from oloproof.cli.main import app
from oloproof.cli.project import project_ledger
from oloproof.diagnosis import labels as dg
from oloproof.diagnosis import scope
from oloproof.display import printable
from oloproof.errors import ConfigError

if TYPE_CHECKING:
    from oloproof.bodies import DiagnosisBody
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
    dg.CONTROL_NOT_OBSERVED: "the control gave no verdict (errored or missing)",
    dg.INTERVENTION_NOT_OBSERVED: "the intervention gave no verdict (errored or missing)",
}

# How a replay's result for one case reads (the UNRESOLVED reasons print as codes).
RESULTS = {dg.RECOVERED: "recovered", dg.STILL_FAILED: "still failed"}


def selection_lines(body: Mapping[str, Any]) -> list[str]:
    lines = [scope.selected_line(body["summary"])]
    return lines + [line for _, line in scope.exclusion_lines(body)]


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
    lines.extend(
        f"Candidate experiment: {e}. This is a hypothesis to test, not an established cause."
        for e in experiments
    )
    return lines


def diagnosis_lines(ledger: Ledger, diagnosis: Diagnosis) -> list[str]:
    """What ``oloproof diagnose`` prints."""
    body = diagnosis.body
    summary = body["summary"]
    n = summary["selected"]
    lines = selection_lines(body) + stopped_lines(body)
    staged = body["system_kind"] == "rag"
    if staged and n == 0:
        lines.append(f"Nothing was re-executed: {_why_nothing(body)}.")
    elif staged and body["intervention"]["kind"] == dg.GOLD_CONTEXT:
        lines.append(control_line(body))
        lines.append(recovered_line(body, dg.GOLD_LABEL))
        lines.extend(label_lines(summary))
        lines.extend(implicated_lines(summary))
    elif staged:
        lines.extend(_replay_lines(diagnosis))
    else:
        lines.extend(label_lines(summary))
    lines.extend(reused_lines(ledger, body))
    lines.append(f"Diagnosis {diagnosis.address}")
    carried = diagnosis.carried["child_runs"] if diagnosis.carried is not None else []
    children = [*carried, *body["child_runs"]]
    if children:
        named = ", ".join(f"{c['label']} {c['run_id']}" for c in children)
        lines.append(f"Child runs: {named}")
    lines.append(f"Cases: oloproof inspect {diagnosis.address}")
    return lines


def _why_nothing(body: Mapping[str, Any]) -> str:
    """Why a diagnosis selected no case: failures without gold context, or no failure."""
    summary = body["summary"]
    if summary["excluded"]:
        return "no failed case declares gold context"
    criterion = body["criterion"]
    if summary.get("no_verdict") or summary.get("unfinished"):
        return f"no case with a verdict on {criterion} failed in the parent run"
    return f"no case failed {criterion} in the parent run"


def reused_lines(ledger: Ledger, body: DiagnosisBody) -> list[str]:
    """A line for each child run that read generations from the stage cache (else none):
    those answers were observed by an earlier run, not by this diagnosis."""
    from oloproof.diagnosis.derive import reused_generations

    return [reused.line for reused in reused_generations(ledger, body)]


def control_line(body: Mapping[str, Any]) -> str:
    """How many selected cases passed under the control (in any repeat, with repeats)."""
    summary = body["summary"]
    repeats = body.get("repeats", 1)
    n = summary["selected"]
    if repeats == 1:
        return (
            f"Control: {summary['control_passed']} of {n} passed when re-executed without the "
            "intervention"
        )
    return (
        f"Control: {summary['control_passed']} of {n} passed in at least one of {repeats} "
        "re-executions without the intervention"
    )


def recovered_line(body: Mapping[str, Any], label: str) -> str:
    """The recovered count; with repeats, how many repeats each recovered case passed in."""
    summary = body["summary"]
    line = f"Recovered under {label}: {summary['recovered']} of {summary['selected']}"
    repeats = body.get("repeats", 1)
    spread = summary.get("recovered_in") or []
    if repeats > 1 and spread:
        line += "; " + ", ".join(
            f"{s['cases']} recovered in {s['passes']} of {repeats}" for s in spread
        )
    return line


def budget_lines(body: Mapping[str, Any], label: str) -> list[str]:
    """The cases whose admitted relevant passage the budget dropped again (none: no line)."""
    summary = body["summary"]
    count = summary.get("budget_dropped") or 0
    if not count:
        return []
    lines = [
        f"Undone by the token budget: {count} of {summary['selected']}, a relevant passage "
        f"admitted under {label} was dropped by token_budget ({dg.BUDGET_DROPPED})"
    ]
    intervention = body["intervention"]
    if intervention["kind"] == dg.TOP_K:
        lines.append(
            f"Candidate experiment: a larger token budget at top-k {intervention['top_k']} "
            f"(--intervention token-budget --token-budget N --top-k {intervention['top_k']}). "
            "This is a hypothesis to test, not an established cause."
        )
    else:
        lines.append(
            "Candidate experiment: a larger token budget. This is a hypothesis to test, not an "
            "established cause."
        )
    return lines


def _replay_lines(diagnosis: Diagnosis) -> list[str]:
    body = diagnosis.body
    summary = body["summary"]
    label = dg.intervention_label(body["intervention"])
    # The replay's own UNRESOLVED cases follow its recoveries, before any carried labels: a
    # reranker that never ran reads "UNRESOLVED: 4 of 4", not only "0 of 4" recovered.
    lines = [control_line(body), recovered_line(body, label), *label_lines(summary, "unresolved")]
    budget = budget_lines(body, label)
    if diagnosis.carried is None:
        lines.extend(budget)
        lines.append("No gold-context diagnosis of this run yet; run one to label the cases.")
        return lines
    carried = diagnosis.carried["summary"]
    confirmed = (
        f"Confirmed under {label}: {summary['confirmed']} of {summary['ranked_out']} "
        "RANKED_OUT cases also recovered"
    )
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


def case_lines(ledger: Ledger, body: DiagnosisBody) -> Iterator[str]:
    """One line per case, in case-id order (what ``oloproof inspect DIAGNOSIS`` prints), read
    one page at a time."""
    from oloproof.diagnosis.derive import diagnosis_cases

    label = dg.intervention_label(body["intervention"])
    repeats = body.get("repeats", 1)
    for case in diagnosis_cases(ledger, body):
        where = f"strength {case['strength']}, best relevant position {case['position']}"
        moved = case.get("intervention_position")
        if moved is not None and moved != case["position"]:
            where += f", {moved} under {label}"
        passes = _passes(case, repeats)
        if "label" in case:
            outcome = f"{case['label']}, {case['reason']}"
            if passes:
                outcome += f", {passes}"
            yield f"{printable(case['case_id'])}: {outcome}, {where}"
            continue
        gold = case.get("gold")
        carried = (
            f"; gold context: {gold['label']}, {gold['reason']}"
            if gold
            else "; no gold-context label"
        )
        result = RESULTS.get(case["result"], f"UNRESOLVED, {case['result']}")
        if passes:
            result = passes if case["result"] == dg.RECOVERED else f"{result} ({passes})"
        dropped = case.get("budget_dropped") or []
        if dropped:
            at = ", ".join(str(p) for p in dropped)
            where += f"; {dg.BUDGET_DROPPED} (position {at})"
        yield f"{printable(case['case_id'])}: under {label}: {result}, {where}{carried}"


def _passes(case: Mapping[str, Any], repeats: int) -> str:
    """With repeats: ``recovered in k of K`` for a recovery, the control's passes for an
    unstable case (else nothing)."""
    if repeats == 1 or "intervention_passes" not in case:
        return ""
    if case["strength"] == dg.INTERVENTION_RECOVERY:
        return f"recovered in {case['intervention_passes']} of {repeats}"
    if case["strength"] == dg.CONTROL_RECOVERY:
        return f"the control passed in {case['control_passes']} of {repeats}"
    return ""


def excluded_lines(ledger: Ledger, address: str, body: DiagnosisBody) -> Iterator[str]:
    """Each Excluded line ``diagnose`` printed, with the cases behind it indented under it."""
    for exclusion in scope.exclusions(ledger, address, body):
        yield exclusion.line
        ids = exclusion.ids_line()
        if ids is not None:
            yield f"  {ids}"


def _render_diagnosis(ledger: Ledger, address: str, event: Event, as_json: bool) -> int:
    from oloproof.bodies import diagnosis_body

    body = diagnosis_body(event)
    if as_json:
        from oloproof.diagnosis.derive import diagnosis_excluded, reused_json
        from oloproof.events import plain

        data = {
            "address": address,
            "type": event.type,
            "schema": event.schema,
            "body": plain(event.body),
            "refs": list(event.refs),
            # The Excluded lines name a bounded few cases and promise that --json lists them
            # all, while the body holds only the addresses of their pages.
            "excluded": [plain(record) for record in diagnosis_excluded(ledger, body)],
            **reused_json(ledger, body),
        }
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    printed = False
    for line in itertools.chain(stopped_lines(body), case_lines(ledger, body)):
        typer.echo(line)
        printed = True
    if not printed:
        typer.echo("No case was selected.")
    for line in itertools.chain(excluded_lines(ledger, address, body), reused_lines(ledger, body)):
        typer.echo(line)
    return 0


def stopped_lines(body: Mapping[str, Any]) -> list[str]:
    """The line a diagnosis whose child runs did not all finish opens with (else none)."""
    state = body.get("state", dg.COMPLETE)
    if state == dg.COMPLETE:
        return []
    return [
        f"{state.capitalize()}: {body.get('reason')}; cases it did not reach are UNRESOLVED "
        "(not observed)"
    ]


RENDERERS[ev.DIAGNOSIS] = _render_diagnosis


@app.command("diagnose")
def diagnose_command(
    run: str | None = typer.Argument(
        None, help="The run whose failed cases to diagnose (id, ref or address)."
    ),
    intervention: str | None = typer.Option(
        None, "--intervention", help="gold-context, top-k, reranker or token-budget."
    ),
    criterion: str | None = typer.Option(
        None, "--criterion", help="The criterion whose failed cases are re-executed."
    ),
    top_k: int | None = typer.Option(
        None, "--top-k", help="The cut to try (top-k; optional with token-budget)."
    ),
    reranker: str | None = typer.Option(
        None, "--reranker", help="module:function that reorders candidates (reranker only)."
    ),
    token_budget: int | None = typer.Option(
        None, "--token-budget", help="The token budget to try (token-budget only)."
    ),
    repeats: int = typer.Option(
        1,
        "--repeats",
        help="Run the intervention and its control this many times per case (for systems "
        "that do not answer the same way twice).",
    ),
    reuse_generations: bool = typer.Option(
        False,
        "--reuse-generations",
        help="Let the intervention take the generation an earlier run stored for its exact "
        "context instead of generating again (the control always generates afresh; not with "
        "--repeats).",
    ),
    verify: str | None = typer.Option(
        None, "--verify", help="Re-derive a stored diagnosis from the ledger and compare."
    ),
    engine: str | None = typer.Option(
        None,
        "--engine",
        help="Where the child runs execute (default: the engine the diagnosed run recorded): "
        "local, ray, or a Ray cluster's address (auto, ray://HOST:PORT, HOST:PORT).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Re-execute a run's failed cases under an intervention, beside a control.

    Labels each case with the stage its failure is associated with; it never claims a cause.

    Exit code: 0 whatever the diagnosis finds, 2 bad input.
    With --verify: 0 when the ledger re-derives the same, 1 when it does not.

    Example: oloproof diagnose latest --intervention gold-context --criterion answer_correct
    """
    ledger = project_ledger(only_reads=verify is not None)
    if verify is not None:
        if run is not None or intervention is not None or criterion is not None:
            raise ConfigError("--verify takes a diagnosis id alone")
        raise typer.Exit(_verify(ledger, verify, as_json))
    if run is None:
        raise ConfigError("name the run to diagnose (or use --verify DIAGNOSIS_ID)")
    if intervention is None:
        raise ConfigError(f"--intervention is required ({', '.join(dg.INTERVENTIONS)})")
    if criterion is None:
        raise ConfigError("--criterion is required: the criterion whose failures to diagnose")
    from oloproof.diagnosis.run import diagnose

    note_latest(ledger, run)
    diagnosis = diagnose(
        ledger,
        run,
        intervention=intervention,
        criterion=criterion,
        top_k=top_k,
        reranker=reranker,
        token_budget=token_budget,
        repeats=repeats,
        engine=engine,
        reuse_generations=reuse_generations,
    )
    if as_json:
        typer.echo(json.dumps(diagnosis.to_json(ledger), indent=2, ensure_ascii=False))
    else:
        typer.echo("\n".join(diagnosis_lines(ledger, diagnosis)))


def _verify(ledger: Ledger, text: str, as_json: bool) -> int:
    from oloproof.diagnosis.audit import verify_diagnosis
    from oloproof.diagnosis.derive import load_diagnosis

    diagnosis = load_diagnosis(ledger, text)
    differences = verify_diagnosis(ledger, diagnosis.address)
    if as_json:
        typer.echo(
            json.dumps(
                {"address": diagnosis.address, "ok": not differences, "differences": differences},
                indent=2,
            )
        )
    elif differences:
        typer.echo(f"Diagnosis {diagnosis.address} does not match what the ledger re-derives:")
        for difference in differences:
            typer.echo(f"  {difference}")
    else:
        typer.echo(
            f"Diagnosis {diagnosis.address}: every label and count re-derives from the "
            "parent run, the child runs and the carried labels"
        )
    return 1 if differences else 0
