"""metrics.case_results hands out a run's first result per case in the dataset's line order.

Results are written to a real ledger in any order, a line may be written again (by a second
writer: the first write is the one every command counts), and results written before they
carried a line follow by case id in the order their ids first appeared. The reference is a plain
sort of (line, write order).
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger import Event, open_ledger
from oloproof.events import CASE_RESULT, index_entries
from oloproof.lineorder import LineOrder
from oloproof.metrics import case_results

WRITES = st.lists(st.tuples(st.integers(0, 12), st.booleans()), max_size=40)


def result(case: int, numbered: bool, attempt: int) -> Event:
    body = {"run_id": "r1", "case_id": f"c{case}", "status": "ok", "verdicts": {}, "n": attempt}
    if numbered:
        body["line"] = case * 2 + 1
    return Event(CASE_RESULT, 3, body)


@settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    max_examples=40,
)
@given(WRITES)
def test_the_first_per_case_in_line_order(tmp_path: Path, writes: list[tuple[int, bool]]) -> None:
    numbered = {case: flag for case, flag in writes}  # a case has a line in every write or none
    events = [result(case, numbered[case], n) for n, (case, _) in enumerate(writes)]
    path = tmp_path / str(abs(hash(tuple(writes))))
    with open_ledger(path, indexer=index_entries) as ledger:
        addresses = [ledger.put(event) for event in events]
        got = [
            (address, body["case_id"], ledger.get(address).body["n"])
            for address, body in case_results(ledger, "r1")
        ]

    first: dict[str, int] = {}
    first_seen: dict[str, int] = {}
    for n, (case, _) in enumerate(writes):
        first.setdefault(f"c{case}", n)
        first_seen.setdefault(f"c{case}", len(first_seen))

    def place(case_id: str) -> tuple[int, int]:
        case = int(case_id[1:])
        return (0, case) if numbered[case] else (-1, first_seen[case_id])

    expected = [
        (addresses[n], case_id, n)
        for case_id, n in sorted(first.items(), key=lambda kv: place(kv[0]))
    ]
    assert got == expected


@given(st.lists(st.integers(-3, 20), max_size=60), st.integers(1, 7))
def test_line_order_matches_a_stable_sort_whatever_the_chunk(lines: list[int], chunk: int) -> None:
    # Beyond one chunk the pairs are spilled to files and merged: the order must not change.
    digests = [n.to_bytes(32, "big") for n in range(len(lines))]
    with LineOrder(chunk) as order:
        for line, digest in zip(lines, digests, strict=True):
            order.add(line, digest)
        got = list(order)
    expected = sorted(zip(lines, digests, strict=True), key=lambda pair: pair[0])
    assert got == expected
