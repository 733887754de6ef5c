"""metrics.SeenCases counts each case of a run once, as a set of its case ids would.

A case id is on one dataset line, so a bit per line stands for it; case results written before
they carried a line are kept by id. The reference is the plain set of ids.
"""

from __future__ import annotations

from typing import Any, cast

from hypothesis import given
from hypothesis import strategies as st

from oloproof.bodies import CaseResultBody
from oloproof.metrics import SeenCases


def body(case: int, numbered: bool) -> CaseResultBody:
    found: dict[str, Any] = {"case_id": f"c{case}"}
    if numbered:
        found["line"] = case * 3 + 1  # lines are sparse: blank lines and subsets leave gaps
    return cast(CaseResultBody, found)


@given(st.lists(st.tuples(st.integers(0, 40), st.booleans()), max_size=80))
def test_each_case_is_new_once_as_in_a_set_of_ids(results: list[tuple[int, bool]]) -> None:
    numbered = {case: line for case, line in results}  # a run's results all have a line or not
    seen, reference = SeenCases(), set()
    for case, _ in results:
        result = body(case, numbered[case])
        assert (result in seen) == (result["case_id"] in reference)
        assert seen.add(result) == (result["case_id"] not in reference)
        reference.add(result["case_id"])
        assert seen.count == len(reference)


@given(st.lists(st.tuples(st.integers(0, 40), st.booleans()), max_size=80))
def test_a_resumed_run_finds_its_finished_cases_by_id_and_line(
    results: list[tuple[int, bool]],
) -> None:
    # ``has`` asks as a resumed run does, with each dataset case's id and line: a result with
    # a line is found by it, one written before results had lines by its id.
    numbered = {case: line for case, line in results}
    seen = SeenCases()
    for case, _ in results:
        seen.add(body(case, numbered[case]))
    finished = {case for case, _ in results}
    for case in range(41):
        assert seen.has(f"c{case}", case * 3 + 1) == (case in finished)
