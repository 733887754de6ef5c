"""Why a case would execute again: what changed in the system since its latest run.

A run records its system's identity and, for each code fingerprint in it, the fingerprint's
parts (``oloproof.fingerprint.Fingerprint.record``). Compared with what the system is now, they
say in words what changed: ``system.version changed``, ``token_budget changed``, ``code of
words() in app.py changed``. For a staged system the retrieve stage has its own, narrower
comparison: only what the retrieval's identity holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ledger import Ledger
from oloproof import events as ev
from oloproof.fingerprint import changes as code_changes
from oloproof.latest import listed_runs
from oloproof.systems.base import System

# How each setting of a system's identity is named to the user.
_SETTING_NAMES = {
    "kind": "the kind of system",
    "name": "system.name",
    "version": "system.version",
    "callable": "system.callable",
    "records": "the artifact kinds the callable records",
    "object": "system.rag.object",
    "depth": "depth",
    "top_k": "top_k",
    "token_budget": "token_budget",
    "index_version": "index_version",
    "url": "system.http.url",
    "output_path": "system.http.output_path",
    "artifacts": "system.http.artifacts",
    "reuse": "system.http.reuse.version",
    "replies": "how model replies are read",
}
# What of a staged system's identity its retrieve stage's identity holds.
RETRIEVE_SETTINGS = ("version", "index_version", "depth")


def latest_run_of(ledger: Ledger, system: System) -> Mapping[str, Any] | None:
    """The body of the newest top-level run of a system of this kind and name.

    Read through ``listed_runs``: a run a damaged index page hides would leave an older run
    (or none) to compare with, and the reasons given would be about the wrong run.
    """
    identity = system.identity()
    found: Mapping[str, Any] | None = None
    for _, event in listed_runs(ledger):
        body = event.body
        theirs = body.get("system", {})
        if body.get("parent") is None and (theirs.get("kind"), theirs.get("name")) == (
            identity["kind"],
            identity["name"],
        ):
            found = body
    return found


def system_changes(before: Mapping[str, Any], system: System) -> list[str]:
    """Everything that differs between a recorded run's system and ``system`` now."""
    now = system.identity()
    found = _setting_changes(before.get("system", {}), now, _SETTING_NAMES)
    found += _decorator_changes(before.get("system", {}), now)
    found += _fingerprint_changes(before, system, list(system.fingerprints()))
    return _unique(found)


def _decorator_changes(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """What the decorator declares (``systems.base.declared_apart``), when only it changed."""
    if any(ev.plain(before.get(key)) != ev.plain(now.get(key)) for key in ("name", "version")):
        return []  # said as system.name or system.version

    def declared(identity: Mapping[str, Any]) -> Any:
        given = {"name": identity.get("name"), "version": identity.get("version")}
        return ev.plain(identity.get("declared") or given)

    if declared(before) != declared(now):
        return ["the name or version its decorator declares changed"]
    return []


def retrieve_changes(before: Mapping[str, Any], system: System) -> list[str]:
    """What differs in what a staged system's retrieve stage is keyed on."""
    now = system.identity()
    names = {key: _SETTING_NAMES[key] for key in RETRIEVE_SETTINGS}
    found = _setting_changes(before.get("system", {}), now, names)
    found += _decorator_changes(before.get("system", {}), now)
    found += _fingerprint_changes(before, system, ["retrieve"])
    return _unique(found)


def _setting_changes(
    before: Mapping[str, Any], now: Mapping[str, Any], names: Mapping[str, str]
) -> list[str]:
    found = []
    for key, name in names.items():
        if ev.plain(before.get(key)) != ev.plain(now.get(key)):
            found.append(f"{name} changed")
    return found


def _fingerprint_changes(
    before: Mapping[str, Any], system: System, entries: Iterable[str]
) -> list[str]:
    recorded = before.get("fingerprints")
    now = system.fingerprints()
    old_keys = _code_keys(before.get("system", {}))
    found: list[str] = []
    for entry in entries:
        current = now.get(entry)
        if current is None:
            continue
        if not isinstance(recorded, Mapping) or entry not in recorded:
            # A run recorded before fingerprints were itemised: only the key can be compared.
            if old_keys.get(entry) != current["key"]:
                found.append(f"the code of {entry} changed (the earlier run recorded no detail)")
            continue
        found += code_changes(recorded[entry], current)
    return found


def _code_keys(identity: Mapping[str, Any]) -> dict[str, Any]:
    code = identity.get("code")
    if isinstance(code, Mapping):
        return dict(code)
    return {"callable": code}


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def summary(reasons: list[str], shown: int = 3) -> str:
    """Reasons as one line: the first ``shown``, then how many more."""
    head = ", ".join(reasons[:shown])
    more = len(reasons) - shown
    return head + (f", and {more} more" if more > 0 else "")
