"""Passage texts and cases are stored once, and every reader still sees them whole.

support_rag's retriever ranks a small knowledge base, so the same passages come back in case
after case, run after run, and in the gold-context child runs of a diagnosis. Checked through
the real CLI on a real project ledger:

- each distinct text is one ``oloproof.text`` event, and no stored execution or stage holds a
  text itself: a second run of a new system version adds no text at all;
- what is read back (``inspect --case --json``, ``export``, an archive imported elsewhere) is
  what the retriever returned and what the case's gold context says, text for text;
- a damaged text is named by ``verify``, and a command that needs it says so in one sentence;
  a process that read the text from an intact copy still refuses it from the damaged ledger;
- a case whose expected values are not small (support_rag's carry gold passages) is one
  ``oloproof.case`` event that every run's case result refers to: no stored case result holds
  a gold passage, what reads back is the dataset's own values, a second run adds no case, and
  a damaged case is named by ``verify`` and refused by ``inspect`` in one sentence.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from tests.ledger.tamper import flip_byte_of
from tests.support import copy_example, oloproof

from ledger import LedgerError, decode, open_ledger
from oloproof import events as ev
from oloproof.store import APPLICATION, open_project_ledger


def ok(root: Path, *args: str, codes: tuple[int, ...] = (0,)) -> str:
    done = oloproof(*args, cwd=root)
    assert done.code in codes, (args, done.code, done.err)
    return done.out


def retriever(root: Path) -> Any:
    """support_rag's own retriever, loaded from the project (the independent reference)."""
    spec = importlib.util.spec_from_file_location("support_app", root / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["support_app"] = module
    spec.loader.exec_module(module)
    return module.SupportRag()


def stored(root: Path) -> tuple[dict[str, int], list[tuple[str, bytes]], list[dict[str, Any]]]:
    """The text events (text -> count), the stored bytes of every execution and stage, and
    every execution's body as read."""
    texts: dict[str, int] = {}
    raw: list[tuple[str, bytes]] = []
    executions: list[dict[str, Any]] = []
    with open_ledger(root / ".oloproof", app=APPLICATION, readonly=True) as ledger:
        for address, event in ledger.events():
            if event.type == ev.TEXT:
                texts[event.body["text"]] = texts.get(event.body["text"], 0) + 1
            elif event.type in (ev.EXECUTION, ev.STAGE):
                raw.append((event.type, ledger.get_bytes(address)))
                if event.type == ev.EXECUTION:
                    executions.append(dict(event.body))
    return texts, raw, executions


def holds_a_text(value: Any) -> bool:
    """Whether a stored value holds a passage (a map with a ``doc_id``) with its text inline."""
    if isinstance(value, dict):
        if "doc_id" in value and "text" in value:
            return True
        return any(holds_a_text(v) for v in value.values())
    return isinstance(value, list) and any(holds_a_text(v) for v in value)


def passages(body: dict[str, Any]) -> list[dict[str, Any]]:
    artifacts = body["artifacts"]
    found = [p for r in artifacts.get("retrieval/v1", []) for p in r["candidates"]]
    return found + [p for c in artifacts.get("context/v1", []) for p in c["items"]]


def test_each_text_is_stored_once_and_read_back_whole(tmp_path: Path) -> None:
    root = copy_example("support_rag", tmp_path)
    cases = [json.loads(line) for line in (root / "cases.jsonl").read_text().splitlines()]
    ok(root, "run", codes=(3,))
    texts, raw, executions = stored(root)
    assert texts and all(count == 1 for count in texts.values())
    for kind, data in raw:
        assert not holds_a_text(decode(data)), f"a {kind} still stores a passage's text itself"

    # What reads back is what the retriever returned, text for text.
    app = retriever(root)
    by_input = {json.dumps(b["input"], sort_keys=True): b for b in executions}
    for case in cases:
        body = by_input[json.dumps(case["input"], sort_keys=True)]
        expected = app.retrieve(case["input"], 6).model_dump(mode="json", exclude_none=True)
        assert body["artifacts"]["retrieval/v1"][0] == expected
        assert [s["address"].startswith("sha256:") for s in body["stages"]] == [True, True]
    seen = {p["text"] for b in executions for p in passages(b)}
    assert seen == set(texts)

    case = cases[1]["id"]
    shown = json.loads(ok(root, "inspect", "latest", "--case", case, "--json", codes=(0, 3)))
    assert json.dumps(shown).count(cases[1]["expected"]["gold_context"][0]["text"][:60]) >= 1
    ok(root, "export", "latest")
    (bundle,) = (root / ".oloproof" / "bundles").glob("run_*/cases.jsonl")
    rows = [json.loads(line) for line in bundle.read_text().splitlines()]
    assert {p["text"] for r in rows for p in passages(r)} == seen

    # A new system version executes everything again and adds no text.
    config = root / "oloproof.yaml"
    config.write_text(config.read_text().replace("slice-b-example", "slice-b-second"))
    ok(root, "run", codes=(3,))
    ok(
        root,
        "diagnose",
        "latest",
        "--intervention",
        "gold-context",
        "--criterion",
        "answer_correct",
    )
    again, _, executions = stored(root)
    gold = {p["text"] for c in cases for p in c["expected"].get("gold_context", [])}
    assert set(again) == set(texts) | gold and all(n == 1 for n in again.values())
    contexts = {
        p["text"] for b in executions for c in b["artifacts"]["context/v1"] for p in c["items"]
    }
    assert gold <= contexts  # the child runs' gold contexts read back whole

    verified = ok(root, "verify")
    assert verified.splitlines()[-1].endswith(": ok")

    # An archive of the run carries its texts; imported elsewhere, the case reads the same.
    archive = tmp_path / "run.oloarchive"
    ok(root, "ledger", "export", "latest", "--to", str(archive))
    other = tmp_path / "other"
    other.mkdir()
    ok(other, "ledger", "import", str(archive))
    here = ok(root, "inspect", "latest", "--case", case, "--json", codes=(0, 3))
    there = ok(other, "inspect", "latest", "--case", case, "--json", codes=(0, 3))
    assert json.loads(there) == json.loads(here)
    assert ok(other, "verify").splitlines()[-1].endswith(": ok")


def test_a_damaged_text_is_named_and_refused_in_one_sentence(tmp_path: Path) -> None:
    root = copy_example("support_rag", tmp_path)
    ok(root, "run", codes=(3,))
    first = json.loads((root / "cases.jsonl").read_text().splitlines()[0])
    with open_ledger(root / ".oloproof", app=APPLICATION, readonly=True) as ledger:
        found = [
            (address, ledger.get_bytes(address))
            for address, event in ledger.events(ev.TEXT)
            if event.body["text"] == first["expected"]["gold_context"][0]["text"]
        ]
    ((address, data),) = found
    pristine = Path(shutil.copytree(root, tmp_path / "pristine"))
    flip_byte_of(root / ".oloproof", data)

    # In one process, a text read from an intact copy is not shown for the damaged ledger.
    for folder, whole in ((pristine, True), (root, False)):
        with open_project_ledger(folder) as ledger:
            try:
                read = [dict(e.body) for _, e in ledger.events(ev.EXECUTION)]
            except LedgerError as exc:
                assert not whole and address in str(exc)
            else:
                assert whole and any(
                    p["text"] == first["expected"]["gold_context"][0]["text"]
                    for b in read
                    for p in passages(b)
                )

    verified = oloproof("verify", cwd=root)
    assert verified.code == 1 and f"corrupt event {address}" in verified.out, verified.out
    shown = oloproof("inspect", "latest", "--case", first["id"], cwd=root)
    assert shown.code == 2 and "Traceback" not in shown.err
    assert address in shown.err and len(shown.err.strip().splitlines()) <= 2, shown.err


def test_a_case_is_stored_once_for_every_run_and_read_back_as_the_dataset_has_it(
    tmp_path: Path,
) -> None:
    root = copy_example("support_rag", tmp_path)
    cases = {c["id"]: c for c in map(json.loads, (root / "cases.jsonl").read_text().splitlines())}
    ok(root, "run", codes=(3,))
    config = root / "oloproof.yaml"
    config.write_text(config.read_text().replace("slice-b-example", "slice-b-second"))
    ok(root, "run", codes=(3,))

    stored_cases: dict[str, dict[str, Any]] = {}
    read: list[dict[str, Any]] = []
    with open_ledger(root / ".oloproof", app=APPLICATION, readonly=True) as ledger:
        for address, event in ledger.events(ev.CASE):
            stored_cases[address] = dict(event.body)
        for address, event in ledger.events(ev.CASE_RESULT):
            raw = decode(ledger.get_bytes(address))
            assert "gold_context" not in json.dumps(raw, default=str)
            assert ("case_ref" in raw["body"]) is ("expected" not in raw["body"])
            read.append(dict(event.body))
    with_gold = [c for c in cases.values() if "gold_context" in c["expected"]]
    assert with_gold and len(stored_cases) == len(with_gold)  # one per case, for both runs
    assert len(read) == 2 * len(cases)
    for body in read:
        case = cases[body["case_id"]]
        assert body["expected"] == case["expected"]
        assert body["metadata"] == case.get("metadata", {})

    first = with_gold[0]
    shown = json.loads(ok(root, "inspect", "latest", "--case", first["id"], "--json", codes=(0, 3)))
    assert first["expected"]["gold_context"][0]["text"] in json.dumps(shown)
    assert ok(root, "verify").splitlines()[-1].endswith(": ok")

    ((address, _),) = [
        (a, b) for a, b in stored_cases.items() if b["expected"] == first["expected"]
    ]
    with open_ledger(root / ".oloproof", readonly=True) as ledger:
        data = ledger.get_bytes(address)
    flip_byte_of(root / ".oloproof", data)
    verified = oloproof("verify", cwd=root)
    assert verified.code == 1 and f"corrupt event {address}" in verified.out, verified.out
    shown_now = oloproof("inspect", "latest", "--case", first["id"], cwd=root)
    assert shown_now.code == 2 and "Traceback" not in shown_now.err
    assert address in shown_now.err and len(shown_now.err.strip().splitlines()) <= 2, shown_now.err
