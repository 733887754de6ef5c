"""``load_dataset`` and ``open_project_ledger`` given a path whose name is too long for the file
system raise their own error naming it (``cannot read it (its name is too long)``), as
``load_config`` does, where they raised Python's bare ``OSError: [Errno 36] File name too
long`` (from ``Path.exists``), which is no ``OloproofError``. The calls run in a Python process
of their own."""

from __future__ import annotations

from pathlib import Path

from tests.support import SAID, api_said

SCRIPT = (
    SAID
    + """
import json, oloproof
long = "x" * 300
for call in [
    lambda: oloproof.load_dataset(long),
    lambda: oloproof.open_project_ledger(long),
    lambda: oloproof.open_project_ledger(long, create=False),
    lambda: oloproof.load_config(long),
]:
    print(json.dumps(said(call)))
"""
)


def test_a_name_too_long_is_refused_naming_it(tmp_path: Path) -> None:
    long = "x" * 300
    assert api_said(SCRIPT, tmp_path) == [
        ["DatasetError", f"{long}: cannot read it (its name is too long)"],
        [
            "LedgerAccessError",
            f"the ledger at {long}/.oloproof cannot be opened: its name is too long",
        ],
        [
            "LedgerAccessError",
            f"the ledger at {long}/.oloproof cannot be opened: its name is too long",
        ],
        ["ConfigError", f"{long}: cannot read it (its name is too long)"],
    ]
