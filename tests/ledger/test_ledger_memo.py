"""The bounded memo that verify's passes remember answers in."""

from __future__ import annotations

from ledger.memo import Recent


class _Counting:
    def __init__(self) -> None:
        self.asked: list[int] = []

    def __call__(self, key: int) -> int:
        self.asked.append(key)
        return key * key


def test_a_key_asked_for_between_every_new_one_is_computed_once() -> None:
    compute = _Counting()
    memo: Recent[int, int] = Recent(4)
    for key in range(1, 1001):
        assert memo.get(0, compute) == 0
        assert memo.get(key, compute) == key * key
    assert compute.asked.count(0) == 1
    assert len(compute.asked) == 1001


def test_a_key_met_once_long_ago_is_computed_again() -> None:
    compute = _Counting()
    memo: Recent[int, int] = Recent(4)
    for key in range(100):
        memo.get(key, compute)
    assert memo.get(0, compute) == 0
    assert compute.asked.count(0) == 2


def test_a_key_is_remembered_while_fewer_than_size_others_were_first_asked_for() -> None:
    compute = _Counting()
    memo: Recent[int, int] = Recent(4)
    for key in range(5):  # key 0, then four others
        memo.get(key, compute)
    assert memo.get(0, compute) == 0
    assert compute.asked.count(0) == 1
