"""An evaluator's spec is stored once, not in every judgment, and every reader sees it whole.

Checked through the real CLI on a real project ledger, with a `json_schema` evaluator whose
schema file is about 30 KB:

- its spec is one `oloproof.evaluator` event that each of its judgments refers to (a small
  spec, `contains`'s, stays in the judgment); a second run adds none;
- each judgment reads back with the whole spec (`inspect ADDRESS`, the store's reads, an archive
  imported into another project), and `verify` is satisfied;
- a damaged spec event is named by `verify`, and `inspect` of a judgment needing it refuses in
  one sentence;
- judgments an earlier release wrote, the spec in each (schema 1), still read and are reused.

(Before: every judgment copied the whole spec; with a 145 KB schema, one run of 2,000 cases
stored 260 MB, 130 KB a judgment; now 4 MB.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.ledger.tamper import flip_byte_of
from tests.support import oloproof, write_project

from ledger import decode, open_ledger
from oloproof import events as ev
from oloproof.store import APPLICATION

APP = """
from oloproof import system

@system(name="echo", version="1")
def run(case):
    return {"answer": case["q"]}
"""

CONFIG = """system: {name: echo, version: "VERSION", callable: app:run}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: said, field: answer, expected_field: answer}
  - {type: json_schema, criterion: shape, schema_path: reply.json}
"""

SCHEMA = {
    "type": "object",
    "properties": {
        f"field_{i}": {"type": "string", "description": f"what the reply holds under {i}"}
        for i in range(600)
    },
}

# An earlier release: today's code, writing each judgment whole at schema 1.
EARLIER_RELEASE = """
from oloproof import events, execute

events.SCHEMAS[events.JUDGMENT] = 1
execute.evaluator_part = lambda spec: None
from oloproof.cli.main import main

main()
"""


def project(root: Path) -> Path:
    write_project(
        root,
        app=APP,
        config=CONFIG.replace("VERSION", "1"),
        policy="version: 1\nrules:\n  - {id: r, metric: shape, min: 0.5}\n",
        cases=[
            {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}}
            for i in range(12)
        ],
    )
    (root / "reply.json").write_text(json.dumps(SCHEMA), encoding="utf-8")
    return root


def ok(root: Path, *args: str, command: tuple[str, ...] = ("-m", "oloproof")) -> str:
    done = oloproof(*args, cwd=root, command=command)
    assert done.code == 0, (args, done.code, done.err)
    return done.out


def new_version(root: Path, version: str) -> None:
    (root / "oloproof.yaml").write_text(CONFIG.replace("VERSION", version))


def judgments(root: Path) -> tuple[list[str], list[tuple[str, Any, dict[str, Any]]]]:
    """The evaluator events' addresses, and each judgment: address, stored event, as read."""
    specs: list[str] = []
    found: list[tuple[str, Any, dict[str, Any]]] = []
    with open_ledger(root / ".oloproof", app=APPLICATION, readonly=True) as ledger:
        specs = [address for address, _ in ledger.events(ev.EVALUATOR)]
        for address, event in ledger.events(ev.JUDGMENT):
            found.append((address, decode(ledger.get_bytes(address)), dict(event.body)))
    return specs, found


def test_a_large_spec_is_stored_once_and_read_back_whole(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    ok(root, "run")
    new_version(root, "2")
    ok(root, "run")

    specs, found = judgments(root)
    assert len(specs) == 1
    assert len(found) == 2 * 12 * 2
    for address, stored, read in found:
        body = stored["body"]
        if read["criterion"] == "shape":
            assert "evaluator" not in body and body["evaluator_ref"] == 1
            assert stored["schema"] == 2 and len(stored["refs"]) == 2
            assert "sha256:" + stored["refs"][1].hex() == specs[0]
            assert read["evaluator"]["schema"] == SCHEMA, address
        else:
            assert body["evaluator"]["type"] == "contains" and len(stored["refs"]) == 1
            assert read["evaluator"] == body["evaluator"]

    shape = next(address for address, _, read in found if read["criterion"] == "shape")
    assert '"field_599": {' in ok(root, "inspect", shape)
    assert ok(root, "verify").splitlines()[-1].endswith(": ok")

    ok(root, "ledger", "export", "latest", "--to", str(tmp_path / "run.oloarchive"))
    elsewhere = project(tmp_path / "elsewhere")
    ok(elsewhere, "ledger", "import", str(tmp_path / "run.oloarchive"))
    assert ok(elsewhere, "verify").splitlines()[-1].endswith(": ok")
    specs_there, imported = judgments(elsewhere)
    shapes = [read for _, _, read in imported if read["criterion"] == "shape"]
    assert specs_there == specs and len(shapes) == 12  # the run exported: the second
    assert all(read["evaluator"]["schema"] == SCHEMA for read in shapes)


def test_a_damaged_spec_is_named_and_refused_in_one_sentence(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    ok(root, "run")
    specs, found = judgments(root)
    with open_ledger(root / ".oloproof", readonly=True) as ledger:
        data = ledger.get_bytes(specs[0])
    flip_byte_of(root / ".oloproof", data)

    verified = oloproof("verify", cwd=root)
    assert verified.code == 1 and f"corrupt event {specs[0]}" in verified.out, verified.out
    shape = next(address for address, _, read in found if read["criterion"] == "shape")
    shown = oloproof("inspect", shape, cwd=root)
    assert shown.code == 2 and "Traceback" not in shown.err
    assert specs[0] in shown.err and len(shown.err.strip().splitlines()) <= 2, shown.err


def test_judgments_an_earlier_release_wrote_whole_still_read_and_are_reused(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "p")
    ok(root, "run", command=("-c", EARLIER_RELEASE))
    specs, earlier = judgments(root)
    assert specs == [] and {stored["schema"] for _, stored, _ in earlier} == {1}

    again = ok(root, "run")
    assert "judgment 24 hit/0 miss" in again, again
    specs, found = judgments(root)
    assert specs == [] and len(found) == 24  # nothing judged again, nothing written again
    shapes = [read for _, _, read in found if read["criterion"] == "shape"]
    assert all(read["evaluator"]["schema"] == SCHEMA for read in shapes)
    assert ok(root, "verify").splitlines()[-1].endswith(": ok")

    new_version(root, "2")
    ok(root, "run")
    specs, found = judgments(root)
    assert len(specs) == 1 and {stored["schema"] for _, stored, _ in found} == {1, 2}
    assert ok(root, "verify").splitlines()[-1].endswith(": ok")
