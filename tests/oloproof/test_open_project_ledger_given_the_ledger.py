"""``open_project_ledger`` given the project's ledger folder (``.oloproof``) instead of the
project's refuses it by name, and writes nothing there. Measured before: it made a second, empty
ledger inside the project's (``.oloproof/.oloproof``) and returned it, so a run a caller then
executed into it was listed by no ``oloproof runs`` in the project, and ``read_run_report(ledger,
"latest")`` found no run. The calls run in a Python process of their own."""

from __future__ import annotations

from pathlib import Path

from tests.support import SAID, api_said, oloproof, toy_project

SCRIPT = (
    SAID
    + """
import json, oloproof
for create in (True, False):
    print(json.dumps(said(lambda: oloproof.open_project_ledger(".oloproof", create=create))))
"""
)


def test_the_ledger_folder_given_as_the_project_is_refused(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "toy")
    assert oloproof("run", cwd=root).code == 3  # one case: the gate blocks for want of evidence
    refused = [
        "ConfigError",
        "open_project_ledger(): root is a project's folder, not its ledger's: .oloproof is the "
        "ledger of .; give that",
    ]
    assert api_said(SCRIPT, root) == [refused, refused]
    assert not (root / ".oloproof" / ".oloproof").exists()
