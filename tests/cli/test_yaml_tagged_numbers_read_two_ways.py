"""A quoted number given a number's tag (``!!int '017'``) that YAML 1.1 and YAML 1.2 read
differently is refused, through the real CLI, as the bare number is.

The tag makes a YAML reader read the quoted text as it reads a bare number: PyYAML (YAML 1.1)
reads ``!!int '017'`` as the octal number 15, a YAML 1.2 reader as 17. Before the fix the
check on numbers looked at bare words alone: ``max_failures: !!int '017'`` allowed 15 failures
where the file reads 17, and ``concurrency: !!int '1:30'`` ran 90 cases at once.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, TOY_POLICY, oloproof, toy_project

COUNT = TOY_POLICY.replace("min: 0.5", "kind: observed_count, max_failures: 0")

REFUSED = {
    "octal": (
        "policy.yaml",
        COUNT.replace("max_failures: 0", "max_failures: !!int '017'"),
        "policy.yaml, line 3: rules.0.max_failures: '017' tagged !!int is read by YAML 1.1 as "
        "the octal number 15 and by YAML 1.2 as 17; write 17, or 15 if octal is meant",
    ),
    "base 60": (
        "oloproof.yaml",
        TOY_CONFIG.replace("concurrency: 2", 'concurrency: !!int "1:30"'),
        'oloproof.yaml, line 5: concurrency: "1:30" tagged !!int is read by YAML 1.1 as the '
        'number 90 and by YAML 1.2 as text; write 90, or "1:30" for the text',
    ),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_tagged_number_read_two_ways_is_refused(tmp_path: Path, name: str) -> None:
    file, text, sentence = REFUSED[name]
    root = toy_project(tmp_path, policy=COUNT, cases=3)
    (root / file).write_text(text)
    result = oloproof("run", cwd=root)
    assert (result.code, result.out, result.err) == (2, "", f"error: {root}/{sentence}\n")
    assert not (root / ".oloproof").exists()


def test_a_tagged_number_read_alike_is_taken(tmp_path: Path) -> None:
    policy = COUNT.replace("max_failures: 0", "max_failures: !!int '0'")
    root = toy_project(tmp_path, policy=policy, cases=3)
    result = oloproof("run", cwd=root)
    assert result.code == 0, result.err
