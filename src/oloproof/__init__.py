"""Oloproof: evaluate LLM and RAG systems with honest intervals, release gates and a ledger.

The public names below load on first use (PEP 562), so importing ``oloproof`` or one of its
light modules costs almost nothing: ``oloproof --help`` stays fast.
"""

from __future__ import annotations

import os
import sys


def _started_as_module() -> bool:
    """Whether this process is ``python -m oloproof``: Python then puts the working folder first
    on the import path before any of Oloproof is imported (the console command does not)."""
    if sys.argv[:1] != ["-m"]:  # what it is while the module to run is being imported
        return False
    argv: list[str] = sys.orig_argv
    for i, arg in enumerate(argv):
        if arg == "-m":
            return i + 1 < len(argv) and argv[i + 1].split(".")[0] == "oloproof"
        if arg.startswith("-m") and not arg.startswith("--"):
            return arg[2:].split(".")[0] == "oloproof"
    return False


def _working_folder() -> str | None:
    try:
        return os.getcwd()
    except FileNotFoundError:  # deleted under the shell: the CLI says so once it has started
        return None


if _started_as_module() and sys.path[:1] == [_working_folder()]:
    # A project's json.py or email.py would be imported in place of Python's own, by Oloproof
    # itself as it starts. The folder goes last, as the console command has it; a system's
    # folder goes first when its module is imported (oloproof.systems.base).
    sys.path.append(sys.path.pop(0))

# Only now: with the working folder first, even these would be a project's typing.py or the like.
import importlib  # noqa: E402
from typing import TYPE_CHECKING, Any  # noqa: E402

from oloproof.errors import (  # noqa: E402
    ArtifactError,
    ConfigError,
    DatasetError,
    LedgerAccessError,
    OloproofError,
    UnknownIdError,
)

__version__ = "0.1.0"

_LAZY = {
    "Citations": "oloproof.sdk",
    "Context": "oloproof.sdk",
    "ContextItem": "oloproof.sdk",
    "DroppedItem": "oloproof.sdk",
    "Passage": "oloproof.sdk",
    "Recorder": "oloproof.sdk",
    "Retrieval": "oloproof.sdk",
    "current_case": "oloproof.sdk",
    "rag_system": "oloproof.sdk",
    "system": "oloproof.sdk",
    "Verdict": "oloproof.results",
    "Interval": "oloproof.results",
    "ModelClient": "oloproof.models",
    "load_config": "oloproof.config",
    "load_dataset": "oloproof.dataset",
    "open_project_ledger": "oloproof.store",
    "plan_run": "oloproof.runner",
    "execute_run": "oloproof.runner",
    "read_run_report": "oloproof.stored_runs",
    "compare_runs": "oloproof.compare",
    "diagnose": "oloproof.diagnosis.run",
    "evaluate": "oloproof.api",
    "RunReport": "oloproof.report",
}

if TYPE_CHECKING:
    from oloproof.api import evaluate
    from oloproof.compare import compare_runs
    from oloproof.config import load_config
    from oloproof.dataset import load_dataset
    from oloproof.diagnosis.run import diagnose
    from oloproof.models import ModelClient
    from oloproof.report import RunReport
    from oloproof.results import Interval, Verdict
    from oloproof.runner import execute_run, plan_run
    from oloproof.sdk import (
        Citations,
        Context,
        ContextItem,
        DroppedItem,
        Passage,
        Recorder,
        Retrieval,
        current_case,
        rag_system,
        system,
    )
    from oloproof.store import open_project_ledger
    from oloproof.stored_runs import read_run_report


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'oloproof' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "ArtifactError",
    "Citations",
    "ConfigError",
    "Context",
    "ContextItem",
    "DatasetError",
    "DroppedItem",
    "Interval",
    "LedgerAccessError",
    "ModelClient",
    "OloproofError",
    "Passage",
    "Recorder",
    "Retrieval",
    "RunReport",
    "UnknownIdError",
    "Verdict",
    "compare_runs",
    "current_case",
    "diagnose",
    "evaluate",
    "execute_run",
    "load_config",
    "load_dataset",
    "open_project_ledger",
    "plan_run",
    "rag_system",
    "read_run_report",
    "system",
]
