"""A bare ``=`` in oloproof.yaml, which YAML 1.1 types as its "value" key, is refused in one
located sentence saying to quote it; exit 2. Real CLI.

(Before: ``error: oloproof.yaml, line 3: not valid YAML (could not determine a constructor for
the tag 'tag:yaml.org,2002:value')``, PyYAML's words, naming neither the key nor the fix.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

CONFIG = """\
system: {{name: toy, version: "1", callable: app:run}}
dataset: cases.jsonl
slices: [{slice}]
"""


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "=",
            "a bare = is read by YAML 1.1 as its 'value' key, which no setting can hold; "
            'write "=" for the text',
        ),
        (
            "!!value x",
            "x tagged !!value is read by YAML 1.1 as its 'value' key, which no setting "
            "can hold; remove the tag",
        ),
    ],
)
def test_a_bare_equals_sign_is_said_at_its_key(tmp_path: Path, written: str, said: str) -> None:
    root = toy_project(tmp_path / "p", config=CONFIG.format(slice=written))
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == f"error: {root / 'oloproof.yaml'}, line 3: slices.0: {said}\n"
    assert not (root / ".oloproof").exists()
