"""``oloproof.evaluate``: one call that runs a project and returns its report.

What ``oloproof run`` does, from Python: read the project file and everything it names, run the
system over the cases (or a subset, each case ``repeats`` times), judge, decide the policy,
record it all in the project's ledger, and return the ``RunReport`` (plain data:
``to_json()``, ``to_dataframe()`` with pandas installed). Bad input raises an
``OloproofError`` before anything is written, as the command exits 2; so does an argument of
the wrong type or out of the range the command takes, named (``evaluate(): limit is ...``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ledger import new_ulid
from oloproof import redaction
from oloproof.callargs import MAX_REPEATS, Spelling, count, flag, path, shown
from oloproof.config import MAX_CONCURRENCY
from oloproof.errors import ConfigError
from oloproof.report import RunReport
from oloproof.runner import execute_run, plan_run
from oloproof.store import open_project_ledger
from oloproof.stored_runs import is_complete, latest_end
from oloproof.subset import Selection, parse_filter
from oloproof.systems.base import import_path_kept
from oloproof.yamlfile import refuse_unreadable

_WHERE = "evaluate()"
_SPELLED = Spelling(_WHERE)  # a subset's errors name evaluate's arguments, not run's options


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
    from oloproof import aio

    aio.refuse_running_loop(
        "evaluate()",
        "plan with plan_run(config) and await execute_run(open_project_ledger(plan.base_dir), "
        "plan) instead, or call evaluate in a thread: await asyncio.to_thread(evaluate, config)",
    )
    flag("use_cache", use_cache, where=_WHERE)
    args = _Arguments.checked(config, policy, limit, sample, seed, filters, repeats, concurrency)
    refuse_unreadable(args.config)  # resolved next: a loop of symbolic links raised RuntimeError
    # The values the project's ``secrets:`` names are kept out until its run is recorded, and
    # no longer: a project evaluated next in this process may rightly answer one of them.
    with redaction.project_scope(), import_path_kept(args.config.resolve().parent):
        plan = plan_run(
            args.config, policy_path=args.policy, concurrency=args.concurrency
        ).restrict(args.selection, args.repeats, spelled=_SPELLED)
        with open_project_ledger(plan.base_dir) as ledger:
            # Made here, so that an interrupt can name this run (the newest in the ledger may be
            # another process's).
            run_id = f"run_{new_ulid()}"
            run = execute_run(
                ledger, plan, use_cache=use_cache, use_stage_cache=use_cache, run_id=run_id
            )
            try:
                outcome = aio.run(run)
            except KeyboardInterrupt as exc:
                if is_complete(latest_end(ledger, run_id)):  # it came as the run ended
                    exc.add_note(f"{run_id} is complete; its report is stored")
                elif ledger.get_ref(run_id) is not None:  # else stopped before the run started
                    exc.add_note(
                        f"{run_id} was interrupted; its finished cases are kept. Finish it with: "
                        f"oloproof run --resume {run_id} (in {plan.base_dir})"
                    )
                raise
    return outcome.report


@dataclass(frozen=True)
class _Arguments:
    """``evaluate``'s arguments, checked each by name: unchecked, one would be taken for
    something else (``True`` as 1 case, ``"no"`` as true, a seed without a sample ignored) or
    fail deep inside (a str compared with an int, an integer the ledger cannot record)."""

    config: Path
    policy: Path | None
    selection: Selection
    repeats: int
    concurrency: int | None

    @staticmethod
    def checked(
        config: object,
        policy: object,
        limit: object,
        sample: object,
        seed: object,
        filters: object,
        repeats: object,
        concurrency: object,
    ) -> _Arguments:
        limit, sample, seed = (
            None if value is None else count(name, value, what, low, where=_WHERE)
            for name, value, what, low in (
                ("limit", limit, "a number of cases", 1),
                ("sample", sample, "a number of cases", 1),
                ("seed", seed, "the seed of sample's draw", 0),
            )
        )
        if seed is not None and sample is None:
            raise ConfigError(
                "seed chooses the cases of sample; give sample=N with it", where=_WHERE
            )
        if sample is not None and seed is None:
            seed = 0  # a library call is reproducible by default; the seed is recorded in the run
        chosen = tuple(parse_filter(text, _SPELLED) for text in _filters(filters))
        return _Arguments(
            config=path("config", config, "the path of a project file", where=_WHERE),
            policy=None
            if policy is None
            else path("policy", policy, "the path of a policy file", where=_WHERE, optional=True),
            selection=Selection(limit, sample, seed, chosen),
            repeats=count(
                "repeats",
                repeats,
                "how many times each case executes",
                1,
                MAX_REPEATS,
                where=_WHERE,
            ),
            concurrency=None
            if concurrency is None
            else count(
                "concurrency",
                concurrency,
                "how many cases run at once",
                1,
                MAX_CONCURRENCY,
                where=_WHERE,
            ),
        )


def _filters(filters: object) -> Sequence[str]:
    said = "filters is a list of 'metadata.KEY=VALUE' strings"
    if isinstance(filters, str):  # iterated, it would be one filter a character
        raise ConfigError(f"{said}, not one str: give [{filters!r}]", where=_WHERE)
    if not isinstance(filters, Sequence):
        raise ConfigError(f"{said}, not {shown(filters)}", where=_WHERE)
    for item in filters:
        if not isinstance(item, str):
            raise ConfigError(f"{said}; it holds {shown(item)}", where=_WHERE)
    return filters
