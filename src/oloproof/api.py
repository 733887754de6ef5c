"""``oloproof.evaluate``: one call that runs a project and returns its report.

What ``oloproof run`` does, from Python: read the project file and everything it names, run the
system over the cases (or a subset, each case ``repeats`` times), judge, decide the policy,
record it all in the project's ledger, and return the ``RunReport`` (plain data:
``to_json()``, ``to_dataframe()`` with pandas installed). Bad input raises an
``OloproofError`` before anything is written, as the command exits 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from oloproof import redaction
from oloproof.errors import ConfigError
from oloproof.report import RunReport
from oloproof.runner import execute_run, plan_run
from oloproof.store import open_project_ledger
from oloproof.subset import Selection, parse_filter


def evaluate(
    config: str | Path = "oloproof.yaml",
    *,
    policy: str | Path | None = None,
    limit: int | None = None,
    sample: int | None = None,
    seed: int | None = None,
    filters: Sequence[str] = (),
    repeats: int = 1,
    use_cache: bool = True,
    concurrency: int | None = None,
) -> RunReport:
    """Run the project ``config`` names and return its report (the run is in its ledger).

    ``limit``, ``sample`` with ``seed`` and ``filters`` (``"metadata.KEY=VALUE"``) choose a
    subset as ``oloproof run`` does; ``repeats`` executes each case that many times. The gate's
    exit code is ``report.exit_code``; nothing here exits or prints.
    """
    import asyncio

    from oloproof import aio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # no loop runs in this thread: ``evaluate`` runs one of its own
    else:  # a notebook or an async program: its loop cannot run another inside it
        raise ConfigError(
            "evaluate() runs an event loop of its own, and this thread is running one already "
            "(a notebook, an async program): plan with plan_run(config) and await "
            "execute_run(open_project_ledger(plan.base_dir), plan) instead, or call evaluate "
            "in a thread: await asyncio.to_thread(evaluate, config)"
        )
    if sample is not None and seed is None:
        seed = 0  # a library call is reproducible by default; the seed is recorded in the run
    selection = Selection(limit, sample, seed, tuple(parse_filter(f) for f in filters))
    # The values the project's ``secrets:`` names are kept out until its run is recorded, and
    # no longer: a project evaluated next in this process may rightly answer one of them.
    with redaction.project_scope():
        plan = plan_run(
            Path(config),
            policy_path=Path(policy) if policy is not None else None,
            concurrency=concurrency,
        ).restrict(selection, repeats)
        with open_project_ledger(plan.base_dir) as ledger:
            run = execute_run(ledger, plan, use_cache=use_cache, use_stage_cache=use_cache)
            outcome = aio.run(run)
    return outcome.report
