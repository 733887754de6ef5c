"""What travels with an Oloproof event in an archive or a compacted ledger (``ledger.Links``).

Requirement: an archive of a run holds everything that reading the run back needs, so that in
an empty project ``runs``, ``inspect`` (the report, ``--case``, ``--failures``), ``diagnose``
and ``compare`` read it as they did where it was made, and ``verify`` finds nothing missing.
Refs already carry most of it (a case result names its run, execution and judgments; an
execution its stages; a judgment its execution; a decision its run, run_end and the
calibrations it relied on; a diagnosis its parent and child runs; a comparison both runs).
What a run does not name, and so what these links add for each run event:

- its case results (index ``run_cases``) and its run_ends and decisions (``run_meta``), which
  name the run rather than the other way round;
- its diagnoses (``diagnoses``), whose gold-context labels a later ``diagnose`` carries over,
  and with them their child runs;
- every calibration of each of its judges (``calibration``, by judge identity): a report
  corrects a judge metric with the calibration its decision relied on, else the newest;
- the ref named by its run id, so ``inspect RUN_ID`` works where it lands, and ``latest``
  when it points at the run, as a default: set where the project has no ``latest`` yet (an
  empty one), never moved where it has.

A comparison or a diagnosis brings its runs through its refs, and each run brings the above.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from ledger import Event, Links
from oloproof import events as ev


def follow(address: str, event: Event) -> Iterator[tuple[str, str]]:
    """The index entries whose events travel with ``event`` (see the module)."""
    if event.type != ev.RUN:
        return
    from oloproof.calibration import judge_identities

    run_id = event.body["run_id"]
    yield ("run_cases", run_id)
    yield ("run_meta", run_id)
    yield ("diagnoses", run_id)
    specs = [entry["spec"] for entry in event.body.get("evaluators", [])]
    for identity, _ in judge_identities(specs).values():
        yield ("calibration", identity)


def names(address: str, event: Event) -> Iterator[str]:
    """The refs that travel with ``event`` when they point at it: a run's id."""
    if event.type == ev.RUN:
        yield str(event.body["run_id"])


def defaults(address: str, event: Event) -> Iterator[str]:
    """The refs that travel with ``event`` as defaults when they point at it: ``latest``."""
    if event.type == ev.RUN:
        yield "latest"


LINKS: Final = Links(follow=follow, names=names, defaults=defaults)
