"""The functions that read recorded runs take an open ledger; given the project's folder
instead (the likeliest slip) each raises one ``ConfigError`` saying what to pass, where each
raised ``AttributeError: 'str' object has no attribute 'get_ref'`` from deep inside. And
``compare_runs`` takes its policy file as a str as well as a Path, as ``evaluate`` does, where
a str raised ``AttributeError: 'str' object has no attribute 'resolve'``. Each call runs in a
Python process of its own, as a user's script would."""

from __future__ import annotations

from pathlib import Path

from tests.support import SAID, api_said, oloproof

SCRIPT = (
    """
import json, pathlib, oloproof
"""
    + SAID
    + """

gold = dict(intervention="gold-context", criterion="answer_correct")
print(json.dumps(said(lambda: oloproof.read_run_report(".", "latest"))))
print(json.dumps(said(lambda: oloproof.compare_runs(pathlib.Path("."), "latest", "latest"))))
print(json.dumps(said(lambda: oloproof.diagnose(".", "latest", **gold))))
print(json.dumps(said(lambda: oloproof.read_run_report(None, "latest"))))
with oloproof.open_project_ledger(".", create=False) as ledger:
    first = oloproof.read_run_report(ledger, "latest")
    oloproof.evaluate("oloproof.yaml")
    compared = lambda: oloproof.compare_runs(
        ledger, "latest", first.run_id, policy_path="compare.yaml"
    )
    print(json.dumps(said(compared)))
"""
)

ASK_FOR_A_LEDGER = (
    "ledger is an open ledger (oloproof.open_project_ledger(folder)), not {given}; "
    "close it when done, or use it in a with block"
)


def test_a_folder_for_a_ledger_is_refused_and_a_str_policy_taken(support: Path) -> None:
    assert oloproof("run", cwd=support).code == 3
    said = api_said(SCRIPT, support)
    assert said == [
        ["ConfigError", ASK_FOR_A_LEDGER.format(given="the path '.'")],
        ["ConfigError", ASK_FOR_A_LEDGER.format(given="the path PosixPath('.')")],
        ["ConfigError", ASK_FOR_A_LEDGER.format(given="the path '.'")],
        ["ConfigError", ASK_FOR_A_LEDGER.format(given="None")],
        ["returned", "Comparison"],
    ]
