"""Checks a plan makes of its inputs together, beyond what each file's own schema checks.

Each refuses input that would otherwise be accepted and then quietly mean something else, or
fail once cases are already recorded: a slice no case can fill (a misspelt key is an empty
slice), an ``expected_field`` no case has (a misspelt one excludes every case from its metric),
a retrieval metric with no case labelled in ``expected.relevant`` (the same, for its labels),
an HTTP header that reads an environment variable which is not set, or that resolves to
a name or value HTTP cannot carry (every case would fail at its first call), a staged system's
top_k above its depth (a cut that never cuts), a truncation slice with no budget to truncate.
A resumed run is held to the settings under ``system:`` it started with, those its identity
leaves out included.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from oloproof import strictjson
from oloproof.config import ProjectConfig, SystemConfig
from oloproof.dataset import Case, Dataset, lookalike_key, lookalike_refusal
from oloproof.errors import ConfigError
from oloproof.evaluators.fields import MISSING, parse_path, read_path
from oloproof.metrics import slice_datum, slice_text, slice_value
from oloproof.relevance import RANKING_EVALUATORS
from oloproof.subset import dotted_problem, held_as
from oloproof.suggest import did_you_mean
from oloproof.systems.base import System


def check_slices(config: ProjectConfig, config_path: Path, dataset: Dataset) -> None:
    """Refuse a ``metadata.KEY`` slice no case can fill: a misspelt key is an empty slice."""
    for index, name in enumerate(config.slices):
        if not name.startswith("metadata."):
            continue
        where = config.location("slices", index, path=config_path)
        parts = name.split(".")[1:]
        problem = dotted_problem(dataset.cases, name) if len(parts) > 1 else None
        if problem is not None:
            raise ConfigError(f"{where}: slices: {name}: {problem}")
        _one_kind_per_row(name, where, dataset)
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


def _one_kind_per_row(name: str, where: str, dataset: Dataset) -> None:
    """Refuse two cases whose values of slice ``name`` are of different kinds yet read as one
    row (``slice_value``): the number 1 and the string "1", the boolean true and the string
    "true", the string "(none)" and no value. The report shows the row's text alone, so the
    two cannot be told apart in it, nor is it known whether they were meant as one value.
    Values of one kind that read alike are equal (1 and 1.0 read "1" and "1.0": two rows).
    So is a case holding the slice's key written with other code points (``café`` with its
    accent decomposed: ``dataset.lookalike_key``), which would count as having no value."""
    parts = name.split(".")[1:]
    # Each row's first case by its position (the case is read again for the error alone): a
    # slice on a key of one value per case holds a row per case.
    first: dict[str, tuple[str, int]] = {}
    for index, case in enumerate(dataset.cases):
        alike = lookalike_key(case.metadata, parts)
        if alike is not None:
            holder = f"{dataset.path}, line {case.line}: case {case.id!r} has the metadata key"
            problem = lookalike_refusal(holder, alike, "the slice")
            raise ConfigError(f"{where}: slices: {name}: {problem}")
        body = {"metadata": case.metadata}
        datum = slice_datum(name, body)
        kind = "no value" if datum is None else strictjson.kind(datum)
        row = slice_text(datum)
        seen_kind, seen_at = first.setdefault(row, (kind, index))
        if seen_kind != kind:
            seen = dataset.cases[seen_at]
            held = f"{_held(seen_kind, seen, name)} on line {seen.line} (case {seen.id!r})"
            held += f" and as {_held(kind, case, name)} on line {case.line} (case {case.id!r})"
            raise ConfigError(
                f"{where}: slices: {name}: {dataset.path} holds it as {held}, which the report "
                f"would count in one row ({row}); write the value one way in both"
            )


def _held(kind: str, case: Case, name: str) -> str:
    """``the number 1``, ``the string "1"``, ``no value``: a slice value as a case holds it."""
    datum = slice_datum(name, {"metadata": case.metadata})
    return kind if datum is None else held_as(datum)


def check_expected_fields(config: ProjectConfig, config_path: Path, dataset: Dataset) -> None:
    """Refuse an evaluator's ``expected_field`` that no case's ``expected`` holds, even as null:
    a misspelt one (``answr``) excluded every case from its metric (``no_expected_value``), and
    a rule on it then blocked the gate for want of evidence, as if no case were labelled. A
    field some cases hold stays accepted: the others are cases nobody labelled, excluded."""
    named = {
        index: name
        for index, entry in enumerate(config.evaluators)
        if (name := getattr(entry, "expected_field", None)) is not None
    }
    paths = {index: parse_path(name) for index, name in named.items()}
    missing = set(named)
    for case in dataset.cases:  # the first case holds them all, as a rule
        missing = {i for i in missing if read_path(case.expected, paths[i]) is MISSING}
        if not missing:
            return
    index = min(missing)
    name = named[index]
    held = _held_fields(dataset, name.count(".") + 1)
    where = config.location("evaluators", index, "expected_field", path=config_path)
    raise ConfigError(
        f"{where}: evaluators.{index}: expected_field {name!r} of "
        f"{config.evaluators[index].criterion!r}: no case has it in expected, so every case "
        f"would be excluded from the metric ({_found(held)}){did_you_mean(name, held)}"
    )


def check_relevance_labels(config: ProjectConfig, config_path: Path, dataset: Dataset) -> None:
    """Refuse a retrieval metric when no case labels a passage in ``expected.relevant`` (absent,
    null or empty in every case): each case would be excluded (``no_relevance_labels``) and a
    rule on the metric blocked for want of evidence, as with an ``expected_field`` no case has;
    labels under a misspelt key (``relevent``) read so. Some cases labelled stay accepted."""
    ranking = [i for i, e in enumerate(config.evaluators) if e.type in RANKING_EVALUATORS]
    if not ranking or any(case.expected.get("relevant") for case in dataset.cases):
        return
    index = ranking[0]
    entry = config.evaluators[index]
    where = config.location("evaluators", index, path=config_path)
    raise ConfigError(
        f"{where}: evaluators.{index}: {entry.criterion!r} ({entry.type}) reads the relevance "
        "labels in expected.relevant, and no case has any there, so every case would be "
        f"excluded from the metric ({_found(_held_fields(dataset, 1))})"
    )


def _held_fields(dataset: Dataset, depth: int) -> list[str]:
    """The dotted paths ``depth`` keys deep that some case's ``expected`` holds, sorted."""
    return sorted({p for case in dataset.cases for p in _key_paths(case.expected, depth)})


