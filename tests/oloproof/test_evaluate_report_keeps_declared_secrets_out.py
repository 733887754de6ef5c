"""The report ``evaluate`` returns holds a declared secret as the ledger does, ``[redacted]``:
it is the report ``read_run_report`` reads from the ledger, and what ``oloproof run`` prints.

Measured before: with ``secrets: [CITY_NAME]`` and ``CITY_NAME=Amsterdam123``, a case whose
``metadata.city`` is that value, and ``slices: [metadata.city]``, ``evaluate(filters=
["metadata.city=Amsterdam123"])`` returned a report whose ``subset.filters`` and slice row said
``Amsterdam123`` (in ``to_json()`` and its repr), where the ledger, ``read_run_report`` and
the CLI (``Subset: 3 of 6 cases (metadata.city=[redacted])``) said ``[redacted]``. Runs in a
Python process of its own."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import TOY_CONFIG, api_said, toy_project

SECRET = "Amsterdam123"

SCRIPT = """
import json, oloproof
for arguments in ({"filters": ["metadata.city=Amsterdam123"]}, {"repeats": 2}):
    report = oloproof.evaluate(**arguments)
    with oloproof.open_project_ledger(".", create=False) as ledger:
        stored = oloproof.read_run_report(ledger, report.run_id)
    print(json.dumps([report.to_json(), stored.to_json(), repr(report)]))
"""


def test_the_returned_report_holds_a_declared_secret_as_the_ledger_does(
    tmp_path: Path, monkeypatch
) -> None:
    config = TOY_CONFIG + "secrets: [CITY_NAME]\nslices: [metadata.city]\n"
    root = toy_project(tmp_path / "toy", config=config)
    with (root / "cases.jsonl").open("w") as cases:
        for i in range(6):
            city = SECRET if i < 3 else "Paris"
            case = {"id": f"c{i}", "input": {"q": "x"}, "expected": {"answer": "x"}}
            cases.write(json.dumps({**case, "metadata": {"city": city}}) + "\n")
    monkeypatch.setenv("CITY_NAME", SECRET)
    filtered, repeated = api_said(SCRIPT, root)
    for returned, stored, shown in (filtered, repeated):
        assert returned == stored
        assert SECRET not in json.dumps(returned) + shown
    assert filtered[0]["subset"]["filters"] == ["metadata.city=[redacted]"]
    assert {row["value"] for row in repeated[0]["slices"]} == {"[redacted]", "Paris"}
