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
