"""``oloproof ledger compact``: keep the results that matter, drop the rest of the history.

What is kept, from the selectors given (``--keep`` and ``--keep-last``):

- each event named by ``--keep`` (a run id, ``latest``, any address or prefix: a run, a
  comparison, a diagnosis, a calibration), and the ``--keep-last N`` newest top-level runs;
- everything those need, as an archive of them would carry it (``oloproof.archiving``): a
  run's case results, executions, stage outputs, judgments, run ends, decisions, its diagnoses
  and their child runs; a comparison's or a diagnosis's runs;
- every comparison whose two runs are both kept, and every diagnosis of a kept run;
- every calibration: calibrations are small, and a judge that loses its calibration loses its
  standing in the gates of runs still to come;
- the refs that point at kept events (a dropped run's id goes with it).

What is kept is found through the ledger's indexes and its events' links, and what is not kept
is gone for good: so a ledger whose indexes disagree with its events (a damaged page hiding a
run, its decision, a comparison or a calibration from them) is refused before anything is
chosen, naming ``oloproof ledger rebuild-indexes``. The ledger then verifies the new store with
Oloproof's own checks before it replaces the old one (``ledger.compact``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ledger import CompactSummary, Event, Ledger, LedgerError, Problem, compact_ledger
from ledger.verify import STALE_INDEX
from oloproof import events as ev
from oloproof.archiving import LINKS
from oloproof.audit import application_checks
from oloproof.errors import ConfigError, LedgerAccessError, UnknownIdError
from oloproof.latest import LATEST, listed_runs, resolve_latest
from oloproof.store import APPLICATION, LEDGER_DIR, open_project_ledger

COUNTED = (
    ("run", ev.RUN),
    ("diagnosis", ev.DIAGNOSIS),
    ("comparison", ev.COMPARISON),
    ("calibration", ev.CALIBRATION),
)


@dataclass(frozen=True)
class Compaction:
    """The ledger's summary, and how many events of each counted kind were there before and
    after (``{"run": (before, after), …}``)."""

    summary: CompactSummary
    kinds: dict[str, tuple[int, int]]


def compact_project(
    root: Path,
    keep: Iterable[str],
    keep_last: int | None,
    progress: Callable[[str], None] | None = None,
) -> Compaction:
    """Compact the ledger of the project in ``root`` (see the module)."""
    keep = list(keep)
    if not keep and not keep_last:
        raise ConfigError("say what to keep: --keep ID (any number of times) or --keep-last N")
    with open_project_ledger(root, create=False) as ledger:
        before = _kinds(ledger)
        for text in keep:  # every selector names something, before anything is done
            _resolve(ledger, text)
        _indexes_whole(ledger)

    def choose(ledger: Ledger) -> list[str]:
        return _roots(ledger, keep, keep_last)

    def checks(ledger: Ledger) -> Iterable[Problem]:
        return application_checks(ledger)

    try:
        summary = compact_ledger(
            root / LEDGER_DIR,
            choose,
            app=APPLICATION,
            links=LINKS,
            checks=[checks],
            progress=progress,
        )
    except LedgerError as exc:
        raise LedgerAccessError(str(exc)) from None
    with open_project_ledger(root, create=False) as ledger:
        after = _kinds(ledger)
    return Compaction(summary, {k: (before[k], after[k]) for k in before})


def _indexes_whole(ledger: Ledger) -> None:
    """Refuse a ledger whose indexes disagree with its events (see the module). Its other
    problems (a corrupt event, a broken chain, a damaged store) are refused as compaction
    meets them, each in a sentence of its own."""
    stale = [p for p in ledger.verify().problems if p.kind == STALE_INDEX]
    if stale:
        raise LedgerAccessError(
            f"the ledger at {ledger.path} was not compacted: its indexes disagree with its "
            f"events ({stale[0]}), so what it would keep cannot be told from them; rebuild "
            "them with: oloproof ledger rebuild-indexes, then compact it"
        )


def _kinds(ledger: Ledger) -> dict[str, int]:
    return {name: len(ledger.lookup("type", kind)) for name, kind in COUNTED}


def _resolve(ledger: Ledger, text: str) -> str:
    if text == LATEST:  # the run it means (``oloproof.latest``), not whatever its ref holds
        return resolve_latest(ledger)
    try:
        return ledger.resolve(text)
    except LedgerError as exc:
        raise UnknownIdError(f"--keep {text}: {exc}") from None


def _roots(ledger: Ledger, keep: list[str], keep_last: int | None) -> list[str]:
    """The addresses to keep: the selectors', then the comparisons, diagnoses and
    calibrations kept with them (see the module)."""
    roots = [_resolve(ledger, text) for text in keep]
    if keep_last:
        # Through ``listed_runs``: a run a damaged index page hides would not be among the
        # newest, and compaction would drop its events for good.
        top = [(a, e) for a, e in listed_runs(ledger) if e.body.get("parent") is None]
        roots += [a for a, _ in reversed(top[-keep_last:])]
    runs: set[str] = set()
    for event in ledger.get_many(roots):
        runs.update(_runs_named(event))
    for run_id in sorted(runs):  # diagnoses of kept runs travel with them: so do their children
        for _, diagnosis in ledger.lookup_events("diagnoses", run_id):
            runs.update(_runs_named(diagnosis))
    for address, comparison in ledger.events(ev.COMPARISON):
        if _runs_named(comparison) <= runs:
            roots.append(address)
    roots += [address for address, _ in ledger.events(ev.CALIBRATION)]
    return list(dict.fromkeys(roots))


def _runs_named(event: Event) -> set[str]:
    """The run ids an event is or names: a run, a diagnosis's parent and children, a
    comparison's two runs."""
    body = event.body
    if event.type == ev.RUN:
        return {body["run_id"]}
    if event.type == ev.DIAGNOSIS:
        return {body["run_id"], *(c["run_id"] for c in body.get("child_runs", []))}
    if event.type == ev.COMPARISON:
        return {body["candidate"]["run_id"], body["baseline"]["run_id"]}
    return set()
