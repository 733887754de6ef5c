"""A bare number YAML 1.1 and YAML 1.2 read differently is refused, through the real CLI.

PyYAML reads YAML 1.1: ``017`` is the octal number 15, ``1:30`` is 90 (base 60), ``1_000`` is
1000, and ``1e-1`` (no dot, no sign in the exponent) is text. YAML 1.2 readers, and anyone
reading the file, take ``017`` for 17, ``1:30`` and ``1_000`` for text and ``1e-1`` for 0.1.
Before the fix ``max_failures: 017`` allowed 15 failures and the gate passed (exit 0), and
``concurrency: 1:30`` ran 90 cases at once; ``min: 1e-1`` was refused as "Input should be a
valid number", which does not say why. A bare date is a date to YAML 1.1 alone, too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, oloproof, toy_project

CONFIG = TOY_CONFIG
POLICY = """\
version: 1
rules:
  - id: floor
    metric: echo
    kind: observed_count
    max_failures: 0
"""


def _project(root: Path, config: str = CONFIG, policy: str = POLICY) -> Path:
    return toy_project(root, config=config, policy=policy, cases=3)


REFUSED = {
    "octal in a policy": (
        "policy.yaml",
        POLICY.replace("max_failures: 0", "max_failures: 017"),
        "policy.yaml, line 6: rules.0.max_failures: a bare 017 is read by YAML 1.1 as the "
        "octal number 15 and by YAML 1.2 as 17; write 17, or 15 if octal is meant",
    ),
    "base 60": (
        "oloproof.yaml",
        CONFIG.replace("concurrency: 2", "concurrency: 1:30"),
        "oloproof.yaml, line 5: concurrency: a bare 1:30 is read by YAML 1.1 as the number 90 "
        'and by YAML 1.2 as text; write 90, or "1:30" for the text',
    ),
    "underscores": (
        "oloproof.yaml",
        CONFIG + "timeout_s: 1_000\n",
        "oloproof.yaml, line 9: timeout_s: a bare 1_000 is read by YAML 1.1 as the number 1000 "
        'and by YAML 1.2 as text; write 1000, or "1_000" for the text',
    ),
    "an exponent without a dot": (
        "policy.yaml",
        POLICY.replace("kind: observed_count\n    max_failures: 0", "min: 1e-1"),
        "policy.yaml, line 5: rules.0.min: a bare 1e-1 is read by YAML 1.1 as text and by "
        'YAML 1.2 as the number 0.1; write 0.1, or "1e-1" for the text',
    ),
    "a YAML 1.2 octal in an inline schema": (
        "oloproof.yaml",
        CONFIG.replace(
            "policy:",
            "  - {type: json_schema, criterion: shaped, schema: {enum: [0o17]}}\npolicy:",
        ),
        "oloproof.yaml, line 8: evaluators.1.schema.enum.0: a bare 0o17 is read by YAML 1.1 as "
        'text and by YAML 1.2 as the number 15; write 15, or "0o17" for the text',
    ),
    # Was "system.version: Input should be a valid string", which does not say why.
    "a date": (
        "oloproof.yaml",
        CONFIG.replace('version: "1"', "version: 2024-01-01"),
        "oloproof.yaml, line 3: system.version: a bare 2024-01-01 is read by YAML 1.1 as a date "
        'and by YAML 1.2 as text; write "2024-01-01" for the text',
    ),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_number_read_two_ways_is_refused(tmp_path: Path, name: str) -> None:
    file, text, sentence = REFUSED[name]
    root = _project(tmp_path)
    (root / file).write_text(text)
    result = oloproof("run", cwd=root)
    assert (result.code, result.out, result.err) == (2, "", f"error: {root}/{sentence}\n")
    assert not (root / ".oloproof").exists()


def test_numbers_every_reader_reads_alike_are_taken(tmp_path: Path) -> None:
    # 0.5e+0 has a dot and a signed exponent (both versions read 0.5); 00 is 0 in both; a
    # number quoted or tagged !!str is text, as written.
    policy = POLICY.replace("max_failures: 0", "max_failures: 00").replace(
        "version: 1\n", "version: 1\nconfidence_level: 9.5e-1\n"
    )
    config = CONFIG.replace('version: "1"', "version: !!str 017")
    root = _project(tmp_path, config, policy)
    result = oloproof("run", cwd=root)
    assert result.code == 0, result.err
    assert "Gate: PASS (exit 0)" in result.lines
