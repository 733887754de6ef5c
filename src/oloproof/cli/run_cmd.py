"""``oloproof run``: execute, judge, decide and print the report."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ledger import Ledger
from oloproof.cli.main import app
from oloproof.cli.render import dry_run_lines, run_report_lines
from oloproof.errors import ConfigError, Terminated
from oloproof.store import open_project_ledger

if TYPE_CHECKING:
    from oloproof.runner import RunOutcome, RunPlan


@app.command("run")
def run_command(
    config: Path = typer.Option(Path("oloproof.yaml"), "--config", help="The project file."),
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
) -> None:
    """Run the system over every case, judge the outputs and decide the gate.

    Exit code: 0 the gate passes (or no policy, or --dry-run), 1 a rule FAILed, 3 the gate
    blocks without a FAIL, 2 bad input.

    Example: oloproof run --config oloproof.yaml
    """
    from oloproof.runner import plan_run, resume_plan

    if dry_run:
        if resume is not None:
            raise ConfigError("--dry-run plans a new run; it cannot be combined with --resume")
        planned = plan_run(config, policy_path=policy, concurrency=concurrency, engine=engine)
        _dry_run(planned, no_cache, as_json)
        return
    if resume is not None:
        ledger = open_project_ledger(Path.cwd(), create=False)
        plan, stored = resume_plan(ledger, resume, concurrency=concurrency, engine=engine)
        resume_args = (stored.run_id, stored.address, stored.body)
    else:
        plan = plan_run(config, policy_path=policy, concurrency=concurrency, engine=engine)
        ledger = open_project_ledger(plan.base_dir)
        resume_args = None
    show_progress = sys.stderr.isatty() and not as_json
    outcome = _execute(ledger, plan, no_cache, resume_args, show_progress)
    if as_json:
        typer.echo(json.dumps(outcome.report.to_json(), indent=2))
    else:
        typer.echo("\n".join(run_report_lines(outcome.report)))
    raise typer.Exit(outcome.report.exit_code)


def _dry_run(plan: RunPlan, no_cache: bool, as_json: bool) -> None:
    from oloproof import aio  # here, not at the top: --help need not load asyncio
    from oloproof.dry_run import dry_run, open_ledger_for_reading

    try:
        ledger = open_ledger_for_reading(plan.base_dir)
        try:
            planned = dry_run(ledger, plan, use_cache=not no_cache)
        finally:
            if ledger is not None:
                ledger.close()
    finally:
        aio.run(plan.system.aclose())
    if as_json:
        typer.echo(json.dumps(planned.to_json(), indent=2))
    else:
        typer.echo("\n".join(dry_run_lines(planned)))


def _execute(
    ledger: Ledger,
    plan: RunPlan,
    no_cache: bool,
    resume_args: tuple[str, str, Mapping[str, Any]] | None,
    show_progress: bool,
) -> RunOutcome:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from oloproof import aio  # here, not at the top: --help need not load asyncio
    from oloproof import events as ev
    from oloproof.runner import execute_run, load_run

    total = len(plan.dataset.cases)
    before = ledger.latest("type", ev.RUN)
    try:
        if not show_progress:
            return aio.run(
                execute_run(
                    ledger,
                    plan,
                    use_cache=not no_cache,
                    use_stage_cache=not no_cache,
                    resume=resume_args,
                )
            )
        console = Console(stderr=True)
        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        ) as bar:
            task = bar.add_task("cases", total=total)
            return aio.run(
                execute_run(
                    ledger,
                    plan,
                    use_cache=not no_cache,
                    use_stage_cache=not no_cache,
                    resume=resume_args,
                    progress=lambda done, _total: bar.update(task, completed=done),
                )
            )
    except KeyboardInterrupt as exc:
        # The run just started is the newest run event (`latest` moves only when a run finishes).
        newest = ledger.latest("type", ev.RUN) if resume_args is None else resume_args[1]
        if newest == before and resume_args is None:  # stopped while the engine started
            sys.stderr.write("interrupted before the run started; nothing was recorded\n")
            raise typer.Exit(143 if isinstance(exc, Terminated) else 130) from None
        run_id = load_run(ledger, newest).run_id if newest else "?"
        sys.stderr.write(
            f"interrupted: finished cases are kept; finish with: oloproof run --resume {run_id}\n"
        )
        raise typer.Exit(143 if isinstance(exc, Terminated) else 130) from None
