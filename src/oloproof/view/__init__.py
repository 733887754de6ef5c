"""``oloproof view``: a read-only browser viewer of a project's ledger, served or exported.

    from oloproof.view import open_viewer, export

    reader = open_viewer(Path("my-project"))          # the ledger, opened read-only
    export(reader, Path("site"), ["run_01M…"])        # a static copy of some runs' pages

The viewer needs the ``view`` extra (``pip install 'oloproof[view]'``); without it these
functions raise an ``OloproofError`` that says so.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from oloproof.errors import OloproofError

if TYPE_CHECKING:
    from oloproof.view.data import Reader
    from oloproof.view.export import Exported
    from oloproof.view.server import ViewServer

__all__ = ["export", "is_loopback", "make_server", "open_viewer"]

MISSING_EXTRA = (
    "the viewer needs the `view` extra, which is not installed: pip install 'oloproof[view]'"
)


def _require_extra() -> None:
    try:
        import jinja2  # noqa: F401 (only whether it imports)
    except ImportError:
        raise OloproofError(MISSING_EXTRA) from None


def is_loopback(host: str) -> bool:
    """Whether ``host`` is an address only this machine can reach."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def open_viewer(root: Path) -> Reader:
    """The ledger of the project in ``root``, opened read-only for the viewer."""
    _require_extra()
    from oloproof.view.data import Reader

    return Reader(root)


def make_server(reader: Reader, host: str = "127.0.0.1", port: int = 0) -> ViewServer:
    """A viewer server (not yet serving) on ``host:port``; port 0 picks a free one."""
    _require_extra()
    from oloproof.view.server import make_server as make

    return make(reader, host, port)


def export(reader: Reader, folder: Path, run_ids: Sequence[str]) -> Exported:
    """Write the pages of ``run_ids`` (and their child runs) into ``folder`` as a static site."""
    _require_extra()
    from oloproof.view.export import export_site

    return export_site(reader, folder, run_ids)
