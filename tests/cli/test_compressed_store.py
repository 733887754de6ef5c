"""A project ledger large enough to compress its records, through the real CLI.

400 cases of a callable system: the run's first commit trains the ledger's dictionary, so its
executions, judgments and case results are stored as zstd frames. Everything read back is the
canonical events: the bundle holds each case's own input, output and verdict, a second run
finds every case in the cache, and ``verify`` checks every event against its address. A frame
cut short is named by ``verify`` and refused by ``inspect`` in one sentence.
"""

from __future__ import annotations

from pathlib import Path

import cbor2
import lmdb
from tests.support import bundle_cases, oloproof, write_project

from oloproof import events as ev
from oloproof.store import open_project_ledger

CASES = 400
APP = "def echo(case):\n    return {'answer': case['q']}\n"
CONFIG = """system: {name: echo, version: "1", callable: app:echo}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
"""
POLICY = "version: 1\nrules:\n  - {id: correct, metric: answer_correct, min: 0.5}\n"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def project(root: Path) -> Path:
    cases = (
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}}
        for i in range(CASES)
    )
    return write_project(root, app=APP, config=CONFIG, policy=POLICY, cases=cases)


def ok(root: Path, *args: str) -> str:
    done = oloproof(*args, cwd=root)
    assert done.code == 0, (args, done.code, done.err)
    return done.out


def raw_events(root: Path) -> tuple[dict[str, object], list[tuple[bytes, bytes, bytes]]]:
    """The format record and every ``(key, digest, stored bytes)`` of the events table."""
    env = lmdb.open(str(root / ".oloproof" / "ledger"), readonly=True, lock=False, max_dbs=8)
    try:
        with env.begin() as txn:
            meta = env.open_db(b"meta", txn=txn, create=False)
            events = env.open_db(b"events", txn=txn, create=False)
            record = cbor2.loads(txn.get(b"format", db=meta))
            return record, [
                (bytes(k), bytes(v[:32]), bytes(v[32:])) for k, v in txn.cursor(db=events)
            ]
    finally:
        env.close()


def test_a_compressed_store_reads_back_every_case_and_names_a_damaged_frame(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "p")
    run_id = ok(root, "run").split()[1]
    record, stored = raw_events(root)
    assert {"zstd-records", "compact-index"} <= set(record["extensions"])  # type: ignore[call-overload]
    frames = [s for _, _, s in stored if s[:4] == ZSTD_MAGIC]
    assert len(frames) >= 3 * CASES  # each case's execution, judgment and case result

    exported = {row["id"]: row for row in bundle_cases(root, run_id)}
    assert len(exported) == CASES
    for i in range(CASES):
        row = exported[f"c{i}"]
        assert row["input"] == {"q": f"q{i}"} and row["output"] == {"answer": f"q{i}"}
        assert row["verdicts"] == {"answer_correct": {"s": "pass"}}

    again = ok(root, "run")
    assert f"execution {CASES} hit/0 miss; judgment {CASES} hit/0 miss" in again
    assert ok(root, "verify").splitlines()[-1].endswith(": ok")

    # Cut the frame of c17's case result short.
    with open_project_ledger(root, create=False) as ledger:
        address = ledger.latest(ev.RUN_CASE, f"{run_id}/c17")
    assert address is not None
    digest = bytes.fromhex(address[7:])
    ((key, frame),) = [(k, s) for k, d, s in stored if d == digest]
    assert frame[:4] == ZSTD_MAGIC
    env = lmdb.open(str(root / ".oloproof" / "ledger"), max_dbs=8)
    try:
        with env.begin(write=True) as txn:
            txn.put(key, digest + frame[:-6], db=env.open_db(b"events", txn=txn, create=False))
    finally:
        env.close()

    verified = oloproof("verify", cwd=root)
    assert verified.code == 1, verified.out
    assert f"corrupt event {address}" in verified.out and "does not decompress" in verified.out
    shown = oloproof("inspect", run_id, "--case", "c17", cwd=root)
    assert shown.code == 2 and "Traceback" not in shown.err
    assert address in shown.err and len(shown.err.strip().splitlines()) <= 2, shown.err
    # The second run's cases still read, from records compressed with the same dictionary.
    assert "q17" in ok(root, "inspect", "latest", "--case", "c17")
