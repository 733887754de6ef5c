"""A diagnosis of hundreds of cases keeps its records in pages, through the real CLI.

700 cases of a staged system whose failures have known causes: the relevant passage is ranked
below the cut, not retrieved at all, or the generator ignores it. The diagnosis event holds no
case record: they are in ``oloproof.diagnosis_page`` events of at most 256 records, in case-id
order (the ids sort differently from the dataset's lines). Every reader gets every record:
``inspect``, ``--json``, the replay that carries the gold-context labels across pages, the
lookup of one case, and ``verify``, which also refuses records paged differently or a page
left out. A diagnosis written before pages (schema 1, records in its body) reads the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support import oloproof, write_project

from ledger import Event
from oloproof import events as ev
from oloproof.bodies import diagnosis_body
from oloproof.diagnosis.derive import (
    PAGE_SIZE,
    diagnosis_case,
    diagnosis_cases,
    diagnosis_excluded,
)
from oloproof.store import open_project_ledger

CASES = 700
TOP_K = 3
APP = """
from oloproof import Passage, Retrieval, rag_system

WORDS = "refund seat invoice plan owner admin audit report billing account".split()


def text(doc):
    return " ".join(WORDS[(doc * 7 + i) % len(WORDS)] for i in range(12)) + "."


@rag_system(name="paged", version="1", depth=10, top_k=3)
class Paged:
    def retrieve(self, input, depth):
        # Where the relevant passage lands: first, below the cut of 3, or nowhere.
        others = [d for d in range(input["n"], input["n"] + 40) if d != input["gold"]][:depth]
        at = {"first": 0, "ranked_out": 7}.get(input["kind"])
        if at is not None:
            others.insert(at, input["gold"])
        return Retrieval(query=input["q"], depth=depth, candidates=tuple(
            Passage(doc_id=f"d{d}", score=float(depth - i), text=text(d))
            for i, d in enumerate(others[:depth])))

    def generate(self, input, context):
        seen = {item.doc_id for item in context.items}
        right = f"d{input['gold']}" in seen and input["kind"] != "stubborn"
        return {"answer": "yes" if right else "no"}
