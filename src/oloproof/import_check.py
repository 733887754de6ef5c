"""What ``oloproof ledger import`` says of an archive beyond what the ledger itself checks: the
runs it gives a second result for one of their cases, a second run event of a run, and the
summaries of its runs, diagnoses and comparisons that their events do not give.

A run writes each case once. The same run holds two different results for a case only when it
went on in two places: two copies of a project each resumed it, or an archive made while it
was still running was imported and the run resumed here, and then the archive of the run as it
went on elsewhere is imported. The import is sound (``docs/ledger.md``, "one result a case":
every command counts the first result and ``verify`` names the second), but the events it
brings for those cases are ones no report will count, so the command says so rather than
report them as imported like any other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ledger import ArchiveReader, Ledger, LedgerError, Problem, open_archive
from ledger.address import format_address
from ledger.event import event_from_trusted
from oloproof import events as ev
from oloproof.audit import run_problems, verify_comparison
from oloproof.diagnosis.audit import stale_summary, verify_diagnosis
from oloproof.display import plural
from oloproof.errors import ConfigError
from oloproof.metrics import SeenCases, case_result_body
from oloproof.store import APPLICATION, misnamed_run


@dataclass
class Summaries:
    """The events of an archive that hold a summary ``verify`` re-derives: its runs (the run id
    of each run event, by address), its diagnoses and its comparisons (their addresses). As
    many as the archive holds runs, diagnoses and comparisons, not cases."""

    runs: dict[str, str] = field(default_factory=dict)
    diagnoses: list[str] = field(default_factory=list)
    comparisons: list[str] = field(default_factory=list)


def read_before_import(
    ledger: Ledger | None,
    archive: Path,
    check: Callable[[str, bytes], None] | None = None,
) -> tuple[dict[str, list[str]], Summaries]:
    """What the import says of ``archive`` that is read before it is written into ``ledger``
    (None: there is none yet, and it is made only if this passes): its second results
    (``second_results``) and the summaries it holds (for ``unsound_summaries``); a misnamed run
    ref is refused (``refuse_misnamed_refs``). The archive is opened, and so checked whole
    (``check`` given each event the ledger does not hold, as ``check_archive`` gives it),
    once for all three. Into a ledger, both empty when it does not open: the import's own
    checks, which know what the ledger holds, then say what is wrong with it; with none, what
    is wrong is raised here, before a ledger is made for it."""
    held = Summaries()
    try:
        reader = open_archive(archive, APPLICATION, _held_by(ledger), check)
    except LedgerError:
        if ledger is None:
            raise
        return {}, held
    with reader:
        for address, event in reader.events():  # one pass: each reads every event
            if event.type == ev.RUN:
                held.runs[address] = event.body["run_id"]
            elif event.type == ev.DIAGNOSIS:
                held.diagnoses.append(address)
            elif event.type == ev.COMPARISON:
                held.comparisons.append(address)
        refuse_misnamed_refs(archive, reader)  # before anything is written
        return (second_results(ledger, reader) if ledger is not None else {}), held


def one_run_event_a_run(ledger: Ledger | None, archive: Path) -> Callable[[str, bytes], None]:
    """A check of each event the import of ``archive`` is to write (``import_archive``'s
    ``check``, so it runs over the archive as it is streamed, before anything is written): a
    run event of a run id that ``ledger`` (None: none yet) or the archive already holds another
    run event of is refused. A run writes one run event, under its id's ref; a second of the
    same id (forged, or a run id made twice) was imported with every result linked to it, and
    `runs` listed the id twice while `inspect` counted those results as the run's. Memory: the
    run ids of the archive's new run events, and of the ledger's runs once one is met."""
    seen: dict[str, str] = {}
    held: dict[str, str] | None = None

    def check(address: str, data: bytes) -> None:
        nonlocal held
        event = event_from_trusted(data)
        if event.type != ev.RUN:
            return
        run_id = ev.upcast(address, event).body.get("run_id")
        if not isinstance(run_id, str):
            return  # a body the run's own reading refuses; not a second of anything
        if held is None:
            held = _runs_held(ledger)
        other, where = held.get(run_id), "this ledger"
        if other is None:
            other, where = seen.setdefault(run_id, address), "the archive"
        if other != address:
            raise ConfigError(
                f"will not import {archive}: it holds run event {address} of {run_id}, and "
                f"{where} already holds that run's run event {other}; a run has one run "
                "event, and the results linked to a second would be read as the run's; "
                "nothing was imported"
            )

    return check


def refuse_misnamed_refs(archive: Path, reader: ArchiveReader) -> None:
    """Refuse an archive (open in ``reader``) whose ref named by a run id names one of
    Oloproof's events other than that run's run event (``store.misnamed_run``; its refs name
    events it holds). Such a ref imported with exit 0, and every command that read the run by
    its id then refused it (``verify``'s ``MisnamedRef``), while the run it did name read as an
    import cut short."""
    for name, address in [*reader.info.refs.items(), *reader.info.default_refs.items()]:
        if not name.startswith(ev.RUN_ID_PREFIX):
            continue
        wrong = misnamed_run(name, reader.get(address))
        if wrong is not None:
            raise ConfigError(
                f"will not import {archive}: its ref {name!r} {wrong} ({address}); nothing "
                "was imported"
            )


def _runs_held(ledger: Ledger | None) -> dict[str, str]:
    """The address of each run event ``ledger`` holds, by run id (the first, for an id a ledger
    written before imports refused a second holds twice)."""
    found: dict[str, str] = {}
    for address, event in ledger.events(ev.RUN) if ledger is not None else ():
        run_id = event.body.get("run_id")
        if isinstance(run_id, str):
            found.setdefault(run_id, address)
    return found


def second_results(ledger: Ledger, reader: ArchiveReader) -> dict[str, list[str]]:
    """The case ids, by run id, of the case results the archive open in ``reader`` holds and
    ``ledger`` does not, for cases the ledger already holds another result for in that run."""
    if next(ledger.events(ev.RUN), None) is None:  # no run here: no case to hold twice
        return {}
    held: dict[str, SeenCases] = {}
    found: dict[str, list[str]] = {}
    for address, event in reader.events(ev.CASE_RESULT):
        if ledger.has(address):
            continue
        body = case_result_body(event)
        run_id = body["run_id"]
        if run_id not in held:
            held[run_id] = seen = SeenCases()
            for own in ledger.iter_lookup("run_cases", run_id):
                seen.add(case_result_body(ledger.get(own)))
        if body in held[run_id]:
            found.setdefault(run_id, []).append(body["case_id"])
    return found


def second_results_warning(found: dict[str, list[str]]) -> str:
    """One line per run of ``second_results``: which run, how many cases, the first few."""
    lines = []
    for run_id, cases in found.items():
        shown = ", ".join(repr(c) for c in cases[:3]) + (", …" if len(cases) > 3 else "")
        lines.append(
            f"warning: {run_id} already held a result for {len(cases)} of the cases this "
            f"archive brings ({shown}): the run went on both here and where the archive was "
            "made; its reports count the results it held, and `oloproof verify` names the "
            "others"
        )
    return "\n".join(lines)


def _held_by(ledger: Ledger | None) -> Callable[[bytes], bool] | None:
    """Whether ``ledger`` holds the event of a digest: an archive meant for it may link to its
    events rather than carry them, and would otherwise not open, leaving what it brings
    unread (a result linked to a second run event of a run's id, filling a run's missing
    cases, imported without a word)."""
    if ledger is None:
        return None
    return lambda digest: ledger.has(format_address(digest))


@dataclass
class Unsound:
    """What ``unsound_summaries`` found: the problems of each run, by run id, and the one
    problem of each diagnosis and each comparison."""

    runs: dict[str, list[Problem]] = field(default_factory=dict)
    diagnoses: list[Problem] = field(default_factory=list)
    comparisons: list[Problem] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.runs or self.diagnoses or self.comparisons)


def unsound_summaries(ledger: Ledger, held: Summaries) -> Unsound:
    """The problems ``verify`` would find in the summaries of ``held`` (as
    ``read_before_import`` gives) once imported into ``ledger``. A decision, a verdict copy, a
    diagnosis or a comparison changed in an archive hashes right and links right, so only
    re-deriving it shows it, and ``runs`` and ``inspect`` would otherwise show what it claims,
    a forged PASS included. Every summary the archive holds is checked, not only those it
    brought new events for: importing the archive again must not read as sound. A run that
    holds a second result for one of its cases went on in two places (``second_results``): the
    decision made where the archive was made counted other results than this ledger's, as
    ``verify`` says, so it is left out. Diagnoses and comparisons are checked as ``verify``
    checks them (they were not: a comparison's gate rewritten to pass imported with exit 0)."""
    found = Unsound()
    for address, run_id in held.runs.items():
        if _went_on_twice(ledger, run_id):
            continue
        problems = run_problems(ledger, address)
        if problems:
            found.runs[run_id] = problems
    for address in held.diagnoses:
        found.diagnoses += stale_summary(address, "diagnosis", verify_diagnosis(ledger, address))
    for address in held.comparisons:
        differences = verify_comparison(ledger, ledger.get(address))
        found.comparisons += stale_summary(address, "comparison", differences)
    return found


def _went_on_twice(ledger: Ledger, run_id: str) -> bool:
    """Whether ``run_id`` holds a second result for one of its cases."""
    seen = SeenCases()
    for address in ledger.iter_lookup("run_cases", run_id):
        body = case_result_body(ledger.get(address))
        if body in seen:
            return True
        seen.add(body)
    return False


def unsound_summaries_error(found: Unsound) -> str:
    """Each problem of ``unsound_summaries`` as ``verify`` prints it, then one sentence for the
    runs and one for the diagnoses and comparisons."""
    others = found.diagnoses + found.comparisons
    lines = [str(problem) for problems in found.runs.values() for problem in problems]
    lines += [str(problem) for problem in others]
    runs = len(found.runs)
    if runs:
        count = sum(len(problems) for problems in found.runs.values())
        lines.append(
            f"error: {runs} {plural(runs, 'run')} this archive holds ({', '.join(found.runs)}) "
            f"{'carries' if runs == 1 else 'carry'} {count} summary(ies) that its events "
            "do not give (above: a decision, or a case result's copy of a verdict, made or "
            "changed outside the run): "
            f"{'its' if runs == 1 else 'their'} gate and metrics as `runs` and `inspect` show "
            "them cannot be trusted. The events are kept, as evidence; `oloproof verify` names "
            "them"
        )
    if others:
        diagnoses, comparisons = len(found.diagnoses), len(found.comparisons)
        kinds = [f"{diagnoses} {'diagnosis' if diagnoses == 1 else 'diagnoses'}"] * bool(diagnoses)
        kinds += [f"{comparisons} {plural(comparisons, 'comparison')}"] * bool(comparisons)
        one = len(others) == 1
        it = "it" if one else "them"
        lines.append(
            f"error: {' and '.join(kinds)} this archive holds "
            f"({', '.join(str(problem.address) for problem in others)}) "
            f"{'carries a summary' if one else 'carry summaries'} that "
            f"{'its' if one else 'their'} runs do not give (above: a label, a count, a gate or "
            f"an interval made or changed outside {it}): what `inspect` shows of {it} cannot "
            "be trusted. The events are kept, as evidence; `oloproof verify` names them"
        )
    return "\n".join(lines)
