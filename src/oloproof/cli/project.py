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

from oloproof.project import PROJECT_FILE, find_project

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
    redaction.register_environment(_declared(path) if path.exists() else [], shown_only=True)


def _declared(path: Path) -> list[str]:
    """The names ``path`` lists under ``secrets:``. A list of names is taken as it is; anything
    else is checked by the project's own model, for the error a run gives (loading that model
    takes longer than the rest of a read command's start)."""
    from oloproof.envnames import variable_name
    from oloproof.yamlfile import read_yaml

    data, lines = read_yaml(path)
    given = data.get("secrets", []) if isinstance(data, dict) else []
    if isinstance(given, list) and all(isinstance(name, str) for name in given):
        try:
            return [variable_name(name, "the secret") for name in given]
        except ValueError:
            pass
    from pydantic import BaseModel, ConfigDict, ValidationError

    from oloproof.config import SecretName, validation_error

    class Declared(BaseModel):
        model_config = ConfigDict(extra="ignore", strict=True)  # the rest is the run's to check
        secrets: list[SecretName] = []

    try:
        return Declared.model_validate(data).secrets
    except ValidationError as exc:
        raise validation_error(path, exc, lines) from None


def config_path(given: Path | None) -> Path:
    """``--config`` as given, else the project's oloproof.yaml (found from a subfolder too)."""
    if given is not None:
        return given
    return project_root() / PROJECT_FILE
