"""diagnosis.derive.PackedIds reads back as the sorted list of ids it packs.

The reference is the list itself: every index (negative ones and those out of range too),
slice, the iteration, the length, and bisection over it. Ids are drawn from any text,
lone surrogates and the empty id included.
"""

from __future__ import annotations

import bisect

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oloproof.diagnosis.derive import PackedIds

IDS = st.lists(st.text(st.characters(codec=None)), max_size=40).map(sorted)


@given(IDS, st.integers(-45, 45), st.slices(45), st.text())
def test_reads_back_as_the_list(ids: list[str], index: int, part: slice, probe: str) -> None:
    packed = PackedIds(ids)
    assert len(packed) == len(ids)
    assert list(packed) == ids
    assert packed[part] == ids[part]
    if -len(ids) <= index < len(ids):
        assert packed[index] == ids[index]
    else:
        with pytest.raises(IndexError):
            packed[index]
    for wanted in [*ids, probe]:
        assert bisect.bisect_left(packed, wanted) == bisect.bisect_left(ids, wanted)


def test_a_lone_surrogate_comes_back_as_it_went_in() -> None:
    ids = ["a", "b\ud800c", "z"]
    assert list(PackedIds(ids)) == ids
