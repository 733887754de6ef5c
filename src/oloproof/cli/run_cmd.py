"""``oloproof run``: execute, judge, decide and print the report."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ledger import Ledger, new_ulid
from oloproof.callargs import MAX_REPEATS, OPTIONS
from oloproof.cli import style
from oloproof.cli.interrupted import interrupted_status
from oloproof.cli.main import app
from oloproof.cli.project import config_path, project_ledger
from oloproof.cli.render import dry_run_lines, fitted, run_report_lines
from oloproof.errors import ConfigError
from oloproof.store import open_project_ledger

if TYPE_CHECKING:
    from oloproof.cli.progress import LiveTally
    from oloproof.dry_run import DryRun
    from oloproof.report import RunReport
    from oloproof.runner import RunOutcome, RunPlan
    from oloproof.subset import Selection


@app.command("run")
def run_command(
    config: Path | None = typer.Option(
        None,
        "--config",
        help="The project file (default: the oloproof.yaml of the project this folder is in, "
        "found by walking up from here).",
    ),
    policy: Path | None = typer.Option(None, "--policy", help="A policy file (overrides config)."),
    concurrency: int | None = typer.Option(
        None,
        "--concurrency",
        min=1,
        max=10_000,  # oloproof.config.MAX_CONCURRENCY (not imported: --help stays light)
        help="Cases at once (default: the config's, else 8).",
    ),
    no_cache: bool = typer.Option(
        False,
        "--no-cache",
        help="Execute every case again, every stage of a staged system included (judgments of "
        "an execution identical to a recorded one are still reused).",
    ),
    resume: str | None = typer.Option(None, "--resume", help="Finish an interrupted run."),
    engine: str | None = typer.Option(
        None,
        "--engine",
        help="Where the cases execute (overrides the config's engine): local; ray (the "
        "config's Ray settings, by default a Ray instance started on this machine); or a Ray "
        "cluster's address: auto, ray://HOST:PORT or HOST:PORT.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Plan only: say how many cases (and retrievals) would execute and why, and how "
        "many calls each judge would make after the caches, then exit 0. Nothing runs and "
        "nothing is recorded.",
    ),
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="Run only the first N cases (after any --filter)."
    ),
    sample: int | None = typer.Option(
        None,
        "--sample",
        min=1,
        help="Run N cases drawn at random (after any --filter); the run records the draw.",
    ),
    seed: int | None = typer.Option(
        None,
        "--seed",
        help="The seed of --sample: the same seed draws the same cases (default: a new seed, "
        "printed and recorded).",
    ),
    filters: list[str] = typer.Option(
        [],
        "--filter",
        metavar="metadata.KEY=VALUE",
        help="Run only the cases whose metadata matches; repeat it: the same key means either "
        "value, different keys must all match.",
    ),
    repeats: int = typer.Option(
        1,
        "--repeats",
        min=1,
        max=MAX_REPEATS,
        help="Execute each case K times (for a system that is not deterministic); each case's "
        "verdicts become its mean over the K, and the case stays the unit of every interval.",
    ),
    slices: bool = typer.Option(
        False, "--slices", help="List every slice row, however long the slice table is."
    ),
    junit: Path | None = typer.Option(
        None, "--junit", help="Also write a JUnit XML report to FILE: one test per rule."
    ),
    junit_cases: bool = typer.Option(
        False,
        "--junit-cases",
        help="With --junit: also one test per case; a case that failed, errored or lacks a "
        "verdict fails its test.",
    ),
    summary: Path | None = typer.Option(
        None,
        "--summary",
        help="Also write a Markdown summary to FILE (a pull request comment, or "
        "$GITHUB_STEP_SUMMARY).",
    ),
) -> None:
    """Run the system over every case, judge the outputs and decide the gate.

    Exit code: 0 the gate passes (or no policy, or --dry-run), 1 a rule FAILed, 3 the gate
    blocks without a FAIL, 2 bad input.

    Example: oloproof run --sample 50 --seed 7 --junit report.xml --summary summary.md
    """
    from oloproof.cli.arguments import check_input_file
    from oloproof.cli.ci import check_paths, reports_if_stopped
    from oloproof.runner import plan_run

    for given in (config, policy):
        if given is not None:
            check_input_file(given, recorded=True)
    if dry_run and junit is None and summary is None and not junit_cases:
        if resume is not None:
            raise ConfigError("--dry-run plans a new run; it cannot be combined with --resume")
        choose = _selection(limit, sample, seed, filters)
        with style.user_output_aside():  # the system's module is imported from here on
            plan = plan_run(
                config_path(config), policy_path=policy, concurrency=concurrency, engine=engine
            )
            planned = _dry_run(plan.restrict(choose, repeats, spelled=OPTIONS), no_cache)
        out = style.report_out()
        if as_json:
            typer.echo(json.dumps(planned.to_json(), indent=2), file=out)
        else:
            typer.echo("\n".join(dry_run_lines(planned)), file=out)
        return
    check_paths(junit, summary)  # refused before the run, not after it
    # Absolute from here on: the system's code runs in this process, and one that changes the
    # working directory would have the reports written (or an old one left) elsewhere.
    junit, summary = (None if path is None else path.absolute() for path in (junit, summary))
    with reports_if_stopped(junit, summary, "run"):
        if dry_run:  # it writes no report: one an earlier run left would be read as its own
            raise ConfigError(
                "--dry-run plans a run and writes no report; it cannot be combined with "
                "--junit, --summary or --junit-cases"
            )
        if junit_cases and junit is None:
            raise ConfigError("--junit-cases adds cases to the --junit file; give --junit FILE")
        choose = _selection(limit, sample, seed, filters)
        _check_resume(resume, choose, repeats, policy)
        with style.user_output_aside():
            ledger, plan, resume_args = _planned(
                resume, config, policy, concurrency, engine, (choose, repeats)
            )
            show_progress = sys.stderr.isatty() and not as_json
            report = _execute(ledger, plan, no_cache, resume_args, show_progress).report
        _ci_files(ledger, report, junit, junit_cases, summary)
    style.decided(report.exit_code)
    out = style.report_out()
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2), file=out)
    else:
        typer.echo(fitted(run_report_lines(report, show_slices=slices)), file=out)
    raise typer.Exit(report.exit_code)


def _check_resume(resume: str | None, choose: Selection, repeats: int, policy: Path | None) -> None:
    if resume is None:
        return
    if not choose.everything:
        raise ConfigError("--resume finishes a run with the cases it chose; give no subset")
    if repeats > 1:
        raise ConfigError(
            "--resume finishes a run with the repeats it started with; give no --repeats"
        )
    if policy is not None:
        raise ConfigError(
            "--resume finishes a run under the policy it started with; give no --policy"
        )


def _planned(
    resume: str | None,
    config: Path | None,
    policy: Path | None,
    concurrency: int | None,
    engine: str | None,
    subset: tuple[Selection, int],
) -> tuple[Ledger, RunPlan, tuple[str, str, Mapping[str, Any]] | None]:
    """The ledger and plan of a new run (of the cases and repeats ``subset`` chooses), or of
    the run ``resume`` names, with what resuming it needs."""
    from oloproof.resuming import resume_plan
    from oloproof.runner import plan_run, refused_policy

    if resume is None:
        plan = plan_run(
            config_path(config), policy_path=policy, concurrency=concurrency, engine=engine
        ).restrict(*subset, spelled=OPTIONS)  # refused before the ledger is made
        return open_project_ledger(plan.base_dir), plan, None
    # A --config names the project whose run is resumed, as it names a new run's.
    ledger = (
        project_ledger() if config is None else open_project_ledger(config.parent, create=False)
    )
    plan, stored = resume_plan(
        ledger, resume, concurrency=concurrency, engine=engine, config=config
    )
    refused = refused_policy(plan)
    if refused is not None:
        sys.stderr.write(
            f"warning: {stored.run_id} is decided by the policy it recorded, which this "
            f"release refuses for a new run: {refused}\n"
        )
    return ledger, plan, (stored.run_id, stored.address, stored.body)


def _selection(
    limit: int | None, sample: int | None, seed: int | None, filters: list[str]
) -> Selection:
    from oloproof.cli.arguments import check_recordable
    from oloproof.subset import Selection, parse_filter

    if seed is not None and sample is None:
        raise ConfigError("--seed chooses the cases of --sample; give --sample N with it")
    if seed is not None and seed < 0:
        # random.Random takes a seed's size alone: -7 would draw the cases 7 draws.
        raise ConfigError(f"--seed {seed}: a seed is 0 or more ({-seed} draws what {seed} would)")
    for option, value in (("--limit", limit), ("--seed", seed)):
        check_recordable(option, value)
    if sample is not None and seed is None:
        import secrets

        seed = secrets.randbelow(2**31)  # recorded in the run and printed with its report
    return Selection(limit, sample, seed, tuple(parse_filter(f) for f in filters))


def _ci_files(
    ledger: Ledger,
    report: RunReport,
    junit: Path | None,
    junit_cases: bool,
    summary: Path | None,
) -> None:
    """Write the JUnit XML and Markdown files asked for (``oloproof.cli.ci``)."""
    if junit is None and summary is None:
        return
    from oloproof.cli.ci import run_junit, run_summary, write_file

    if junit is not None:
        write_file(junit, run_junit(ledger, report, with_cases=junit_cases))
    if summary is not None:
        write_file(summary, run_summary(report))


def _dry_run(plan: RunPlan, no_cache: bool) -> DryRun:
    from oloproof import aio  # here, not at the top: --help need not load asyncio
    from oloproof.dry_run import dry_run, open_ledger_for_reading

    try:
        ledger = open_ledger_for_reading(plan.base_dir)
        try:
            return dry_run(ledger, plan, use_cache=not no_cache)
        finally:
            if ledger is not None:
                ledger.close()
    finally:
        aio.run(plan.system.aclose())


def _execute(
    ledger: Ledger,
    plan: RunPlan,
    no_cache: bool,
    resume_args: tuple[str, str, Mapping[str, Any]] | None,
    show_progress: bool,
) -> RunOutcome:
    from oloproof import aio  # here, not at the top: --help need not load asyncio
    from oloproof.runner import execute_run

    # Made here, so an interrupt names this run: the newest run in the ledger may be another
    # process's, started after this one.
    run_id = resume_args[0] if resume_args is not None else f"run_{new_ulid()}"

    def execute(progress: LiveTally | None) -> RunOutcome:
        return aio.run(
            execute_run(
                ledger,
                plan,
                use_cache=not no_cache,
                use_stage_cache=not no_cache,
                resume=resume_args,
                progress=progress,
                run_id=run_id,
            )
        )

    try:
        if not show_progress:
            return execute(None)
        from oloproof.cli.progress import progress_line

        # The callback sets the total of what is left to run (all of it, unless resumed).
        with progress_line(len(plan.cases)) as tally:
            return execute(tally)
    except KeyboardInterrupt as exc:
        from oloproof.stored_runs import is_complete, latest_decision, latest_end

        if ledger.get_ref(run_id) is None:  # stopped while the engine started
            sys.stderr.write("interrupted before the run started; nothing was recorded\n")
        elif is_complete(latest_end(ledger, run_id)):
            # The signal came as the run wrote its end: nothing is left to resume (and
            # ``--resume`` would refuse it), but the command still ends interrupted.
            decided = " and decided" if latest_decision(ledger, run_id) is not None else ""
            sys.stderr.write(
                f"interrupted: run {run_id} is complete{decided} "
                f"(oloproof inspect {run_id} shows it)\n"
            )
        else:
            sys.stderr.write(
                "interrupted: finished cases are kept; "
                f"finish with: oloproof run --resume {run_id}\n"
            )
        raise typer.Exit(interrupted_status(exc)) from None
