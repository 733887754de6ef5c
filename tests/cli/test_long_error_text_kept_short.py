"""An exception of user code whose text (`__str__`) is megabytes long is recorded with the first
65,536 characters of it, saying how many more were left out, through the real CLI.

The probe: a system raising an exception whose `__str__` gave 20 MB stored all of it in the
case's error record (a 20 MB ledger from a two-case run), and `inspect --case` printed it all
and `export --format jsonl` wrote it all, for every case it failed; one raised while the
system's module was imported was printed whole on stderr. Now each keeps the head, never cut
part way through a configured secret.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, oloproof, toy_project

LONG = 2_000_000
KEPT = 65_536
SECRET = "s3cr3t-t0ken-vAlue-42"

APP = """
import os

from oloproof import system


class Long(Exception):
    def __str__(self):
        if "SIZE" in os.environ:
            return "z" * int(os.environ["SIZE"])
        # The secret straddles where the message is cut.
        return "x" * (KEPT - 5) + os.environ["DEMO_API_KEY"] + "y" * LONG


if os.environ.get("AT_IMPORT"):
    raise Long()


@system(name="toy", version="1")
def run(case):
    if case["q"] == "long":
        raise Long()
    return {"answer": case["q"]}
""".replace("KEPT", str(KEPT)).replace("LONG", str(LONG))

ENV = {"DEMO_API_KEY": SECRET}
LEFT_OUT = f" [... {len(SECRET) + LONG:,} more characters not kept ...]"


def project(root: Path) -> Path:
    toy_project(root, config=TOY_CONFIG.replace("policy: policy.yaml\n", ""))
    (root / "app.py").write_text(APP)
    case = {"id": "c2", "input": {"q": "long"}, "expected": {"answer": "x"}}
    with (root / "cases.jsonl").open("a") as cases:
        cases.write(json.dumps(case) + "\n")
    return root


def exported_message(root: Path, run_id: str) -> str:
    """Case c2's error message as ``export --format jsonl`` writes it."""
    exported = oloproof("export", run_id, "--format", "jsonl", "--output", "out", cwd=root)
    assert exported.code == 0, exported.err
    rows = [json.loads(line) for line in (root / "out" / "cases.jsonl").read_text().splitlines()]
    (errored,) = (row for row in rows if row["case_id"] == "c2")
    return str(errored["error_message"])


def assert_kept_short(message: str) -> None:
    # The secret is left out whole where the cut would fall inside it, never in part.
    assert message == "x" * (KEPT - 5) + LEFT_OUT
    assert SECRET[:5] not in message


def test_a_systems_long_error_is_kept_short(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    done = oloproof("run", cwd=root, env=ENV)
    assert done.code == 0, done.out + done.err
    run_id = done.lines[0].split()[1]
    shown = oloproof("inspect", run_id, "--case", "c2", cwd=root, env=ENV)
    assert shown.code == 0, shown.err
    assert len(shown.out) < 2 * KEPT  # was over 2,000,000
    assert LEFT_OUT in shown.out
    assert_kept_short(exported_message(root, run_id))


def test_a_long_error_at_import_is_kept_short(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    done = oloproof("run", cwd=root, env={**ENV, "AT_IMPORT": "1"})
    assert done.code == 2, done.out + done.err
    assert len(done.err) < 2 * KEPT  # was over 2,000,000
    assert done.err.endswith(LEFT_OUT + "\n")


@pytest.mark.parametrize("size", [KEPT - 1, KEPT])
def test_an_error_up_to_the_limit_is_kept_whole(tmp_path: Path, size: int) -> None:
    root = project(tmp_path / "p")
    done = oloproof("run", cwd=root, env={"SIZE": str(size)})
    assert done.code == 0, done.out + done.err
    assert exported_message(root, done.lines[0].split()[1]) == "z" * size
