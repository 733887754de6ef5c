"""Which project a command run in some folder belongs to, found the way git finds a repository.

Requirements (``docs/running.md``, "Which project a command uses"):

1. From the folder a command runs in, walk up to the first folder that holds ``oloproof.yaml``
   or a ledger (``.oloproof/``); that folder is the project. The nearest one wins, so a project
   nested inside another is its own.
2. When that folder holds only one of the two and a folder further up holds the other, the
   nearest is still used, and ``note`` says which was chosen and what was passed over, so
   nobody wonders why the other ledger's runs are not listed.
3. Nothing found: no project (the caller says so, naming the folder it started from).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PROJECT_FILE = "oloproof.yaml"
LEDGER_DIR = ".oloproof"


@dataclass(frozen=True)
class Project:
    """The project's folder, and a note when another level holds the other marker."""

    root: Path
    note: str | None = None

    @property
    def config(self) -> Path:
        return self.root / PROJECT_FILE


def _markers(folder: Path) -> tuple[bool, bool]:
    return (folder / PROJECT_FILE).is_file(), (folder / LEDGER_DIR).is_dir()


def find_project(start: Path) -> Project | None:
    """The nearest folder at or above ``start`` holding oloproof.yaml or .oloproof/."""
    start = start.absolute()
    for folder in (start, *start.parents):
        has_file, has_ledger = _markers(folder)
        if not (has_file or has_ledger):
            continue
        if has_file and has_ledger:
            return Project(folder)
        missing = 1 if has_file else 0  # the index, in _markers, of the marker not found here
        for above in folder.parents:
            if _markers(above)[missing]:
                found, other = (
                    (PROJECT_FILE, LEDGER_DIR) if has_file else (LEDGER_DIR, PROJECT_FILE)
                )
                return Project(
                    folder,
                    f"note: using the project in {folder} (it holds {found}); {above} holds "
                    f"{other} too, and is not used (run from {above} to use it)",
                )
        return Project(folder)
    return None


def declared_secrets(path: Path) -> list[str]:
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
