"""The viewer's addresses: one stable URL per page, and its file name in a static export.

A served page lives at a path such as ``/runs/RUN_ID/cases/CASE_ID``; an exported one at a file
such as ``runs/RUN_ID/cases/CASE_ID.html``, and its links are relative to the page's own file,
so the exported folder works from any place, opened straight from disk.

A case id is one path segment, percent-encoded (``a/b`` is ``a%2Fb``), except ``.`` and ``..``:
a browser drops those as dot segments, and ``%2E`` with them (the WHATWG URL standard), so
their pages are at ``/runs/RUN_ID/cases?id=..``, where any id can be given.

An exported file is named by a name the user chose (a case id, a criterion) only when that
name holds no capital letter, so that two differing only in case are two files on a disk that
ignores case; and a comparison's side-by-side pages are in its ``cases/`` folder, as served,
so that a case named ``index`` is never the comparison's own page.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Mapping
from urllib.parse import quote, urlencode

from oloproof.redaction import holds_secret

_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
# A name of the user's choosing (a case id, a criterion) kept as it is: no capital letter, so
# that two differing only in case (c1, C1) are never one file where the disk ignores case.
_SAFE_USER_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,99}")
_ADDRESS = re.compile(r"sha256:([0-9a-f]{64})")


def file_name(text: str, safe: re.Pattern[str] = _SAFE_NAME) -> str:
    """``text`` as a file name: itself when plainly ``safe`` and holding no secret (a file's
    name is not redacted), otherwise a digest of it."""
    if safe.fullmatch(text) and not text.endswith(".") and not holds_secret(text):
        return text
    return "_" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def user_file_name(text: str) -> str:
    """``file_name`` of a name the user chose, which may differ from another only in case."""
    return file_name(text, _SAFE_USER_NAME)


def _hex(address: str) -> str:
    found = _ADDRESS.fullmatch(address)
    return found.group(1) if found else file_name(address)


class Links:
    """URLs for the server (``static=False``) or relative file links from ``here`` (a file)."""

    def __init__(
        self,
        *,
        static: bool = False,
        here: str = "index.html",
        known: set[str] | None = None,
        missing: str = "",
    ) -> None:
        """``known``: the files of an export; a link to any other goes to ``missing``."""
        self.static = static
        self.here = here
        self.known = known
        self.missing = missing

    def _to(self, served: str, exported: str) -> str:
        if not self.static:
            return served
        if self.known is not None and exported not in self.known and exported != self.missing:
            exported = self.missing
        return posixpath.relpath(exported, posixpath.dirname(self.here) or ".")

    def css(self) -> str:
        if not self.static:
            return "/static/view.css"
        return posixpath.relpath("static/view.css", posixpath.dirname(self.here) or ".")

    def runs(self, query: Mapping[str, str | int] | None = None) -> str:
        served = "/" + (f"?{urlencode(query)}" if query else "")
        return self._to(served, "index.html")

    def run(self, run_id: str) -> str:
        return self._to(f"/runs/{quote(run_id)}", f"runs/{file_name(run_id)}/index.html")

    def failures(
        self,
        run_id: str,
        *,
        criterion: str | None = None,
        kind: str | None = None,
        slice_: str | None = None,
        page: int = 1,
    ) -> str:
        query = {
            k: v
            for k, v in (("criterion", criterion), ("kind", kind), ("slice", slice_))
            if v is not None
        }
        served_query = {**query, **({"page": str(page)} if page > 1 else {})}
        served = f"/runs/{quote(run_id)}/failures" + (
            f"?{urlencode(served_query)}" if served_query else ""
        )
        return self._to(served, failures_file(run_id, query, page))

    def case(self, run_id: str, case_id: str) -> str:
        return self._to(
            _case_path(f"/runs/{quote(run_id)}", case_id),
            f"runs/{file_name(run_id)}/cases/{user_file_name(case_id)}.html",
        )

    def diagnosis(self, address: str) -> str:
        return self._to(f"/diagnoses/{address}", f"diagnoses/{_hex(address)}.html")

    def comparison(self, address: str) -> str:
        return self._to(f"/comparisons/{address}", f"comparisons/{_hex(address)}/index.html")

    def pair(self, address: str, case_id: str) -> str:
        return self._to(
            _case_path(f"/comparisons/{address}", case_id),
            f"comparisons/{_hex(address)}/cases/{user_file_name(case_id)}.html",
        )

    def address(self, address: str, *, rederive: bool = False) -> str:
        return self._to(
            f"/a/{address}" + ("?rederive=1" if rederive else ""), f"a/{_hex(address)}.html"
        )


def _case_path(page: str, case_id: str) -> str:
    """``page/cases/CASE_ID``; ``page/cases?id=CASE_ID`` for an id a browser would drop."""
    if case_id in (".", ".."):
        return f"{page}/cases?{urlencode({'id': case_id})}"
    return f"{page}/cases/{quote(case_id, safe='')}"


def failures_file(run_id: str, query: Mapping[str, str], page: int) -> str:
    """The exported file of one failures page: one filter at most (an export lists those)."""
    parts = [f"{k}-{user_file_name(v)}" for k, v in sorted(query.items())]
    slug = "-".join(parts) if parts else "all"
    return f"runs/{file_name(run_id)}/failures/{slug}-{page}.html"
