"""A release policy file that holds no mapping at its top level is refused naming its line and
what it holds, through the real CLI, as a comparison policy's is.

The probe: an empty policy file, one of comments only (a policy still to be written), one whose
rules were written as a bare list, and one holding a single word were each refused (exit 2) as
``FILE: expected a policy mapping at the top level``: no line and no key, where every other
refusal of the file, and the same refusal of a comparison policy, said ``FILE, line N: KEY: …``
and what was found instead. Each now says ``FILE, line N: (top level): expected a policy
mapping (version, rules), found …``. Nothing is recorded for any of them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

FILES = {
    "empty": ("", "line 1: (top level): expected a policy mapping (version, rules), found nothing"),
    "comments only": (
        "# the release rules, to be written\n",
        "line 1: (top level): expected a policy mapping (version, rules), found nothing",
    ),
    "rules as a bare list": (
        "# rules\n- {id: floor, metric: echo, min: 0.5}\n",
        "line 2: (top level): expected a policy mapping (version, rules), found a list",
    ),
    "a word": (
        "version 1\n",
        "line 1: (top level): expected a policy mapping (version, rules), found text",
    ),
}


@pytest.mark.parametrize("name", list(FILES))
def test_a_policy_that_is_no_mapping_is_named_at_its_line(tmp_path: Path, name: str) -> None:
    text, said = FILES[name]
    toy_project(tmp_path, policy=text)
    done = oloproof("run", cwd=tmp_path)
    assert (done.code, done.out, done.err) == (2, "", f"error: {tmp_path}/policy.yaml, {said}\n")
    assert not (tmp_path / ".oloproof").exists()


def test_the_same_through_the_policy_option(tmp_path: Path) -> None:
    toy_project(tmp_path)
    policy = tmp_path / "other.yaml"
    policy.write_text("# nothing yet\n")
    done = oloproof("run", "--policy", str(policy), cwd=tmp_path)
    assert (done.code, done.out) == (2, "")
    assert done.err == (
        f"error: {policy}, line 1: (top level): expected a policy mapping (version, rules), "
        "found nothing\n"
    )
    assert not (tmp_path / ".oloproof").exists()