def _found(held: list[str]) -> str:
    return f"the cases' expected fields: {', '.join(held)}" if held else "no case has any"


def _key_paths(value: Any, depth: int, above: str = "") -> Iterator[str]:
    """The dotted paths ``depth`` keys deep through the mappings of ``value`` (what an
    ``expected_field`` of that many parts can name)."""
    if not isinstance(value, Mapping):
        return
    for key, item in value.items():
        at = f"{above}{key}"
        if depth == 1:
            yield at
        else:
            yield from _key_paths(item, depth - 1, f"{at}.")


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


def check_cut(config: ProjectConfig, config_path: Path, system: System) -> None:
    """Refuse a staged system whose ``top_k`` (from oloproof.yaml or ``@rag_system``) is above
    its ``depth``: retrieve returns at most depth candidates, so the context's cut at top_k
    would never drop one, and the ``relevant_position`` slice and a diagnosis would read a cut
    the run never made. Most likely the two were swapped, or depth was left at a default."""
    from oloproof.systems.rag import RagSystem

    rag = config.system.rag
    if rag is None or not isinstance(system, RagSystem) or system.top_k <= system.depth:
        return
    # The key that set the larger top_k, or the smaller depth; else the class that did.
    key = "top_k" if rag.top_k is not None else "depth" if rag.depth is not None else "object"
    where = config.location("system", "rag", key, path=config_path)
    given = {
        n: "" if getattr(rag, n) is not None else " (from @rag_system)" for n in ("top_k", "depth")
    }
    raise ConfigError(
        f"{where}: system.rag: top_k {system.top_k}{given['top_k']} is above depth "
        f"{system.depth}{given['depth']}: retrieve returns at most {system.depth} candidates, "
        f"so none would ever be cut at top_k; give a top_k of {system.depth} or less, or a "
        f"depth of {system.top_k} to retrieve that many"
    )


def check_truncation_slice(config: ProjectConfig, config_path: Path, system: System) -> None:
    """Refuse the ``context_truncated`` slice of a staged system with no ``token_budget`` (in
    oloproof.yaml or ``@rag_system``): only the budget drops passages, so every case would
    read ``false``, a row that looks like a finding about truncation that never happened."""
    from oloproof.systems.rag import RagSystem

    if not isinstance(system, RagSystem) or system.token_budget is not None:
        return
    for index, name in enumerate(config.slices):
        if name == "context_truncated":
            where = config.location("slices", index, path=config_path)
            raise ConfigError(
                f"{where}: slices: context_truncated says whether the token budget dropped "
                "passages, and system.rag sets no token_budget (nor does @rag_system), so "
                "every case would read false; set a token_budget, or leave the slice out"
            )


def changed_system_settings(recorded: Mapping[str, Any], config: ProjectConfig) -> list[str]:
    """The settings under ``system:`` (dotted, as the project file nests them) in which
    ``config`` differs from the project file a run recorded (``recorded``: its ``config``).

    The system's identity, which keys its cache, leaves some out (an HTTP system's headers, its
    timeout and retries: a new token must not make every cached answer useless), so a run
    resumed after one changed would hold cases answered two ways. A header's ``${NAME}`` is
    compared as written: its value may be a secret, which no run records. A record this
    release cannot read (a setting since removed) gives none: the identity still holds.
    """
    try:
        then = SystemConfig.model_validate(recorded["system"])
    except (KeyError, ValidationError):
        return []
    return _differing(_dumped(then), _dumped(config.system), "system")


def _dumped(system: SystemConfig) -> Any:
    return system.model_dump(mode="json", by_alias=True)


def _differing(then: Any, now: Any, where: str) -> list[str]:
    if isinstance(then, dict) and isinstance(now, dict):
        keys = sorted(then.keys() | now.keys())
        return [p for k in keys for p in _differing(then.get(k), now.get(k), f"{where}.{k}")]
    return [] if then == now else [where]
