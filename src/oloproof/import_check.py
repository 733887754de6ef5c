"""What ``oloproof ledger import`` says of an archive beyond what the ledger itself checks: the
runs it gives a second result for one of their cases.

A run writes each case once. The same run holds two different results for a case only when it
went on in two places: two copies of a project each resumed it, or an archive made while it
was still running was imported and the run resumed here, and then the archive of the run as it
went on elsewhere is imported. The import is sound (``docs/ledger.md``, "one result a case":
every command counts the first result and ``verify`` names the second), but the events it
brings for those cases are ones no report will count, so the command says so rather than
report them as imported like any other.
"""

from __future__ import annotations

from pathlib import Path

from ledger import Ledger, LedgerError, open_archive
from oloproof import events as ev
from oloproof.metrics import SeenCases, case_result_body
from oloproof.store import APPLICATION


def second_results(ledger: Ledger, archive: Path) -> dict[str, list[str]]:
    """The case ids, by run id, of the case results ``archive`` holds and ``ledger`` does not,
    for cases the ledger already holds another result for in that run. Empty when the archive
    does not open: the import's own checks, which know what the ledger holds, then say what
    is wrong with it."""
    if next(ledger.events(ev.RUN), None) is None:  # no run here: no case to hold twice
        return {}
    held: dict[str, SeenCases] = {}
    found: dict[str, list[str]] = {}
    try:
        reader = open_archive(archive, APPLICATION)
    except LedgerError:
        return {}
    with reader:
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
