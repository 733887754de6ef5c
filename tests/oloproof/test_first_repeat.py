"""jsonkeys.first_repeat finds what the checks of ids given twice each looked for on their own:
the first item whose key an earlier item has, and that earlier item's first occurrence.

The reference is the plain scan of every earlier item, position by position.
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import itemgetter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oloproof.jsonkeys import first_repeat


def reference(keys: list[int]) -> tuple[int, int] | None:
    for index, key in enumerate(keys):
        if key in keys[:index]:
            return keys.index(key), index
    return None


@given(st.lists(st.integers(0, 12), max_size=30))
def test_the_first_repeat_and_the_first_occurrence_before_it(keys: list[int]) -> None:
    found = first_repeat(enumerate(keys), key=itemgetter(1))
    assert (None if found is None else (found[0][0], found[1][0])) == reference(keys)


def test_without_a_key_function_an_item_is_its_own_key() -> None:
    assert first_repeat(["a", "b", "a", "b"]) == ("a", "a")
    assert first_repeat(["a", "b"]) is None


def test_a_repeat_is_found_before_a_later_mistake_is_read() -> None:
    # As the labels and slices checks read a list: each item checked as the search reaches it.
    def checked(*given: str) -> Iterator[str]:
        yield from given
        raise ValueError("a mistake on a later line")

    assert first_repeat(checked("x", "y", "x")) == ("x", "x")
    with pytest.raises(ValueError, match="a mistake on a later line"):
        first_repeat(checked("x", "y"))