"""
CONFIG = """system: {name: paged, version: "1", rag: {object: app:Paged}}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
"""
POLICY = "version: 1\nrules:\n  - {id: correct, metric: answer_correct, min: 0.5}\n"
KINDS = ("first", "ranked_out", "missed", "missed", "stubborn")
# The label a gold-context diagnosis must give each kind of failure.
LABELS = {
    "ranked_out": "RANKED_OUT",
    "missed": "RETRIEVAL_MISS",
    "stubborn": "GENERATION_FAILURE",
}


def case_id(i: int) -> str:
    return f"q{(i * 389) % CASES}"  # unpadded: "q10" sorts before "q2"


def kind(i: int) -> str:
    return KINDS[i % len(KINDS)]


def has_gold(i: int) -> bool:
    return i % 50 != 7


def case(i: int) -> dict[str, Any]:
    gold = 1000 + i
    expected: dict[str, Any] = {"answer": "yes", "relevant": [{"doc_id": f"d{gold}"}]}
    if has_gold(i):
        expected["gold_context"] = [{"doc_id": f"d{gold}", "text": f"passage {gold}"}]
    return {
        "id": case_id(i),
        "input": {"n": i, "q": f"question {i}", "gold": gold, "kind": kind(i)},
        "expected": expected,
    }


def project(root: Path) -> Path:
    cases = (case(i) for i in range(CASES))
    return write_project(root, app=APP, config=CONFIG, policy=POLICY, cases=cases)


def ok(root: Path, *args: str) -> str:
    done = oloproof(*args, cwd=root, timeout=600)
    assert done.code == 0, (args, done.code, done.out, done.err)
    return done.out


def diagnosis_address(out: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith("Diagnosis sha256:")]
    return line.split()[1]


def put(root: Path, event: Event) -> str:
    ledger = open_project_ledger(root, create=False)
    try:
        return ledger.put(event)
    finally:
        ledger.close()


def stored(root: Path, address: str) -> tuple[Event, list[dict[str, Any]], list[Event]]:
    """The diagnosis event, its records read through the pages, and the page events."""
    ledger = open_project_ledger(root, create=False)
    try:
        event = ledger.get(address)
        body = diagnosis_body(event)
        pages = [ledger.get(page) for page in body["case_pages"]]
        return event, list(diagnosis_cases(ledger, body)), pages
    finally:
        ledger.close()


@pytest.fixture(scope="module")
def diagnosed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, str]:
    root = project(tmp_path_factory.mktemp("pages") / "p")
    done = oloproof("run", cwd=root, timeout=600)
    assert done.code == 1, done.err  # most cases fail: the gate blocks (exit 1)
    run_id = done.out.split()[1]
    criterion = ("--criterion", "answer_correct")
    gold = diagnosis_address(
        ok(root, "diagnose", run_id, "--intervention", "gold-context", *criterion)
    )
    top_k = ("--intervention", "top-k", "--top-k", "8")
    replay = diagnosis_address(ok(root, "diagnose", run_id, *top_k, *criterion))
    return root, run_id, gold, replay


def expected_selection() -> tuple[list[str], list[str]]:
    failed = [i for i in range(CASES) if kind(i) != "first"]
    selected = sorted(case_id(i) for i in failed if has_gold(i))
    excluded = sorted(case_id(i) for i in failed if not has_gold(i))
    return selected, excluded


def test_the_records_are_in_pages_in_case_id_order(diagnosed: tuple[Path, str, str, str]) -> None:
    root, _, gold, _ = diagnosed
    event, records, pages = stored(root, gold)
    selected, excluded = expected_selection()
    assert len(selected) > 2 * PAGE_SIZE and excluded  # three pages, and some excluded
    assert not {"cases", "selected", "excluded"} & set(event.body)
    assert len(event.to_bytes()) < 4096  # the summary and a few addresses, whatever the count
    assert [len(p.body["records"]) for p in pages] == [PAGE_SIZE, PAGE_SIZE, len(selected) - 512]
    assert [r["case_id"] for r in records] == selected
    by_id = {case_id(i): kind(i) for i in range(CASES)}
    assert {r["case_id"]: r["label"] for r in records} == {c: LABELS[by_id[c]] for c in selected}
    summary = event.body["summary"]
    assert (summary["selected"], summary["excluded"]) == (len(selected), len(excluded))
    assert sorted(event.refs[-len(pages) - 1 :]) == sorted(
        [*event.body["case_pages"], *event.body["excluded_pages"]]
    )


def test_inspect_and_json_list_every_case(diagnosed: tuple[Path, str, str, str]) -> None:
    root, run_id, gold, _ = diagnosed
    selected, excluded = expected_selection()
    _, records, _ = stored(root, gold)
    lines = ok(root, "inspect", gold).splitlines()
    cases, after = lines[: len(selected)], lines[len(selected) :]
    assert [line.split(":")[0] for line in cases] == selected
    assert all(
        line.startswith(f"{r['case_id']}: {r['label']}, ")
        for line, r in zip(cases, records, strict=True)
    )
    # The excluded cases follow, under the line that counts them (fewer than the bound).
    assert after[0].startswith(f"Excluded: {len(excluded)} failed cases, no_gold_context - ")
    assert after[1:] == ["  " + ", ".join(excluded)]
    data = json.loads(ok(root, "inspect", gold, "--json"))
    assert data["body"]["case_pages"] == [
        r for r in data["refs"] if r in data["body"]["case_pages"]
    ]
    assert [r["case_id"] for r in data["excluded"]] == excluded
    top_k = ("--intervention", "top-k", "--top-k", "8", "--criterion", "answer_correct")
    whole = json.loads(ok(root, "diagnose", run_id, *top_k, "--json"))
    assert whole["diagnosis"]["selected"] == selected
    assert [c["case_id"] for c in whole["diagnosis"]["cases"]] == selected
    assert [c["case_id"] for c in whole["diagnosis"]["excluded"]] == excluded
    assert [c["label"] for c in whole["carried"]["diagnosis"]["cases"]] == [
        r["label"] for r in records
    ]


def test_a_replay_carries_every_gold_label_across_the_pages(
    diagnosed: tuple[Path, str, str, str],
) -> None:
    root, _, gold, replay = diagnosed
    _, gold_records, _ = stored(root, gold)
    event, records, _ = stored(root, replay)
    assert event.body["carried_from"] == gold
    assert [r["gold"]["label"] for r in records] == [r["label"] for r in gold_records]
    # A wider cut of 8 brings the passage ranked 8th into the context, and nothing else.
    recovered = {r["case_id"] for r in records if r["result"] == "recovered"}
    assert recovered == {r["case_id"] for r in gold_records if r["label"] == "RANKED_OUT"}
    assert (
        event.body["summary"]["confirmed"] == event.body["summary"]["ranked_out"] == len(recovered)
    )


def test_one_case_is_found_by_bisecting_the_pages(diagnosed: tuple[Path, str, str, str]) -> None:
    root, _, gold, _ = diagnosed
    _, records, _ = stored(root, gold)
    ledger = open_project_ledger(root, create=False)
    try:
        body = diagnosis_body(ledger.get(gold))
        for record in records:
            assert diagnosis_case(ledger, body, record["case_id"]) == record
        passing = case_id(0)  # kind "first": it passed, so it was not selected
        for absent in (passing, "a", "zzz"):
            assert diagnosis_case(ledger, body, absent) is None
    finally:
        ledger.close()


def test_verify_re_derives_the_pages_and_refuses_other_ones(
    diagnosed: tuple[Path, str, str, str],
) -> None:
    root, _, gold, replay = diagnosed
    for address in (gold, replay):
        assert ok(root, "diagnose", "--verify", address).startswith(f"Diagnosis {address}: every")
    ok(root, "verify")

    event, records, pages = stored(root, gold)
    body = json.loads(json.dumps(event.body))
    links = [r for r in event.refs if r not in body["case_pages"]]

    def forged(case_pages: list[str]) -> str:
        return put(
            root,
            Event(
                event.type, event.schema, {**body, "case_pages": case_pages}, [*links, *case_pages]
            ),
        )

    # The same records in pages of 128: every record agrees, the pages are not the writer's.
    halves = [
        put(root, ev.make(ev.DIAGNOSIS_PAGE, {"records": part}))
        for part in (records[:128], records[128:256])
    ]
    split = forged([*halves, *body["case_pages"][1:]])
    done = oloproof("diagnose", "--verify", split, cwd=root)
    assert done.code == 1, done.err
    assert done.out.splitlines()[1:] == [
        "  case_pages: the stored pages are not the pages its records make"
    ]
    # The last page left out: each of its cases is named.
    shortened = forged(body["case_pages"][:2])
    done = oloproof("diagnose", "--verify", shortened, cwd=root)
    assert done.code == 1, done.err
    missing = [r["case_id"] for r in pages[-1].body["records"]]
    assert done.out.splitlines()[1:] == [f"  case {c}: re-derived, but not stored" for c in missing]
    done = oloproof("verify", cwd=root)
    assert done.code == 1
    stale = {
        line.split()[1].rstrip(":") for line in done.out.splitlines() if "StaleSummary" in line
    }
    assert {split, shortened} <= stale and not {gold, replay} & stale


def test_a_diagnosis_with_its_records_in_its_body_still_reads(
    diagnosed: tuple[Path, str, str, str],
) -> None:
    root, _, gold, _ = diagnosed
    event, records, _ = stored(root, gold)
    ledger = open_project_ledger(root, create=False)
    try:
        excluded = list(diagnosis_excluded(ledger, diagnosis_body(event)))
    finally:
        ledger.close()
    body = dict(event.body)
    pages = {*body.pop("case_pages"), *body.pop("excluded_pages")}
    old = {
        **body,
        "selected": [r["case_id"] for r in records],
        "cases": records,
        "excluded": excluded,
    }
    first = put(root, Event(ev.DIAGNOSIS, 1, old, [r for r in event.refs if r not in pages]))

    assert ok(root, "inspect", first) == ok(root, "inspect", gold)
    assert ok(root, "diagnose", "--verify", first).startswith(f"Diagnosis {first}: every")
    ledger = open_project_ledger(root, create=False)
    try:
        body_v1 = diagnosis_body(ledger.get(first))
        assert (body_v1["case_pages"], body_v1["excluded_pages"]) == ([], [])
        assert diagnosis_case(ledger, body_v1, records[-1]["case_id"]) == records[-1]
    finally:
        ledger.close()
    # One label changed in the body: verify names it.
    records[3] = {**records[3], "label": "UNRESOLVED"}
    tampered = put(
        root,
        Event(
            ev.DIAGNOSIS, 1, {**old, "cases": records}, [r for r in event.refs if r not in pages]
        ),
    )
    done = oloproof("diagnose", "--verify", tampered, cwd=root)
    assert done.code == 1
    assert f"  case {records[3]['case_id']}: label stored 'UNRESOLVED'" in done.out
