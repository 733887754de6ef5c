"""Deterministic CBOR: round trips, one encoding per value, refusal of everything else."""

from __future__ import annotations

import datetime
import decimal
import enum
import fractions
import math
import uuid
from collections import OrderedDict, namedtuple
from typing import Any

import cbor2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.ledger.strategies import INT_MAX, INT_MIN, other_encoding, values

from ledger import CodecError, Event, decode, encode


def same(a: Any, b: Any) -> bool:
    """Equality that also tells -0.0 from 0.0 and 1 from 1.0 from True."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return math.copysign(1, a) == math.copysign(1, b) and a == b
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


@given(values())
def test_decode_encode_round_trip(value: Any) -> None:
    assert same(decode(encode(value)), value)


@given(values())
def test_encode_decode_keeps_canonical_bytes(value: Any) -> None:
    canonical = encode(value)
    assert encode(decode(canonical)) == canonical


@given(values())
def test_matches_cbor2_canonical_encoding(value: Any) -> None:
    # cbor2's canonical mode is an independent implementation of RFC 8949 §4.2.1.
    assert encode(value) == cbor2.dumps(value, canonical=True)


@given(st.dictionaries(st.text(max_size=6), values(5), max_size=8), st.randoms())
def test_dict_order_does_not_change_the_bytes(d: dict[str, Any], rnd: Any) -> None:
    items = list(d.items())
    rnd.shuffle(items)
    assert encode(dict(items)) == encode(d)


@settings(max_examples=300)
@given(values(), st.data())
def test_other_encodings_are_refused(value: Any, data: st.DataObject) -> None:
    canonical = encode(value)
    other = other_encoding(value, data)
    assert same(cbor2.loads(other), value)  # the writer produced valid CBOR for the value
    if other == canonical:
        assert same(decode(other), value)
    else:
        with pytest.raises(CodecError):
            decode(other)


@pytest.mark.parametrize(
    "raw",
    [
        "1801",  # 1 with a one-byte argument
        "190001",  # 1 with a two-byte argument
        "3817",  # -24 with a one-byte argument
        "fb3ff0000000000000",  # 1.0 as a double
        "fa3f800000",  # 1.0 as a single
        "fb3fb999999999999a00",  # 0.1 followed by a trailing byte
        "9f01ff",  # indefinite array
        "bf616101ff",  # indefinite map
        "7f6161ff",  # indefinite text
        "a2616201616101",  # {"b": 1, "a": 1}: keys out of order
        "a262616101616202",  # {"aa": 1, "b": 2}: the longer key first
        "a2616101616102",  # {"a": 1, "a": 2}: a duplicate key
        "",  # nothing at all
        "8201",  # an array missing an item
        "62fffe",  # text that is not UTF-8
    ],
)
def test_refuses_non_canonical_or_malformed(raw: str) -> None:
    with pytest.raises(CodecError):
        decode(bytes.fromhex(raw))


@pytest.mark.parametrize(
    "raw",
    [
        "c11a5f5e1000",  # tag 1: an epoch datetime
        "c249010000000000000000",  # tag 2: a bignum
        "d82a4100",  # tag 42
        "f7",  # undefined
        "f0",  # simple value 16
        "f97e00",  # NaN
        "f97c00",  # infinity
        "f9fc00",  # -infinity
        "a10102",  # {1: 2}: a non-text key
        "a1410102",  # {b"\x01": 2}: a bytes key
        "a1f401",  # {false: 1}
    ],
)
def test_refuses_types_outside_the_set(raw: str) -> None:
    with pytest.raises(CodecError):
        decode(bytes.fromhex(raw))


class Colour(enum.Enum):
    RED = 1


@pytest.mark.parametrize(
    "value",
    [
        {1, 2},
        frozenset(),
        datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC),
        datetime.date(2024, 1, 1),
        decimal.Decimal("1.5"),
        fractions.Fraction(1, 3),
        uuid.UUID(int=1),
        bytearray(b"x"),
        memoryview(b"x"),
        1 + 2j,
        Colour.RED,
        object(),
        range(3),
        cbor2.CBORTag(42, 1),
        cbor2.undefined,
        {1: "int key"},
        {b"k": "bytes key"},
        {("a",): "tuple key"},
        float("nan"),
        float("inf"),
        -float("inf"),
        INT_MAX + 1,
        INT_MIN - 1,
        "\ud800",
        {"\udc00": 1},
        [float("nan")],
        {"deep": {"deeper": [1, {2: 3}]}},
    ],
    ids=lambda v: type(v).__name__,
)
def test_encode_refuses_values_outside_the_set(value: Any) -> None:
    with pytest.raises(CodecError):
        encode(value)


def test_encode_refuses_cycles() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(CodecError):
        encode(loop)


def test_deep_nesting_is_refused_by_both_sides_alike() -> None:
    def nested(depth: int) -> Any:
        value: Any = 1
        for _ in range(depth):
            value = [value]
        return value

    assert decode(encode(nested(400))) == nested(400)
    with pytest.raises(CodecError, match="nested deeper than 400"):
        encode(nested(401))
    with pytest.raises(CodecError, match="nested deeper than 400"):
        encode(nested(5000))
    deep = Event("note", 1, {"x": nested(398)})  # the event map and its body add two levels
    assert Event.from_bytes(deep.to_bytes()) == deep
    with pytest.raises(CodecError):
        Event("note", 1, {"x": nested(399)}).to_bytes()


class Kind(enum.StrEnum):
    A = "a"


class Level(enum.IntEnum):
    HIGH = 3


def test_subclasses_encode_as_their_base_type() -> None:
    Point = namedtuple("Point", "x y")
    value = {
        "kind": Kind.A,
        "level": Level.HIGH,
        "point": Point(1, 2),
        "ordered": OrderedDict([("b", 1), ("a", 2)]),
    }
    plain = {"kind": "a", "level": 3, "point": [1, 2], "ordered": {"a": 2, "b": 1}}
    assert encode(value) == encode(plain)
    assert decode(encode(value)) == plain


def test_tuples_encode_as_arrays_and_decode_as_lists() -> None:
    assert encode((1, "a")) == encode([1, "a"])
    assert decode(encode((1, "a"))) == [1, "a"]


@pytest.mark.parametrize(
    ("value", "raw"),
    [
        (0, "00"),
        (23, "17"),
        (24, "1818"),
        (-1, "20"),
        (INT_MAX, "1bffffffffffffffff"),
        (INT_MIN, "3bffffffffffffffff"),
        (0.0, "f90000"),
        (-0.0, "f98000"),
        (1.5, "f93e00"),
        (65504.0, "f97bff"),
        (100000.0, "fa47c35000"),
        (0.1, "fb3fb999999999999a"),
        (5.960464477539063e-08, "f90001"),  # the smallest half-precision subnormal
        ("", "60"),
        ({"b": 1, "a": 2, "aa": 3}, "a361610261620162616103"),
        ([], "80"),
        (None, "f6"),
        (True, "f5"),
    ],
)
def test_known_encodings(value: Any, raw: str) -> None:
    assert encode(value).hex() == raw
    assert same(decode(bytes.fromhex(raw)), value)


def test_decode_refuses_what_is_not_bytes() -> None:
    with pytest.raises(CodecError):
        decode("a0")  # type: ignore[arg-type]


def test_remembered_floats_keep_signed_zeros_and_widths_apart() -> None:
    values = [0.0, -0.0, 1.0, 1.5, 0.1, 1e300, -0.0, 0.0, 0.1, 1.5]
    for _ in range(2):  # the second pass reads the remembered forms
        for value in values:
            assert encode(value) == cbor2.dumps(value, canonical=True), value
