"""JSON read as the ledger will record it, or refused.

Python's parser accepts more than JSON and keeps less than it reads: ``NaN`` and ``Infinity``
(which JSON does not have), ``1e999`` (read as an infinity), ``1e-400`` (read as 0), integers
of any size (the ledger holds -2**64 .. 2**64-1; past 4,300 digits Python's own refusal does
not say why) and objects that name a key twice (the last value kept). ``loads`` refuses the
first four with ``Unrecordable`` and the last with ``DuplicateKey``; both are ``ValueError``s,
as a syntax error (``json.JSONDecodeError``) is, and JSON nested too deep to parse is a
``RecursionError``.

A case file (``oloproof.dataset``) and an HTTP system's response are read through it. An error
about a value read from JSON that is not what it should be names its kind with ``kind`` (or, for
a kind recorded by its Python type's name, as a verdict records it, ``kind_named``), so a case
file, a system's reply and a labels file say the same of it.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from ledger.codec import INT_MAX, INT_MIN
from oloproof.jsonkeys import unique_keys

_INT_DIGITS: Final = 20  # 2**64 has 20 digits: a longer integer is out of range, and not converted

# A \uD800-\uDFFF escape may leave a lone surrogate, which is not text the ledger can store:
# only text holding one needs its values checked.
SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")
# A number whose digits before its exponent are not all 0 is not 0 (``_finite_float``).
_MANTISSA_END: Final = re.compile("[eE]")
_NONZERO_DIGIT: Final = re.compile("[1-9]")
JSON_SPACE: Final = " \t\n\r"  # JSON's whitespace (RFC 8259, section 2)


class Unrecordable(ValueError):
    """A value JSON parsers accept but the ledger cannot record."""


def loads(text: str) -> Any:
    """``text`` as JSON, refusing what would not be recorded as it reads (see the module)."""
    return json.loads(
        text,
        parse_float=_finite_float,
        parse_int=_int_in_range,
        parse_constant=_no_constant,
        object_pairs_hook=unique_keys,
    )


def syntax_problem(exc: json.JSONDecodeError) -> str:
    """``not valid JSON (Unterminated string starting at column 30)``: what is wrong with a
    line of JSON and where; a line that goes on after a carriage return says so (a file whose
    lines end in ``\\r`` alone is one line to JSON Lines, its second value extra data)."""
    if exc.doc.startswith("\ufeff"):
        # Python's own words ("decode using utf-8-sig") speak to a programmer, not to the file.
        return (
            "not valid JSON: the line starts with a byte-order mark (U+FEFF), which some "
            "editors write at the start of a file; save the file as UTF-8 without it"
        )
    problem = f"not valid JSON ({unparsed(exc)} at column {exc.colno})"
    before = exc.doc[: exc.pos]
    if exc.msg == "Extra data" and "\r" in before[len(before.rstrip(JSON_SPACE)) :]:
        problem += (
            "; the line goes on after a carriage return (\\r): JSON Lines ends a line at \\n "
            "(or \\r\\n), not at \\r alone"
        )
    return problem


def unparsed(exc: json.JSONDecodeError) -> str:
    """What Python says is wrong with some JSON, without the ``at`` some of its messages end
    in (``Unterminated string starting at``), which left alone read ``at at line 3`` once a
    place is said, or stop at ``at`` when none is."""
    return exc.msg.removesuffix(" at")


def _finite_float(text: str) -> float:
    value = float(text)
    if value - value != 0.0:
        raise Unrecordable(f"the number {text} is too large to record")
    # 1e-400 is below the smallest float: read as 0, a value the text does not hold (a case's
    # input would be recorded, judged and written back by qrels-to-cases as 0.0).
    if value == 0.0 and _NONZERO_DIGIT.search(_MANTISSA_END.split(text, 1)[0]):
        raise Unrecordable(f"the number {text} is too small to record (it would read as 0)")
    return value


def _int_in_range(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > _INT_DIGITS:
        raise Unrecordable(f"an integer of {digits} digits is outside -2**64 .. 2**64-1")
    value = int(text)
    if not INT_MIN <= value <= INT_MAX:
        raise Unrecordable(f"the integer {text} is outside -2**64 .. 2**64-1")
    return value


def _no_constant(text: str) -> float:
    raise Unrecordable(f"{text} is not a JSON number")


# A JSON value's kind, by the name of the Python type the parser gave it.
_KINDS: Final = {
    "NoneType": "null",
    "bool": "a boolean",
    "int": "a number",
    "float": "a number",
    "str": "a string",
    "list": "a list",
    "dict": "an object",
}


def kind_named(type_name: str) -> str:
    """``null``, ``a boolean``, ``a number``, ``a string``, ``a list`` or ``an object``: the
    kind of a JSON value whose Python type is named ``type_name``; any other type's own name."""
    return _KINDS.get(type_name, type_name)


def kind(value: Any) -> str:
    """The kind of ``value`` (``kind_named``), for an error that says what was found."""
    return kind_named(type(value).__name__)
