"""``oloproof diagnose``: re-execute a run's failed cases under an intervention, beside a control.

Also renders a diagnosis for ``oloproof inspect`` (one line per case). The count and label
lines are ``oloproof.diagnosis.lines``'s, which the viewer shows too. Only the light label, scope
and lines modules are imported at start-up; the runner and what it needs load when a command
runs.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import typer

from ledger import Event, Ledger
from oloproof import events as ev
from oloproof.cli import style
from oloproof.cli.inspect_cmd import RENDERERS, note_latest
from oloproof.cli.interrupted import interrupted_status
from oloproof.cli.main import app
from oloproof.cli.project import keep_out_declared, project_ledger
from oloproof.diagnosis import labels as dg
from oloproof.diagnosis import scope
from oloproof.diagnosis.lines import count_lines, stopped_lines, unjudged
from oloproof.display import printable
from oloproof.errors import ConfigError

if TYPE_CHECKING:
    from oloproof.bodies import DiagnosisBody
    from oloproof.diagnosis.derive import Diagnosis
    from oloproof.latest import StillRunning

# How a replay's result for one case reads (the UNRESOLVED reasons print as codes).
RESULTS = {dg.RECOVERED: "recovered", dg.STILL_FAILED: "still failed"}


def selection_lines(body: Mapping[str, Any]) -> list[str]:
    lines = [scope.selected_line(body["summary"])]
    return lines + [line for _, line in scope.exclusion_lines(body)]


def diagnosis_lines(ledger: Ledger, diagnosis: Diagnosis) -> list[str]:
    """What ``oloproof diagnose`` prints."""
    body = diagnosis.body
    lines = [*selection_lines(body), *stopped_lines(body), *count_lines(diagnosis)]
    lines.extend(reused_lines(ledger, body))
    lines.append(f"Diagnosis {diagnosis.address}")
    carried = diagnosis.carried["child_runs"] if diagnosis.carried is not None else []
    children = [*carried, *body["child_runs"]]
    if children:
        named = ", ".join(f"{c['label']} {c['run_id']}" for c in children)
        lines.append(f"Child runs: {named}")
    lines.append(f"Cases: oloproof inspect {diagnosis.address}")
    return lines


def reused_lines(ledger: Ledger, body: DiagnosisBody) -> list[str]:
    """A line for each child run that read generations from the stage cache (else none):
    those answers were observed by an earlier run, not by this diagnosis."""
    from oloproof.diagnosis.derive import reused_generations

    return [reused.line for reused in reused_generations(ledger, body)]


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
        passes, role = f"recovered in {case['intervention_passes']}", "intervention"
    elif case["strength"] == dg.CONTROL_RECOVERY:
        passes, role = f"the control passed in {case['control_passes']}", "control"
    else:
        return ""
    return f"{passes} of {repeats}{unjudged(case.get(f'{role}_unjudged'))}"


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
    keep_out_declared()
    ledger = project_ledger(only_reads=verify is not None)
    if verify is not None:
        # A setting given beside it would be ignored: the diagnosis is re-derived as recorded.
        given = [
            name
            for name, value in (
                ("RUN", run),
                ("--intervention", intervention),
                ("--criterion", criterion),
                ("--top-k", top_k),
                ("--reranker", reranker),
                ("--token-budget", token_budget),
                ("--repeats", None if repeats == 1 else repeats),
                ("--reuse-generations", reuse_generations or None),
                ("--engine", engine),
            )
            if value is not None
        ]
        if given:
            raise ConfigError(
                f"--verify takes a diagnosis id alone (and --json), not {', '.join(given)}: it "
                "re-derives the diagnosis as it was recorded"
            )
        raise typer.Exit(_verify(ledger, verify, as_json))
    if run is None:
        raise ConfigError("name the run to diagnose (or use --verify DIAGNOSIS_ID)")
    if intervention is None:
        raise ConfigError(f"--intervention is required ({', '.join(dg.INTERVENTIONS)})")
    if criterion is None:
        raise ConfigError("--criterion is required: the criterion whose failures to diagnose")
    from oloproof.cli.arguments import check_recordable, check_repeats
    from oloproof.diagnosis.labels import COMPLETE
    from oloproof.diagnosis.run import RECORDED_AS, Asked, diagnose_asked

    check_repeats(repeats)
    for option, value in (("--top-k", top_k), ("--token-budget", token_budget)):
        check_recordable(option, value)
    note_latest(ledger, run)
    try:
        with style.user_output_aside():  # the system's code runs again
            # As diagnose() does, with its errors naming the options given here.
            diagnosis = diagnose_asked(
                ledger,
                Asked(
                    run,
                    intervention,
                    criterion,
                    top_k=top_k,
                    reranker=reranker,
                    token_budget=token_budget,
                    repeats=repeats,
                    engine=engine,
                    reuse_generations=reuse_generations,
                ),
            )
    except KeyboardInterrupt as exc:
        # Said here, with what the diagnosis left recorded (the CLI's own handler says only
        # 'interrupted').
        notes: list[str] = getattr(exc, "__notes__", [])
        left = "; ".join(notes) or "no diagnosis was recorded"
        complete = f"{RECORDED_AS}{COMPLETE}:"
        again = (
            ""  # a signal after the diagnosis was recorded complete: nothing to do again
            if any(note.startswith(complete) for note in notes)
            else "; diagnose the run again for a complete one"
        )
        sys.stderr.write(f"interrupted: {left}{again}\n")
        raise typer.Exit(interrupted_status(exc)) from None
    running = _still_running(ledger, diagnosis.body)
    if running is not None:
        # Its unwritten cases count as never finished, as a crashed run's do: said, since the
        # run has not stopped.
        sys.stderr.write(
            f"note: {running.text()}; this diagnosis reads the cases written so far, and "
            "counts the others as never finished\n"
        )
    out = style.report_out()
    if as_json:
        data = {
            **diagnosis.to_json(ledger),
            "still_running": None if running is None else running.to_json(),
        }
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False), file=out)
    else:
        typer.echo("\n".join(diagnosis_lines(ledger, diagnosis)), file=out)


def _still_running(ledger: Ledger, body: DiagnosisBody) -> StillRunning | None:
    """The diagnosed run, if a live process is writing it now, with the cases the diagnosis
    read (more may be written by now)."""
    from oloproof.latest import still_running
    from oloproof.stored_runs import load_run

    running = still_running(ledger, load_run(ledger, body["run"]).body)
    read = body.get("parent_results")
    return running if running is None or read is None else replace(running, cases=read)


def _verify(ledger: Ledger, text: str, as_json: bool) -> int:
    from oloproof.diagnosis.audit import verify_diagnosis
    from oloproof.diagnosis.derive import load_diagnosis

    diagnosis = load_diagnosis(ledger, text)
    differences = verify_diagnosis(ledger, diagnosis.address, refuse=True)
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
