"""The project a command works on: found from the current folder upwards (``oloproof.project``).

Paths given on the command line (``--policy compare.yaml``, ``--output out.csv``) stay relative
to the folder the command runs in, as they are for any program; only the project's own files
(its oloproof.yaml and its ledger) are found by walking up.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from oloproof.project import PROJECT_FILE, declared_secrets, find_project

if TYPE_CHECKING:
    from ledger import Ledger


@functools.cache
def project_root() -> Path:
    """The project's folder (the current folder when none is found); a note goes to stderr
    once when the choice passed over another level's file or ledger."""
    found = find_project(Path.cwd())
    if found is None:
        return Path.cwd()
    if found.note is not None:
        sys.stderr.write(found.note + "\n")
    return found.root


def project_ledger(*, create: bool = False, only_reads: bool = False) -> Ledger:
    """The ledger of the project this command runs in; a command that only reads says so
    (``only_reads``), and then reads a ledger on a read-only file system too."""
    from oloproof.errors import UnknownIdError
    from oloproof.store import LEDGER_DIR, open_project_ledger

    root = project_root()
    if not create and not (root / LEDGER_DIR).exists():
        raise UnknownIdError(
            f"no ledger in {Path.cwd()} or any folder above it (a project keeps its ledger in "
            f"{LEDGER_DIR}/ beside its oloproof.yaml); run `oloproof run` in the project first"
        )
    return open_project_ledger(root, create=create, only_reads=only_reads)


def keep_out_declared() -> None:
    """Keep what a run here would keep out of what this command prints or writes: the values
    of the variables the project file lists under ``secrets:`` and of those named like
    credentials (``oloproof.redaction.register_environment``). A run recorded before a secret
    was declared holds its value; the commands that read it show it as ``[redacted]``. A
    project file whose ``secrets:`` cannot be read is refused, as a run refuses it: which
    values to keep out would be unknown."""
    from oloproof import redaction

    path = project_root() / PROJECT_FILE
    redaction.register_environment(declared_secrets(path) if path.exists() else [], shown_only=True)


def config_path(given: Path | None) -> Path:
    """``--config`` as given, else the project's oloproof.yaml (found from a subfolder too)."""
    if given is not None:
        return given
    return project_root() / PROJECT_FILE
