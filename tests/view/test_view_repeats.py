"""A repeated run (`oloproof run --repeats 3`) in the viewer says what the CLI says of it.

The run page counts the errored repeats as the run's report does, the failures pages list the
cases one of whose repeats errored or went without a verdict as `inspect --failures` does, and a
case page shows each repeat as `inspect --case` does: served over HTTP and exported, each
checked against what the CLI prints for the same ledger. A ledger whose failures were filed
before repeats counted in them is refused by the viewer (which only reads) until a command that
writes refiles it, never shown with a short list.
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
from collections.abc import Iterable
from pathlib import Path

import pytest
from tests.support import flaky_repeats_project, oloproof
from tests.view.support import fetch, serving

from ledger import Event, open_ledger
from oloproof import events as ev
from oloproof.store import APPLICATION

PREVIOUS_INDEXES = "oloproof-indexes-4"
"""The name of the indexing rules that filed no case for its repeats alone."""


@dataclasses.dataclass(frozen=True)
class Repeated:
    root: Path
    run_id: str
    report: list[str]
    """The report's lines saying why cases and repeats errored, without the command they end
    with (``· oloproof inspect RUN --failures``), which the viewer has as a link."""


@pytest.fixture(scope="module")
def repeated(tmp_path_factory: pytest.TempPathFactory) -> Repeated:
    root = flaky_repeats_project(tmp_path_factory.mktemp("repeats"))
    done = oloproof("run", "--repeats", "3", cwd=root)
    assert done.code in (0, 3), done.out + done.err
    run_id = done.lines[0].split()[1]
    hint = f" · oloproof inspect {run_id} --failures"
    errored = [line.removesuffix(hint) for line in done.lines if line.endswith(hint)]
    assert [line.split(":")[0] for line in errored] == [
        "1 of 6 cases errored",
        "5 of 18 repeats errored",
    ]
    return Repeated(root, run_id, errored)


def _text(page: str) -> str:
    """The page as a reader sees it: tags dropped, entities decoded, spaces squeezed."""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def _listed(page: str, run_id: str) -> list[str]:
    return re.findall(rf'href="/runs/{run_id}/cases/([^"]+)"', page)


def _inspect_failures(root: Path, run_id: str, *args: str) -> list[str]:
    """The case ids `inspect --failures` lists (each block's first line)."""
    done = oloproof("inspect", run_id, "--failures", *args, cwd=root)
    assert done.code == 0, done.err
    return [block.splitlines()[0] for block in done.out.rstrip("\n").split("\n\n")[1:]]


def test_the_run_page_counts_the_errored_repeats_as_the_report_does(
    repeated: Repeated,
) -> None:
    with serving(repeated.root) as url:
        status, page = fetch(f"{url}/runs/{repeated.run_id}")
    assert status == 200
    text = _text(page)
    assert "PARTIAL" in text
    assert "Cases 5 answered · 1 missing · 6 planned · 1 errored · 5 of 18 repeats errored" in text
    for line in repeated.report:  # why they errored, word for word as the report says it
        assert line in text, line
    assert "5 case(s) failed, errored or are missing a verdict" in text


def test_the_failures_pages_list_cases_whose_repeats_errored_or_went_unjudged(
    repeated: Repeated,
) -> None:
    root, run_id = repeated.root, repeated.run_id
    with serving(root) as url:

        def listed(query: str = "") -> list[str]:
            status, page = fetch(f"{url}/runs/{run_id}/failures{query}")
            assert status == 200, page
            return _listed(page, run_id)

        everything = listed()
        assert everything == _inspect_failures(root, run_id) == ["c1", "c3", "c4", "c5", "c6"]
        for criterion in ("answer_correct", "shaped"):
            on = _inspect_failures(root, run_id, "--criterion", criterion)
            assert listed(f"?criterion={criterion}") == on, criterion
        assert listed("?criterion=answer_correct") == ["c1", "c3", "c4", "c5", "c6"]
        # c3 errored in every repeat, c1 and c4 in one; each of them misses a verdict on every
        # criterion, and c5 misses one on both (its number is no answer text, and `shaped`
        # cannot judge it). c6 failed answer_correct in one repeat, though it passed the others.
        assert listed("?kind=errored") == ["c1", "c3", "c4"]
        assert listed("?kind=missing") == ["c1", "c3", "c4", "c5"]
        assert listed("?kind=failed") == ["c6"]
        assert listed("?kind=errored&criterion=shaped") == ["c1", "c3", "c4"]
        page = _text(fetch(f"{url}/runs/{run_id}/failures")[1])
    # Each row says how its repeats went, in the words `inspect --failures` uses.
    shown = oloproof("inspect", run_id, "--failures", cwd=root).lines
    for line in (
        "1 of 3 repeats errored; repeat 2: RuntimeError: the model timed out on q1 (call 2)",
        "1 of 3 repeats errored; repeat 1: RuntimeError: the model timed out on q4 (call 1)",
        "1 of 3 repeats without a verdict",
    ):
        assert f"  {line}" in shown
        assert line in page, line
    assert "5 case(s)." in page


def test_a_repeated_case_page_shows_each_repeat(repeated: Repeated) -> None:
    root, run_id = repeated.root, repeated.run_id
    inspected = oloproof("inspect", run_id, "--case", "c1", "--json", cwd=root)
    assert inspected.code == 0, inspected.err
    repeats = json.loads(inspected.out)["repeats"]
    assert [r["status"] for r in repeats] == ["ok", "errored", "ok"]
    with serving(root) as url:
        status, page = fetch(f"{url}/runs/{run_id}/cases/c1")
        unjudged = _text(fetch(f"{url}/runs/{run_id}/cases/c5")[1])
    assert status == 200
    text = _text(page)
    assert "1 of 3 repeats errored" in text
    assert "answer_correct 1.000 (2 of 3 repeats observed, 1 missing)" in text
    sections = re.split(r"Repeat (\d) \((ok|errored)\)", text)[1:]
    assert [(n, s) for n, s in zip(sections[::3], sections[1::3], strict=True)] == [
        ("1", "ok"),
        ("2", "errored"),
        ("3", "ok"),
    ]
    for repeat, shown in zip(repeats, sections[2::3], strict=True):
        assert repeat["execution"] in shown
        for criterion, address in repeat["judgments"].items():
            assert address[:19] in shown, criterion
        if repeat["status"] == "errored":
            error = repeat["error"]
            assert f"{error['type']}: {error['message']}" in shown
            assert "Traceback (most recent call last)" in shown
            assert "answer_correct missing (execution_errored)" in shown
        else:
            assert '"answer": "yes"' in shown
            assert "answer_correct passed" in shown
    assert "1 of 3 repeats without a verdict" in unjudged
    assert "shaped missing (evaluator_raised)" in unjudged


def test_the_export_holds_the_failures_and_every_repeat(repeated: Repeated, tmp_path: Path) -> None:
    root, run_id = repeated.root, repeated.run_id
    site = tmp_path / "site"
    done = oloproof("view", "--export", str(site), run_id, cwd=root)
    assert done.code == 0, done.err
    run_page = _text((site / "runs" / run_id / "index.html").read_text())
    assert "5 of 18 repeats errored" in run_page
    assert "5 case(s) failed, errored or are missing a verdict" in run_page
    failures = (site / "runs" / run_id / "failures").glob("*.html")
    listed = {
        case
        for page in failures
        for case in re.findall(r'href="\.\./cases/([^"]+)\.html"', page.read_text())
    }
    assert listed == {"c1", "c3", "c4", "c5", "c6"}
    case = (site / "runs" / run_id / "cases" / "c1.html").read_text()
    assert "Repeat 2 (errored)" in _text(case)
    # Each repeat's execution and judgments are exported with it: every link leads to a file.
    for page in site.rglob("*.html"):
        for href in re.findall(r'href="([^"#?]+)"', page.read_text()):
            assert (page.parent / href).resolve().exists(), f"{page}: {href}"
    assert "not-exported.html" not in case


def _filed_by_previous_rules(address: str, event: Event) -> Iterable[tuple[str, str]]:
    """The index entries of the rules before repeats counted: a case result was filed as a
    failure by its combined verdicts alone, whatever its repeats held."""
    if event.type == ev.CASE_RESULT and event.body.get("repeats"):
        verdicts = {
            criterion: {k: v for k, v in verdict.items() if k != "m"}
            for criterion, verdict in event.body["verdicts"].items()
        }
        body = {**event.body, "repeats": None, "verdicts": verdicts}
        event = Event(event.type, event.schema, body, event.refs)
    return ev.index_entries(address, event)


def test_a_ledger_filed_before_repeats_counted_is_refused_until_refiled(
    tmp_path: Path,
) -> None:
    root = flaky_repeats_project(tmp_path)
    done = oloproof("run", "--repeats", "3", cwd=root)
    run_id = done.lines[0].split()[1]
    previous = dataclasses.replace(
        APPLICATION, indexes=PREVIOUS_INDEXES, indexer=_filed_by_previous_rules
    )
    with open_ledger(root / ".oloproof", app=previous) as ledger:
        ledger.rebuild_indexes()  # as a version of those rules left them
        assert ledger.lookup(ev.FAILURES, run_id) == ledger.lookup(
            ev.FAILURES_KIND, f"{run_id}/errored"
        )  # only c3, which errored in every repeat
        assert len(ledger.lookup(ev.FAILURES, run_id)) == 1
    # The viewer cannot refile them read-only: both ways in, it says so and shows nothing.
    site = tmp_path / "site"
    for args in (("--export", str(site), run_id), ("--port", "0")):
        refused = oloproof("view", *args, cwd=root)
        assert refused.code == 2, refused.out + refused.err
        assert refused.out == ""
        assert "were filed by an older version of oloproof" in refused.err
        assert "`oloproof ledger rebuild-indexes` rebuilds them now" in refused.err
    assert not site.exists()
    # A command that writes refiles them, and the viewer then lists every case.
    assert oloproof("runs", cwd=root).code == 0
    with serving(root) as url:
        page = fetch(f"{url}/runs/{run_id}/failures")[1]
    assert _listed(page, run_id) == ["c1", "c3", "c4", "c5", "c6"]
    assert oloproof("verify", cwd=root).code == 0
