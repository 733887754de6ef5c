"""Hypothesis strategies shared by the ledger tests, and a CBOR writer for other encodings.

``values()`` draws values inside deterministic CBOR's allowed set; ``events()`` draws events.
``other_encoding(value, data)`` writes a value as valid CBOR but with choices the canonical
form forbids (longer heads, wider floats, indefinite lengths, map keys out of order), drawn
from ``data``; when every choice happens to be the canonical one it returns the canonical bytes.
"""

from __future__ import annotations

import math
import struct
from typing import Any

from hypothesis import strategies as st

from ledger import Event

INT_MIN = -(1 << 64)
INT_MAX = (1 << 64) - 1

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=INT_MIN, max_value=INT_MAX),
    st.integers(min_value=-1000, max_value=1000),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(width=16, allow_nan=False, allow_infinity=False),
    st.floats(width=32, allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.binary(max_size=20),
)
keys = st.text(max_size=8)


def values(max_leaves: int = 25) -> st.SearchStrategy[Any]:
    """Any value the codec accepts (lists, not tuples, so a decode compares equal)."""
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=5),
            st.dictionaries(keys, inner, max_size=5),
        ),
        max_leaves=max_leaves,
    )


event_types = st.sampled_from(["run.started", "case.executed", "judgment", "note", "é.type"])
bodies = st.dictionaries(keys, values(max_leaves=10), max_size=5)


def addresses() -> st.SearchStrategy[str]:
    return st.binary(min_size=32, max_size=32).map(lambda d: "sha256:" + d.hex())


@st.composite
def events(draw: st.DrawFn, refs: list[str] | None = None) -> Event:
    """An event; its refs are drawn from ``refs`` when given, else left empty."""
    chosen: list[str] = []
    if refs:
        chosen = draw(st.lists(st.sampled_from(refs), max_size=3, unique=True))
    return Event(
        draw(event_types), draw(st.integers(min_value=0, max_value=3)), draw(bodies), chosen
    )


# -- writing other encodings of a value ------------------------------------------------------


def _head(major: int, n: int, data: st.DataObject) -> bytes:
    """A CBOR head for argument ``n``: the shortest form, or (drawn) a longer one."""
    forms = []
    if n < 24:
        forms.append(bytes([major << 5 | n]))
    for info, fmt, limit in ((24, ">B", 1 << 8), (25, ">H", 1 << 16), (26, ">I", 1 << 32)):
        if n < limit:
            forms.append(bytes([major << 5 | info]) + struct.pack(fmt, n))
    forms.append(bytes([major << 5 | 27]) + struct.pack(">Q", n))
    # forms[0] is the shortest; drawing index 0 keeps the canonical form.
    return forms[data.draw(st.integers(0, len(forms) - 1))] if len(forms) > 1 else forms[0]


def _float(x: float, data: st.DataObject) -> bytes:
    forms = []
    for head, fmt in ((0xF9, ">e"), (0xFA, ">f"), (0xFB, ">d")):
        try:
            packed = struct.pack(fmt, x)
        except OverflowError:
            continue
        if struct.unpack(fmt, packed)[0] == x or math.isnan(x):
            forms.append(bytes([head]) + packed)
    return forms[data.draw(st.integers(0, len(forms) - 1))]


def _string(major: int, value: str | bytes, data: st.DataObject) -> bytes:
    if value and data.draw(st.booleans(), label="indefinite string"):
        cut = data.draw(st.integers(0, len(value)))  # text is cut between characters
        parts = [value[:cut], value[cut:]]
        chunks = [p.encode("utf-8") if isinstance(p, str) else p for p in parts]
        body = b"".join(_head(major, len(c), data) + c for c in chunks)
        return bytes([major << 5 | 31]) + body + b"\xff"
    raw = value.encode("utf-8") if isinstance(value, str) else value
    return _head(major, len(raw), data) + raw


def other_encoding(value: Any, data: st.DataObject) -> bytes:
    """Valid CBOR for ``value``, with drawn choices the canonical form may forbid."""
    if value is None:
        return b"\xf6"
    if value is True:
        return b"\xf5"
    if value is False:
        return b"\xf4"
    if isinstance(value, int):
        return _head(0, value, data) if value >= 0 else _head(1, -1 - value, data)
    if isinstance(value, float):
        return _float(value, data)
    if isinstance(value, str):
        return _string(3, value, data)
    if isinstance(value, bytes):
        return _string(2, value, data)
    if isinstance(value, list):
        items = b"".join(other_encoding(v, data) for v in value)
        if data.draw(st.booleans(), label="indefinite array"):
            return b"\x9f" + items + b"\xff"
        return _head(4, len(value), data) + items
    if isinstance(value, dict):
        pairs = [(other_encoding(k, data), other_encoding(v, data)) for k, v in value.items()]
        pairs.sort(key=lambda p: p[0])
        if len(pairs) > 1 and data.draw(st.booleans(), label="shuffle keys"):
            pairs = data.draw(st.permutations(pairs))
        items = b"".join(k + v for k, v in pairs)
        if data.draw(st.booleans(), label="indefinite map"):
            return b"\xbf" + items + b"\xff"
        return _head(5, len(value), data) + items
    raise TypeError(type(value))
