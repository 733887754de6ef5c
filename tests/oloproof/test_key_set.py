"""identities.KeySet holds 128-bit keys as a set of ints would, folded or not.

The reference is the plain set; keys are drawn so that many share their high 64 bits (the
bisection must then look along a run of equal highs) and folds happen every few keys.
"""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oloproof.identities import KeySet, bits

HIGHS = st.sampled_from([0, 1, 2**63, 2**64 - 1])
KEYS = st.builds(
    lambda high, low: high << 64 | low, HIGHS, st.integers(0, 2**64 - 1)
) | st.integers(0, 2**128 - 1)


@given(st.lists(KEYS, max_size=60), st.lists(KEYS, max_size=30))
def test_membership_and_size_match_a_set(added: list[int], probes: list[int]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(KeySet, "_FOLD", 4)
        keys, reference = KeySet(), set()
        for key in added:
            keys.add(key)
            reference.add(key)
            assert len(keys) == len(reference)
        for key in [*added, *probes]:
            assert (key in keys) == (key in reference)
    assert bool(keys) == bool(reference)


def test_many_identities_are_found_after_folding() -> None:
    keys = KeySet()
    identities = [hashlib.sha256(str(i).encode()).hexdigest() for i in range(3 * KeySet._FOLD)]
    for identity in identities[::2]:
        keys.add(bits(identity))
    assert len(keys) == len(identities) // 2 + len(identities) % 2
    assert all(bits(i) in keys for i in identities[::2])
    assert not any(bits(i) in keys for i in identities[1::2])
    assert "not a key" not in keys and -1 not in keys and 2**128 not in keys
