"""The viewer lists the same flipped cases as `oloproof compare --cases`, for runs made with
`--repeats` too.

The probe: a baseline and a candidate run with ``--repeats 3``, where case c0 passed every
repeat in the baseline and failed every one in the candidate. ``compare --cases`` listed it
(``c0  1.000 → 0.000  regressed``, and five more); the viewer's comparison page said "No paired
case changed its verdict", as did its static export: it read a flip from plain pass/fail
verdicts only, and a repeated case's verdict is the share of its repeats that passed. A case
whose repeats passed 3 of 3 times in one run and 1 of 3 in the other is not filed among the
failures of either, so the viewer, which looks for flips among the failures, could not find
it at all.

Both now list one set, checked against the cases worked out here by hand from the patterns:
the comparison's own data, the page served over HTTP and the static export. A ledger filed
before such cases were (``oloproof-indexes-5``) is refused by the viewer until refiled.
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

import pytest
from tests.support import oloproof, patterns_project
from tests.view.support import fetch, serving

from ledger import Event, open_ledger
from oloproof import events as ev
from oloproof.flips import flipped_cases
from oloproof.store import APPLICATION
from oloproof.view import open_viewer
from oloproof.view.data import comparison_page

# (baseline's steps, candidate's) of c0, c1, …; each run makes one call per step of a case
# (`--repeats 3`): p passes, f fails, e raises (a repeat without a verdict).
PATTERNS = [
    ("ppp", "fff"),  # 1 → 0: regressed
    ("ppp", "pff"),  # 1 → 1/3: regressed, though neither side failed as a whole
    ("fpf", "ppp"),  # 1/3 → 1: improved, though neither side failed as a whole
    ("ppf", "fff"),  # 2/3 → 0: regressed
    ("ppp", "ppe"),  # 1 → 2/3 .. 1: might not have moved, so not listed
    ("ppp", "pfe"),  # 1 → 1/3 .. 2/3: regressed whatever its errored repeat said
    ("fff", "pee"),  # 0 → 1/3 .. 1: improved whatever its errored repeats said
    ("pff", "fpe"),  # 1/3 → 1/3 .. 2/3: moved on its judged repeats alone: listed apart
    ("ppp", "ppp"),  # unchanged
    ("fff", "fff"),  # unchanged
    ("eee", "ppp"),  # errored in the baseline: not paired
    ("ppf", "pfp"),  # 2/3 → 2/3: unchanged
]
PREVIOUS_INDEXES = "oloproof-indexes-5"
"""The name of the indexing rules that filed a repeated case as failed by its combined verdicts
alone, not by the repeats it failed."""
POLICY = "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.05}\n"

Listed = set[tuple[str, str, str, str, str]]
"""Flips as (case id, metric, baseline's verdict, candidate's, direction)."""


def _listed(*flips: tuple[int, str, str, str]) -> Listed:
    return {(f"c{q}", "answer_correct", base, cand, way) for q, base, cand, way in flips}


# Worked out from PATTERNS: both runs repeated.
BOTH_REPEATED = _listed(
    (0, "1.000", "0.000", "regressed"),
    (1, "1.000", "0.333", "regressed"),
    (2, "0.333", "1.000", "improved"),
    (3, "0.667", "0.000", "regressed"),
    (5, "1.000", "0.500 (2 of 3 repeats judged)", "regressed"),
    (6, "0.000", "1.000 (1 of 3 repeats judged)", "improved"),
    (7, "0.333", "0.500 (2 of 3 repeats judged)", "unsettled"),
)
# The candidate against a baseline run once (its first step).
ONCE_BASELINE = _listed(
    (0, "pass", "0.000", "regressed"),
    (1, "pass", "0.333", "regressed"),
    (2, "fail", "1.000", "improved"),
    (3, "pass", "0.000", "regressed"),
    (5, "pass", "0.500 (2 of 3 repeats judged)", "regressed"),
    (6, "fail", "1.000 (1 of 3 repeats judged)", "improved"),
    (7, "pass", "0.500 (2 of 3 repeats judged)", "regressed"),
    (11, "pass", "0.667", "regressed"),
)


@dataclasses.dataclass(frozen=True)
class Compared:
    root: Path
    candidate: str
    baseline: str
    once: str
    both_repeated: str
    """The address of the comparison of the two repeated runs."""
    once_baseline: str
    """The address of the comparison of the repeated candidate with the baseline run once."""
    changed: str
    """The line `compare --cases` heads the changed cases of ``both_repeated`` with."""


def _run(root: Path, *args: str) -> str:
    done = oloproof("run", *args, cwd=root)
    assert done.code in (0, 1, 3), done.out + done.err
    return done.lines[0].split()[1]


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> Compared:
    root = patterns_project(tmp_path_factory.mktemp("flips") / "p", PATTERNS, policy=POLICY)
    baseline = _run(root, "--config", "baseline.yaml", "--repeats", "3")
    candidate = _run(root, "--repeats", "3")
    # Executed afresh, so that each case gives its first step.
    once = _run(root, "--config", "baseline.yaml", "--no-cache")
    both = oloproof("compare", candidate, baseline, "--cases", cwd=root)
    assert both.code == 0, both.out + both.err
    against_once = oloproof("compare", candidate, once, cwd=root)
    assert against_once.code == 0, against_once.out + against_once.err
    changed = next(line for line in both.lines if line.startswith("Changed cases:"))
    return Compared(
        root,
        candidate,
        baseline,
        once,
        both.lines[0].split()[1],
        against_once.lines[0].split()[1],
        changed,
    )


def _cli_flips(root: Path, address: str) -> Listed:
    shown = oloproof("inspect", address, "--json", cwd=root)
    assert shown.code == 0, shown.err
    return {
        (f["case_id"], f["metric"], f["baseline"], f["candidate"], f["direction"])
        for f in json.loads(shown.out)["flipped"]
    }


def _page_flips(page: str) -> Listed:
    """The rows of a comparison page's tables of flipped cases: the counted ones, and those
    listed apart (their last column says why)."""
    rows = re.findall(
        r'<tr class="flip (better|worse|apart)"><th scope="row"><a href="[^"]*">([^<]*)</a></th>'
        r"<td>([^<]*)</td><td>([^<]*)</td>(?:<td>([^<]*)</td>)?</tr>",
        page,
    )
    found: Listed = set()
    ways = {"better": "improved", "worse": "regressed"}
    for way, case_id, metric, change, why in rows:
        base, _, cand = html.unescape(change).partition(" → ")
        direction = ways.get(way, why.replace(" ", "_"))
        found.add((html.unescape(case_id), metric, base, cand, direction))
    return found


def test_compare_cases_lists_the_flips_worked_out_by_hand(compared: Compared) -> None:
    assert compared.changed == (
        "Changed cases: 2 improved, 4 regressed (counted neither way: 1 moved on its judged "
        "repeats alone, which its repeats without a verdict could undo)"
    )
    assert _cli_flips(compared.root, compared.both_repeated) == BOTH_REPEATED
    assert _cli_flips(compared.root, compared.once_baseline) == ONCE_BASELINE


def test_the_viewer_derives_the_same_flips_as_the_cli(compared: Compared) -> None:
    reader = open_viewer(compared.root)
    try:
        for address, expected in (
            (compared.both_repeated, BOTH_REPEATED),
            (compared.once_baseline, ONCE_BASELINE),
        ):
            page = comparison_page(reader, address)
            shown = {
                (f.case_id, f.metric, f.baseline, f.candidate, f.direction) for f in page.flips
            }
            cli = {
                (f.case_id, f.metric, f.baseline, f.candidate, f.direction)
                for f in flipped_cases(reader.ledger, page.body)
            }
            assert shown == cli == expected
    finally:
        reader.close()


def test_the_served_comparison_and_pair_pages_show_the_repeated_flips(
    compared: Compared,
) -> None:
    with serving(compared.root) as url:
        status, page = fetch(f"{url}/comparisons/{compared.both_repeated}")
        assert status == 200, page
        status, pair = fetch(f"{url}/comparisons/{compared.both_repeated}/cases/c5")
        assert status == 200, pair
        once_page = fetch(f"{url}/comparisons/{compared.once_baseline}")[1]
    assert _page_flips(page) == _cli_flips(compared.root, compared.both_repeated)
    assert _page_flips(once_page) == ONCE_BASELINE
    assert "No paired case changed its verdict" not in page
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", pair)))
    assert "answer_correct: 1.000 → 0.500 (2 of 3 repeats judged)." in text


def test_the_export_holds_the_repeated_flips_side_by_side(
    compared: Compared, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    done = oloproof(
        "view", "--export", str(site), compared.candidate, compared.baseline, cwd=compared.root
    )
    assert done.code == 0, done.err
    folder = site / "comparisons" / compared.both_repeated.removeprefix("sha256:")
    assert _page_flips((folder / "index.html").read_text()) == BOTH_REPEATED
    assert sorted(p.stem for p in (folder / "cases").glob("c*.html")) == [
        f"c{q}" for q in (0, 1, 2, 3, 5, 6, 7)
    ]


def _filed_by_previous_rules(address: str, event: Event) -> Iterable[tuple[str, str]]:
    """The index entries of the rules before a case was filed for the repeats it failed: a
    failure on a criterion by its combined verdict alone."""
    entries = list(ev.index_entries(address, event))
    if event.type != ev.CASE_RESULT or not event.body.get("repeats"):
        return entries
    run_id, verdicts = event.body["run_id"], event.body["verdicts"]
    by_repeats = {
        f"{run_id}/failed/{criterion}"
        for criterion, verdict in verdicts.items()
        if not ev.is_failed(verdict)
    }
    return [(n, k) for n, k in entries if not (n == ev.FAILURES_CRITERION and k in by_repeats)]


def test_a_ledger_filed_before_is_refused_until_refiled(compared: Compared, tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(compared.root, root)
    previous = dataclasses.replace(
        APPLICATION, indexes=PREVIOUS_INDEXES, indexer=_filed_by_previous_rules
    )
    with open_ledger(root / ".oloproof", app=previous) as ledger:
        ledger.rebuild_indexes()  # as a version of those rules left them
        # c1 failed two of its three repeats: not filed as failed by its combined 1/3.
        failed = ledger.lookup(ev.FAILURES_CRITERION, f"{compared.candidate}/failed/answer_correct")
        assert "c1" not in {ledger.get(a).body["case_id"] for a in failed}
    site = tmp_path / "site"
    refused = oloproof("view", "--export", str(site), compared.candidate, cwd=root)
    assert refused.code == 2, refused.out + refused.err
    assert "were filed by an older version of oloproof" in refused.err
    assert not site.exists()
    refiled = oloproof("ledger", "rebuild-indexes", cwd=root)
    assert refiled.code == 0, refiled.out + refiled.err
    with serving(root) as url:
        page = fetch(f"{url}/comparisons/{compared.both_repeated}")[1]
    assert _page_flips(page) == BOTH_REPEATED
    checked = oloproof("verify", cwd=root)
    assert checked.code == 0, checked.out
