"""``repeats_among`` counts the keys that equal an earlier one, checked against the definition
(a scan remembering every key met), on both of its paths: one set up to ``_BUCKET`` keys, and
beyond that keys parted by their leading bits and counted a part at a time.

Beyond 16,384 cases the count used to sort the keys with numpy, whose import alone lifted
``inspect`` of a 100,000-case run from 19 to 31 MB of anonymous memory; parted, it holds 8
bytes a key more at most, and that run's ``inspect`` peaks at 22 MB.
"""

from __future__ import annotations

import random
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof import metrics


def met_before(keys: list[int]) -> int:
    seen: set[int] = set()
    count = 0
    for key in keys:
        count += key in seen
        seen.add(key)
    return count


KEYS = st.lists(
    st.one_of(
        st.sampled_from([0, 1, (1 << 63) - 1, 1 << 63, (1 << 64) - 1]),
        st.integers(0, (1 << 64) - 1),
    ),
    max_size=300,
).flatmap(lambda keys: st.permutations(keys + keys[: len(keys) // 3]))


@given(KEYS, st.sampled_from([1, 2, 3, 16]))
@settings(max_examples=300, deadline=None)
def test_parted_counts_agree_with_the_definition(keys: list[int], bucket: int) -> None:
    # A small part size sends a few hundred keys through the parting, into up to 512 parts.
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(metrics, "_BUCKET", bucket)
        assert metrics.repeats_among(array("Q", keys)) == met_before(keys)


@pytest.mark.parametrize("size", [0, 1, metrics._BUCKET, metrics._BUCKET + 1, 100_000])
def test_counts_at_the_real_part_size(size: int) -> None:
    rng = random.Random(size)
    keys = [rng.getrandbits(64) for _ in range(size)]
    keys += rng.sample(keys, min(size, 37)) + [0] * 5
    rng.shuffle(keys)
    assert metrics.repeats_among(array("Q", keys)) == met_before(keys)
