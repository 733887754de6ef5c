"""``oloproof view --export DIR RUN…``: the viewer's pages for some runs, as a static site.

The export holds, for each run named and each child run of its diagnoses: the run's page, its
failures pages (unfiltered, and filtered by one criterion, one kind or one slice value), the
page of every case those list, its diagnoses, the comparisons between exported runs with the
flipped cases side by side, and the page of every event those pages link to. Links between
them are relative, so the folder opens from disk; a link to something the export does not hold
leads to a page that says so.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from oloproof.view import data, pages
from oloproof.view.links import Links

NOT_EXPORTED = "not-exported.html"


@dataclass(frozen=True)
class Exported:
    folder: Path
    runs: list[str]
    pages: int


def _page(maker: str, /, *args: Any, **kwargs: Any) -> tuple[str, str]:
    """(file, served URL) of one page, made by the same link makers the pages use."""
    served = getattr(Links(), maker)(*args, **kwargs)
    file = getattr(Links(static=True), maker)(*args, **kwargs)
    return file, served


def _run_pages(reader: data.Reader, run_id: str) -> Iterator[tuple[str, str]]:
    yield _page("run", run_id)
    page = data.run_page(reader, run_id)
    filters: list[dict[str, str]] = [{}]
    filters += [{"criterion": c} for c in page.criteria]
    filters += [{"kind": k} for k in data.KINDS]
    filters += [{"slice_": f"{s.slice}={s.value}"} for s in page.report.slices]
    cases: set[str] = set()
    for given in {tuple(sorted(f.items())) for f in filters}:
        kwargs: dict[str, Any] = dict(given)
        number, pages_ = 1, 1
        while number <= pages_:
            shown = data.failures(reader, run_id, page=number, **kwargs)
            pages_ = shown.pages
            cases.update(row.case_id for row in shown.rows)
            yield _page("failures", run_id, page=number, **kwargs)
            number += 1
    if page.row.parent:  # a child run is small: every case of it
        cases.update(data.case_ids(reader, run_id))
    for case_id in sorted(cases):
        yield _page("case", run_id, case_id)


def plan(reader: data.Reader, run_ids: Sequence[str]) -> list[tuple[str, str]]:
    """Every (file, served URL) of the export of ``run_ids`` and their child runs."""
    runs: list[str] = []
    for text in run_ids:
        _, body = reader.run_event(text)
        runs.append(body["run_id"])
    wanted = list(dict.fromkeys(runs))
    diagnoses: list[str] = []
    for run_id in list(wanted):
        for row in data.run_page(reader, run_id).diagnoses:
            if row.address:
                diagnoses.append(row.address)
            wanted.extend(c.run_id for c in row.runs if c.run_id not in wanted)
    reader.only_runs = set(wanted)
    entries = [_page("runs")]
    addresses: list[str] = []
    for run_id in wanted:
        entries.extend(_run_pages(reader, run_id))
        addresses.extend(data.events_of_run(reader, run_id))
    for address in diagnoses:
        entries.append(_page("diagnosis", address))
        addresses.append(address)
    for address, cand, base in _comparisons(reader, wanted):
        entries.append(_page("comparison", address))
        addresses.append(address)
        for flip in data.comparison_page(reader, address).flips:
            entries.append(_page("pair", address, flip.case_id))
            entries.extend(_page("case", r, flip.case_id) for r in (cand, base))
    entries.extend(_page("address", a) for a in dict.fromkeys(addresses))
    return list(dict(entries).items())


def _comparisons(reader: data.Reader, runs: Sequence[str]) -> list[tuple[str, str, str]]:
    found: dict[str, tuple[str, str, str]] = {}
    for run_id in runs:
        for address, cand, base in data.run_page(reader, run_id).comparisons:
            if cand in runs and base in runs:
                found[address] = (address, cand, base)
    return list(found.values())


def export_site(reader: data.Reader, folder: Path, run_ids: Sequence[str]) -> Exported:
    """Write the static site of ``run_ids`` into ``folder``; return what was written."""
    entries = plan(reader, run_ids)
    known = {file for file, _ in entries}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "static").mkdir(exist_ok=True)
    css = resources.files("oloproof.view").joinpath("static/view.css").read_bytes()
    (folder / "static" / "view.css").write_bytes(css)
    for file, served in entries:
        url = urlsplit(served)
        links = Links(static=True, here=file, known=known, missing=NOT_EXPORTED)
        text = "".join(pages.render(reader, url.path, dict(parse_qsl(url.query)), links))
        target = folder / file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text.replace(pages.FLUSH, ""), encoding="utf-8")
    message = (
        "This page is not part of this export: it holds only the runs it was made for "
        f"({', '.join(sorted(reader.only_runs or ()))}) and what they link to."
    )
    note = pages.error_page(message, Links(static=True, here=NOT_EXPORTED), 404)
    (folder / NOT_EXPORTED).write_text(note, encoding="utf-8")
    return Exported(folder, sorted(reader.only_runs or ()), len(entries) + 1)
