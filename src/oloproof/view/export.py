"""``oloproof view --export DIR RUN…``: the viewer's pages for some runs, as a static site.

The export holds, for each run named and each child run of its diagnoses: the run's page, its
failures pages (unfiltered, and filtered by one criterion, one kind or one slice value), the
page of every case those list, its diagnoses, the comparisons between exported runs with the
flipped cases side by side, and the page of every event those pages link to. Links between
them are relative, so the folder opens from disk; a link to something the export does not hold
leads to a page that says so.

The folder must be new or empty, so that it holds the export and nothing else; one that is not
(or a file, or a path under a file) is refused before the ledger is read or anything written.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from oloproof.errors import OloproofError
from oloproof.redaction import redact_text
from oloproof.view import data, pages
from oloproof.view.links import Links

NOT_EXPORTED = "not-exported.html"
_CSS = "static/view.css"


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
    data.check_cases_found(reader, run_id)  # else a case page fails once some are written
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


def check_folder(folder: Path) -> None:
    """Refuse (``OloproofError``) a ``folder`` the export cannot have to itself. It must be an
    empty folder, or a new one whose nearest existing parent is a folder; that one writable, as
    far as ``os.access`` tells (it cannot for root: creating the folder tells then)."""
    where = f"cannot export into {folder}"
    try:
        if folder.is_symlink() and not folder.exists():
            raise OloproofError(
                f"{where}: it is a symbolic link to {os.readlink(folder)}, which does not exist"
            )
        if folder.exists():
            if not folder.is_dir():
                what = "is a file, not" if folder.is_file() else "exists and is not"
                raise OloproofError(f"{where}: it {what} a folder")
            if next(folder.iterdir(), None) is not None:
                raise OloproofError(
                    f"{where}: it is not empty (an export goes into a new or empty folder, "
                    "which then holds that export alone)"
                )
            _writable(folder, where, "it")
            return
        parent = next(p for p in folder.parents if p.exists() or p.is_symlink())
        if not parent.is_dir():
            raise OloproofError(f"{where}: {parent} is a file, not a folder")
        _writable(parent, where, str(parent))
    except OSError as exc:
        raise OloproofError(f"{where}: {exc.strerror or exc}") from None


def _writable(folder: Path, where: str, name: str) -> None:
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OloproofError(f"{where}: {name} is not writable")


def export_site(reader: data.Reader, folder: Path, run_ids: Sequence[str]) -> Exported:
    """Write the static site of ``run_ids`` into ``folder``, a new or empty folder; return what
    was written. ``OloproofError`` for a folder that cannot be, before anything is written."""
    check_folder(folder)
    entries = plan(reader, run_ids)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OloproofError(f"cannot create the folder {folder}: {exc.strerror or exc}") from None
    written: list[Path] = []
    try:
        _write_site(reader, folder, entries, written)
    except OSError as exc:
        left = f"; the {len(written)} file(s) written before it are left there, incomplete"
        left = left if written else ""
        where = f" ({exc.filename})" if exc.filename else ""
        raise OloproofError(
            f"cannot write the export into {folder}: {exc.strerror or exc}{where}{left}"
        ) from None
    return Exported(folder, sorted(reader.only_runs or ()), len(entries) + 1)


def _write_site(
    reader: data.Reader, folder: Path, entries: list[tuple[str, str]], written: list[Path]
) -> None:
    def write(file: str, content: str | bytes) -> None:
        target = folder / file
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        written.append(target)

    write("static/view.css", resources.files("oloproof.view").joinpath(_CSS).read_bytes())
    known = {file for file, _ in entries}
    for file, served in entries:
        url = urlsplit(served)
        links = Links(static=True, here=file, known=known, missing=NOT_EXPORTED)
        text = "".join(pages.render(reader, url.path, dict(parse_qsl(url.query)), links))
        # A run recorded before a secret was declared holds it (``keep_out_declared``).
        write(file, redact_text(text.replace(pages.FLUSH, "")))
    message = (
        "This page is not part of this export: it holds only the runs it was made for "
        f"({', '.join(sorted(reader.only_runs or ()))}) and what they link to."
    )
    page = pages.error_page(message, Links(static=True, here=NOT_EXPORTED), 404)
    write(NOT_EXPORTED, redact_text(page))
