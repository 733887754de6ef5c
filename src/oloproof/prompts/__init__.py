"""The judges' prompt templates: versioned text files shipped inside the package.

Each template is a file ``<name>.v<version>.txt`` in this directory with two sections, a line
``[system]`` and a line ``[user]``, each followed by its text. Placeholders are ``$name``
(``string.Template``); the values put in are never re-read as template text, so an answer that
contains ``$question`` stays as it is.

A template is never edited once released: a change is a new file with the next version. The
judge's identity records the name, the version and the SHA-256 of the file, so an edit that
forgot to bump the version still changes the identity (and so invalidates calibrations and
cached judgments).
"""

from __future__ import annotations

import hashlib
import re
import string
from dataclasses import dataclass
from functools import cache
from importlib import resources

from oloproof.errors import ConfigError

__all__ = ["PromptTemplate", "available_versions", "load_template"]

_FILE_NAME = re.compile(r"^(?P<name>[a-z_]+)\.v(?P<version>[1-9][0-9]*)\.txt$")


@dataclass(frozen=True)
class PromptTemplate:
    """One version of one judge prompt."""

    name: str
    version: int
    system: str
    user: str
    sha256: str

    def render(self, values: dict[str, str]) -> tuple[str, str]:
        """The system and user messages with every ``$placeholder`` filled.

        Raises ``KeyError`` when a placeholder has no value (a bug in the judge, not input).
        """
        system = string.Template(self.system).substitute(values)
        user = string.Template(self.user).substitute(values)
        return system, user

    def identity(self) -> dict[str, object]:
        """What a judge's spec records of its template."""
        return {"name": self.name, "version": self.version, "sha256": self.sha256}


def _files() -> dict[tuple[str, int], str]:
    found: dict[tuple[str, int], str] = {}
    for entry in resources.files(__name__).iterdir():
        match = _FILE_NAME.match(entry.name)
        if match:
            found[(match["name"], int(match["version"]))] = entry.name
    return found


def available_versions(name: str) -> list[int]:
    """The versions of template ``name`` this package ships, oldest first."""
    return sorted(version for (n, version) in _files() if n == name)


@cache
def load_template(name: str, version: int | None = None) -> PromptTemplate:
    """Template ``name`` at ``version``, or its newest version when ``version`` is None.

    Raises ``ConfigError`` when the package ships no such template or version.
    """
    versions = available_versions(name)
    if not versions:
        raise ConfigError(f"no prompt template named {name!r} ships with this Oloproof")
    chosen = versions[-1] if version is None else version
    if chosen not in versions:
        shipped = ", ".join(str(v) for v in versions)
        raise ConfigError(
            f"prompt template {name!r} has no version {chosen} (this Oloproof ships {shipped})",
            hint="remove template_version to use the newest, or upgrade Oloproof",
        )
    raw = resources.files(__name__).joinpath(f"{name}.v{chosen}.txt").read_bytes()
    system, user = _split(raw.decode("utf-8"), f"{name}.v{chosen}.txt")
    return PromptTemplate(name, chosen, system, user, hashlib.sha256(raw).hexdigest())


def _split(text: str, file_name: str) -> tuple[str, str]:
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.strip() in ("[system]", "[user]"):
            current = sections.setdefault(line.strip()[1:-1], [])
        elif current is not None:
            current.append(line)
    if set(sections) != {"system", "user"}:
        raise ConfigError(f"prompt template {file_name} needs a [system] and a [user] section")
    return "\n".join(sections["system"]).strip(), "\n".join(sections["user"]).strip()
