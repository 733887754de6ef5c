"""A metadata column's Parquet type is fixed before the first row is written, from what the
first pass found of its values (the least and greatest integer, the kinds met). Checked
against the reference: Arrow's own inference over the whole column, as the tables typed it
when they were written in one piece, with JSON text wherever Arrow refuses the column."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof.tabular import _metadata_type, _Values

_INT = st.one_of(
    st.integers(-(2**70), 2**70),
    st.integers(-(2**54), 2**54),
    st.sampled_from([2**53, 2**53 + 1, -(2**53) - 1, 2**63 - 1, 2**63, -(2**63), 2**64 - 1]),
)
_SCALAR = st.one_of(
    st.none(),
    _INT,
    st.floats(allow_nan=True),
    st.booleans(),
    st.text(max_size=3),
)
_VALUE = st.one_of(
    _SCALAR,
    st.lists(_SCALAR, max_size=2),
    st.dictionaries(st.text(max_size=2), _SCALAR, max_size=2),
)


def _whole_column(values: list[Any]) -> Any:
    """The type the column had when Arrow typed all its values at once (None: JSON text)."""
    kinds = {type(v) for v in values if v is not None}
    nested = any(isinstance(v, list | dict) for v in values)
    if nested or not (len(kinds) <= 1 or kinds == {int, float}):
        return None
    try:
        return pa.array(values).type
    except (pa.ArrowInvalid, OverflowError):
        return None


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_SCALAR, _VALUE), max_size=12))
def test_the_type_from_the_first_pass_is_arrows_type_of_the_whole_column(values: list[Any]) -> None:
    found = _Values()
    for value in values:
        found.add(value)
    decided = _metadata_type(found)
    assert decided == _whole_column(values)
    if decided is not None:  # each row group is then typed as the schema says
        assert pa.array(values, type=decided).type == decided


@settings(max_examples=200, deadline=None)
@given(st.lists(_INT, min_size=1, max_size=8), st.lists(st.floats(allow_nan=False), max_size=3))
def test_integers_beside_fractions(ints: list[int], floats: list[float]) -> None:
    values: list[Any] = [*ints, *floats]
    found = _Values()
    for value in values:
        found.add(value)
    assert _metadata_type(found) == _whole_column(values)
