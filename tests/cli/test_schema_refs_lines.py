"""The line a refusal names in a `schema_path` file is the line of the offending key, however
the file is laid out (tabs, one line, keys and braces inside strings, arrays)."""

from __future__ import annotations

import pytest

from oloproof.evaluators.schema_file import key_line

TABBED = '{\n\t"description": "a { and a \\"$ref\\": here",\n\t"allOf": [\n\t\t{},\n\t\t{"$ref": "x.json"}\n\t]\n}'


@pytest.mark.parametrize(
    ("text", "at", "line"),
    [
        (TABBED, ("allOf", 1, "$ref"), 5),
        (TABBED, ("allOf", 0), 4),
        (TABBED, ("description",), 2),
        ('{"a": {"b": [1, {"$ref": "#/c"}]}}', ("a", "b", 1, "$ref"), 1),
        ('{\n"$schema"\n:\n"x",\n"b": 1}', ("$schema",), 2),
        ('{"a": {"$ref": "x"}}', ("a", "b"), None),
        ('{"a": [1]}', ("a", 3), None),
        ('{"a": [1]}', ("a", "0"), None),
    ],
)
def test_the_line_of_a_key_path(text: str, at: tuple[str | int, ...], line: int | None) -> None:
    assert key_line(text, at) == line
