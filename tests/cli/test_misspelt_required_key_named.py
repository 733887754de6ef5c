"""A required key of a policy written misspelt, or holding a character that does not show, is
refused naming the key as written, at its own line, with the key it looks like, through the real
CLI.

The probe: ``rule:`` for ``rules:`` was refused as ``line 1: rules: required key is missing``,
at the line of the mapping that lacks it and not the line of the key written; ``metirc: echo``
in a rule as ``rules.0.metric: required key is missing``; and ``metric:`` holding a byte-order
mark at its start (which shows as nothing) as ``rules.0.metric: required key is missing``
beside a file that, in any editor, reads ``metric: echo``. The unknown key pydantic also
reported was left unsaid. A required key missing beside an unknown key like it is now that
unknown key: ``line 2: rule: unknown key; did you mean 'rules'?``. A key missing with nothing
like it written is still said to be missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

RULE = "{id: floor, metric: echo, min: 0.5}"
POLICIES = {
    "rules misspelt": (
        f"version: 1\nrule:\n  - {RULE}\n",
        "line 2: rule: unknown key; did you mean 'rules'?",
    ),
    "version misspelt": (
        f"verison: 1\nrules:\n  - {RULE}\n",
        "line 1: verison: unknown key; did you mean 'version'?",
    ),
    "metric misspelt": (
        "version: 1\nrules:\n  - {id: floor, metirc: echo, min: 0.5}\n",
        "line 3: rules.0.metirc: unknown key; did you mean 'metric'?",
    ),
    "metric holding a byte-order mark": (
        "version: 1\nrules:\n  - {id: floor, \ufeffmetric: echo, min: 0.5}\n",
        "line 3: rules.0: unknown key '\\ufeffmetric' starts with U+FEFF ZERO WIDTH NO-BREAK "
        "SPACE, which does not show where the key is printed (it looks like 'metric'); write "
        "the key without it",
    ),
    "nothing like it": ("version: 1\n", "line 1: rules: required key is missing"),
}


@pytest.mark.parametrize("name", list(POLICIES))
def test_a_required_key_written_otherwise_is_named_as_written(tmp_path: Path, name: str) -> None:
    text, said = POLICIES[name]
    toy_project(tmp_path, policy=text)
    done = oloproof("run", cwd=tmp_path)
    assert (done.code, done.out) == (2, "")
    assert done.err == f"error: {tmp_path}/policy.yaml, {said}\n"
    assert not (tmp_path / ".oloproof").exists()
