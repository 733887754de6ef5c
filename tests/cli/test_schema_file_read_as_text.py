"""A JSON Schema file that is not UTF-8 text is refused in one sentence, through the real CLI.

The probe: a `schema_path` file starting with the bytes of a UTF-16 byte-order mark ended
`oloproof run` in a `UnicodeDecodeError` traceback. It is now refused as every settings file
is (the file, the line, the byte; exit 2, nothing written), and the file is read as they are:
no pipe, device or folder, nothing past the size a settings file may hold.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

CONFIG = """\
system: {name: toy, version: "1", callable: app:run}
evaluators:
  - {type: json_schema, criterion: shaped, schema_path: shape.json}
policy: policy.yaml
"""
POLICY = "version: 1\nrules:\n  - {id: floor, metric: shaped, min: 0.5}\n"


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b'\xff\xfe{"type": "object"}', "shape.json, line 1: not UTF-8 text (byte 0)"),
        (
            b'{"type": "object",\n "title": "caf\xe9"}',
            "shape.json, line 2: not UTF-8 text (byte 33)",
        ),
    ],
)
def test_a_schema_file_that_is_not_utf8_is_refused(
    tmp_path: Path, content: bytes, said: str
) -> None:
    root = toy_project(tmp_path / "p", config=CONFIG, policy=POLICY)
    (root / "shape.json").write_bytes(content)
    done = oloproof("run", cwd=root)
    # Named at the evaluator entry that reads it too (``runner.entry_located``).
    at = f"{root}/oloproof.yaml, line 3: evaluators.0"
    assert (done.code, done.err) == (2, f"error: {at}: {root}/{said}\n"), done.out
    assert not (root / ".oloproof").exists()


def test_a_schema_file_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", config=CONFIG, policy=POLICY)
    (root / "shape.json").mkdir()
    done = oloproof("run", cwd=root)
    assert done.code == 2 and "Traceback" not in done.err, done.err
    assert "shape.json" in done.err and "directory" in done.err.lower()
    assert not (root / ".oloproof").exists()
