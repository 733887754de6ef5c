"""``plan_run``'s ``overrides`` are set in the settings as the file wrote them and checked as the
file is, the checks made after validation included: a model system's ``timeout_s`` past the
case's is refused naming both, and a ``prompt_file`` that is no regular file is refused at
once, each named as the override that set it (not at a line of the file, which says otherwise). The call runs in a Python process of its own, as a user's script would.

(Before: overrides were checked by the models alone: ``{"system.model.timeout_s": 1000}`` was
taken under a case timeout of 120 s, a call timeout that could never apply; and
``{"system.model.prompt_file": "/dev/zero"}`` read /dev/zero without end: plan_run never
returned.)
"""

from __future__ import annotations

from pathlib import Path

from tests.oloproof.test_python_settings_checked_as_written import CONFIG
from tests.support import SAID, api_said

SCRIPT = (
    """
import json, oloproof
"""
    + SAID
    + """
for overrides in (
    {"system.model.timeout_s": 1000},
    {"system.model.prompt_file": "/dev/zero", "system.model.prompt": None},
    {"system.model.timeout_s": 100},
):
    print(json.dumps(said(lambda: oloproof.plan_run("oloproof.yaml", overrides=overrides))))
"""
)


def test_overrides_meet_the_checks_the_file_meets(tmp_path: Path) -> None:
    (tmp_path / "oloproof.yaml").write_text(CONFIG)
    (tmp_path / "cases.jsonl").write_text(
        '{"id": "c1", "input": {"q": "x"}, "expected": {"answer": "x"}}\n'
    )
    assert api_said(SCRIPT, tmp_path) == [
        [
            "ConfigError",
            "plan_run(): overrides: system.model.timeout_s: 1000 s is longer than a case may take, "
            "timeout_s: 120 s (its default), which stops the case first: this timeout, and "
            "every retry after a call that reached it, would never apply; give at most 120 s, "
            "or a longer timeout_s for the case",
        ],
        [
            "ConfigError",
            "plan_run(): overrides: system.model.prompt_file: /dev/zero: cannot read it (a character "
            "device, not a regular file)",
        ],
        ["returned", "RunPlan"],
    ]
