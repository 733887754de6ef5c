"""``oloproof.evaluate``: one call that runs a project and returns its report.

What ``oloproof run`` does, from Python: read the project file and everything it names, run the
system over the cases (or a subset, each case ``repeats`` times), judge, decide the policy,
record it all in the project's ledger, and return the ``RunReport`` (plain data:
``to_json()``, ``to_dataframe()`` with pandas installed). Bad input raises an
``OloproofError`` before anything is written, as the command exits 2; so does an argument of
the wrong type or out of the range the command takes, named (``evaluate(): limit is ...``).
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ledger.codec import INT_MAX
from oloproof import redaction
from oloproof.config import MAX_CONCURRENCY
from oloproof.errors import ConfigError
from oloproof.report import RunReport
from oloproof.runner import execute_run, plan_run
from oloproof.store import open_project_ledger
from oloproof.subset import Selection, parse_filter

MAX_REPEATS = 1000  # oloproof.cli.arguments.MAX_REPEATS: what ``oloproof run --repeats`` takes

_WHERE = "evaluate()"


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
    if not isinstance(use_cache, bool):
        raise ConfigError(f"use_cache is True or False, not {_shown(use_cache)}", where=_WHERE)
    args = _Arguments.checked(config, policy, limit, sample, seed, filters, repeats, concurrency)
    # The values the project's ``secrets:`` names are kept out until its run is recorded, and
    # no longer: a project evaluated next in this process may rightly answer one of them.
    with redaction.project_scope():
        plan = plan_run(
            args.config, policy_path=args.policy, concurrency=args.concurrency
        ).restrict(args.selection, args.repeats)
        with open_project_ledger(plan.base_dir) as ledger:
            run = execute_run(ledger, plan, use_cache=use_cache, use_stage_cache=use_cache)
            outcome = aio.run(run)
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
            None if value is None else _count(name, value, what, low)
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
        chosen = tuple(parse_filter(text) for text in _filters(filters))
        return _Arguments(
            config=_path("config", config, "the path of a project file"),
            policy=None if policy is None else _path("policy", policy, "the path of a policy file"),
            selection=Selection(limit, sample, seed, chosen),
            repeats=_count("repeats", repeats, "how many times each case executes", 1, MAX_REPEATS),
            concurrency=None
            if concurrency is None
            else _count(
                "concurrency", concurrency, "how many cases run at once", 1, MAX_CONCURRENCY
            ),
        )


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _count(name: str, value: object, what: str, low: int, high: int = INT_MAX) -> int:
    """``value`` as an int from ``low`` to ``high``; a numpy integer is one, a bool is not."""
    too_large = False
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        number = int(value)
        if low <= number <= high:
            return number
        too_large = number > INT_MAX
    span = f", {low} or more" if high == INT_MAX else f" from {low} to {high}"
    said = f"{name} is {what} (an int{span}), not {_shown(value)}"
    raise ConfigError(f"{said} (larger than a run records)" if too_large else said, where=_WHERE)


def _filters(filters: object) -> Sequence[str]:
    said = "filters is a list of 'metadata.KEY=VALUE' strings"
    if isinstance(filters, str):  # iterated, it would be one filter a character
        raise ConfigError(f"{said}, not one str: give [{filters!r}]", where=_WHERE)
    if not isinstance(filters, Sequence):
        raise ConfigError(f"{said}, not {_shown(filters)}", where=_WHERE)
    for item in filters:
        if not isinstance(item, str):
            raise ConfigError(f"{said}; it holds {_shown(item)}", where=_WHERE)
    return filters


def _path(name: str, value: object, what: str) -> Path:
    if isinstance(value, (str, os.PathLike)):
        return Path(value)
    kind = "None" if value is None else type(value).__name__
    if value is not None:
        kind = f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"
    optional = " or None" if name == "policy" else ""
    raise ConfigError(
        f"{name} is {what} (a str or os.PathLike){optional}, not {kind}", where=_WHERE
    )
