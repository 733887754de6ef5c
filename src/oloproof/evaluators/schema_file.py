"""Reading the JSON Schema file a ``json_schema`` evaluator's ``schema_path`` names.

The file is read once, when the run is planned, and checked as an inline schema is
(``oloproof.evaluator_config.check_json_schema``). A refusal names the file and, when the
problem has a place in it (a ``$ref``, a ``$schema``), that key's line and path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from oloproof.errors import ConfigError
from oloproof.evaluator_config import SchemaProblem, check_json_schema
from oloproof.jsonkeys import DuplicateKey, unique_keys
from oloproof.strictjson import JSON_SPACE, unparsed
from oloproof.yamlfile import read_file


def load_schema(base_dir: Path, schema_path: str) -> dict[str, Any]:
    """The schema in ``base_dir / schema_path``; ``ConfigError`` when it cannot be used."""
    path = base_dir / schema_path
    raw = read_file(path, what="a JSON Schema file")  # no pipe, device or giant file
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}, line {at}: not UTF-8 text (byte {exc.start})") from None
    try:
        schema = json.loads(text, object_pairs_hook=unique_keys)
    except DuplicateKey as exc:
        raise ConfigError(f"the JSON Schema file is ambiguous: {exc}", where=str(path)) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"the JSON Schema file is not JSON: {unparsed(exc)} at line {exc.lineno}",
            where=str(path),
        ) from None
    except RecursionError:  # Python's parser recurses once per level of nesting
        too_deep = "the JSON Schema file is nested too deeply to read"
        raise ConfigError(too_deep, where=str(path)) from None
    if not isinstance(schema, dict):
        raise ConfigError("a JSON Schema file must hold an object", where=str(path))
    try:
        check_json_schema(schema)
    except SchemaProblem as exc:
        line = key_line(text, exc.at)
        where = str(path) if line is None else f"{path}, line {line}"
        raise ConfigError(str(exc), where=where) from None
    return schema


def key_line(text: str, at: tuple[str | int, ...]) -> int | None:
    """The 1-based line of the last key of ``at`` in the JSON ``text`` (of an item, for an
    index), or None when ``at`` names nothing there. ``json`` keeps no positions, so the
    path is followed through the text, each value passed over by the decoder."""
    decoder = json.JSONDecoder()
    position = _skip_space(text, 0)
    start = position
    for step in at:
        found = _member(text, position, step, decoder)
        if found is None:
            return None
        start, position = found
    return text.count("\n", 0, start) + 1


def _member(
    text: str, position: int, step: str | int, decoder: json.JSONDecoder
) -> tuple[int, int] | None:
    """Where the member ``step`` of the object (or item of the array) at ``position`` starts,
    and where its value starts; None when there is no such member."""
    opening = text[position : position + 1]
    if opening not in ("{", "[") or (opening == "{") != isinstance(step, str):
        return None
    closing = "}" if opening == "{" else "]"
    position = _skip_space(text, position + 1)
    index = 0
    while text[position : position + 1] not in ("", closing):
        start = position
        if opening == "{":
            key, position = decoder.raw_decode(text, position)
            position = _past(text, position, ":")
        else:
            key, index = index, index + 1
        if key == step:
            return start, position
        _, position = decoder.raw_decode(text, position)
        position = _past(text, position, ",")
    return None


def _past(text: str, position: int, mark: str) -> int:
    """The position after ``mark`` (when it is there) and the whitespace around it."""
    position = _skip_space(text, position)
    if text.startswith(mark, position):
        position = _skip_space(text, position + len(mark))
    return position


def _skip_space(text: str, position: int) -> int:
    while text[position : position + 1] and text[position] in JSON_SPACE:
        position += 1
    return position
