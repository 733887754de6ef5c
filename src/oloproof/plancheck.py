"""Checks a plan makes of its inputs together, beyond what each file's own schema checks.

Each refuses input that would otherwise be accepted and then quietly mean something else, or
fail once cases are already recorded: a slice no case can fill (a misspelt key is an empty
slice), an HTTP header that reads an environment variable which is not set, or that resolves to
a name or value HTTP cannot carry (every case would fail at its first call).
"""

from __future__ import annotations

import os
from pathlib import Path

from oloproof.config import ProjectConfig
from oloproof.dataset import Dataset
from oloproof.errors import ConfigError
from oloproof.metrics import slice_value


def check_slices(config: ProjectConfig, config_path: Path, dataset: Dataset) -> None:
    """Refuse a ``metadata.KEY`` slice no case can fill: a misspelt key is an empty slice."""
    for index, name in enumerate(config.slices):
        if not name.startswith("metadata."):
            continue
        where = config.location("slices", index, path=config_path)
        parts = name.split(".")[1:]
        if parts[0] not in dataset.metadata_keys:
            keys = ", ".join(sorted(dataset.metadata_keys))
            found = f"the cases' metadata keys: {keys}" if keys else "no case has metadata"
            raise ConfigError(
                f"{where}: slices: {name}: no case has the metadata key {parts[0]!r} ({found})"
            )
        if len(parts) > 1 and all(
            slice_value(name, {"metadata": c.metadata}) == "(none)" for c in dataset.cases
        ):
            raise ConfigError(f"{where}: slices: {name}: no case has a value at {name}")


def check_headers(config: ProjectConfig, config_path: Path) -> None:
    """Refuse an HTTP header that cannot be sent as it resolves here: one reading an environment
    variable which is not set, or whose name or value HTTP does not allow."""
    if config.system.http is None:
        return
    from oloproof.systems.http import first_header_fault

    found = first_header_fault(config.system.http.headers, os.environ)
    if found is not None:
        header, fault = found
        where = config.location("system", "http", "headers", header, path=config_path)
        raise ConfigError(f"{where}: {fault.text}")
