"""A key the system's module reads from the environment is no part of its identity.

The fingerprint of a callable system takes the values of the module-level names its code reads
(``KEY = os.environ["SEARCH_KEY"]``), each stored with the run as a digest of the value. For a
key the project keeps out (declared under ``secrets:``, or a variable named like a
credential), the ledger held an unsalted digest of it (``"app:KEY": ["app.py", "a9bd…"]``),
against which any guess could be checked offline; and a key rotated read as the code changed:
``oloproof run --dry-run`` said ``constant KEY in app.py changed`` and every case ran again,
none taken from the cache.

A secret in such a value is now taken as ``[redacted]``, as wherever the run stores it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

from ledger import open_ledger

APP = """
import os

from oloproof import system

KEY = os.environ["{name}"]
SETTINGS = {{"endpoint": "https://search.example/v1?key=" + os.environ["{name}"], "top_k": 3}}


@system(name="toy", version="1")
def run(case):
    assert KEY and SETTINGS
    return {{"answer": case["q"]}}
"""

CONFIG = """\
system: {name: toy, version: "1", callable: app:run}
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
secrets: [SVC]
"""


def _constants(root: Path, env: dict[str, str]) -> tuple[dict[str, object], list[int]]:
    done = oloproof("run", "--json", cwd=root, env=env)
    assert done.code == 0, done.err
    report = json.loads(done.out)
    with open_ledger(root / ".oloproof") as ledger:
        (body,) = (
            e.body for _, e in ledger.events("oloproof.run") if e.body["run_id"] == report["run_id"]
        )
    return body["fingerprints"]["callable"]["constants"], report["cache"]["execution"]


@pytest.mark.parametrize("name", ["SVC", "SEARCH_API_KEY"])
def test_a_rotated_key_leaves_the_identity_as_it_was(tmp_path: Path, name: str) -> None:
    root = toy_project(tmp_path / "p", config=CONFIG)
    (root / "app.py").write_text(APP.format(name=name))
    old = {"SVC": "svc-Q7x9-hidden-old", "SEARCH_API_KEY": "svc-Q7x9-hidden-old"}
    new = {"SVC": "svc-Q7x9-hidden-new", "SEARCH_API_KEY": "svc-Q7x9-hidden-new"}
    before, _ = _constants(root, old)
    planned = oloproof("run", "--dry-run", cwd=root, env=new)
    assert "Cases: 0 of 1 would execute; 1 reused from the execution cache" in planned.out, (
        planned.out
    )
    after, (hits, misses, _) = _constants(root, new)
    assert set(after) == {"app:KEY", "app:SETTINGS"}
    assert after == before  # a digest of "[redacted]" each time: nothing of either key
    assert (hits, misses) == (1, 0)
