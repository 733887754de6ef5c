"""Object-like spans in free text, read as loosely as a language model reads them.

A judge's reply must not be a verdict object copied out of the material it judged
(``oloproof.evaluators.judge_reply``). A model that copies one also repairs it: a Python dict's
repr (``{'verdict': 'pass'}``), unquoted keys (``{verdict: "pass"}``) or a trailing comma
(``{"verdict": "pass",}``) come back as valid JSON. So the material is searched for what could
be read as an object, not only for strict JSON:

- a key is a quoted string (``"`` or ``'``, with an optional ``u``/``b``/``r`` prefix) or a
  bare word; a value is a quoted string, a bare word (``pass``, ``0.9``, ``True``, ``null``:
  numbers, booleans and nulls are read as such), an object or an array; a comma may follow the
  last member;
- an object's bare value runs to the object's closing brace, or to a comma that a key and its
  colon (or the closing brace) follow, over brackets and line breaks, as a model reads it:
  ``{verdict: pass, reason: a, b [1]}`` gives the reason ``a, b [1]``. A value cut at its first
  comma, bracket or line break lost the object, and a reply that repaired it into JSON passed.
  An opening brace still ends it, so no object inside is hidden. In an array a comma ends a
  bare value;
- every object is found: nested ones, ones after a span that breaks off, and ones inside any
  quoted string, whose text is read in turn once its escapes are decoded (an object carried as
  a JSON string inside a fake reply), up to ``STRING_DEPTH`` strings deep; a text holding
  ``\\"`` is also read with those as plain quotes.

Each object is given as its scalar members, ``(key, value)`` in order, a key that appears twice
given twice: a judgment's verdict, score and reason are scalars.

The material comes from the system under test, and may be large and hostile, so the time taken
is linear in its length whatever it holds. Each text is read in one pass, with the nesting on
an explicit stack (no recursion to overflow on a million braces). A span that breaks off is
left where it breaks and never read again from a later brace inside it: every object still open
there breaks at the same character, so nothing is lost. The braces a quoted string holds are
read with the string's own text, one level down, and each level reads at most as many
characters as the one above: at most ``2 * (STRING_DEPTH + 1)`` readings of any character. The
token patterns cannot backtrack (possessive repeats), and a string with no closing quote is
searched to the end at most once per kind of quote: a later quote of that kind would close it.
Inside an object's bare value, what follows each comma is looked at once: up to the next comma,
or to the end of a quoted string that starts right after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

Scalar = str | float | bool | None
Members = tuple[tuple[str, Scalar], ...]

STRING_DEPTH = 3
"""How many quoted strings deep objects are looked for (a fake reply inside a fake reply is 2)."""

_Expect = Literal["key", "colon", "value", "next"]

_NONSPACE = re.compile(r"\S")
_PUNCTUATION = frozenset("{}[],:")
_STRING = re.compile(
    r"""[uUbBrR]{0,2}(?:"[^"\\]*+(?:\\.[^"\\]*+)*+"|'[^'\\]*+(?:\\.[^'\\]*+)*+')""", re.DOTALL
)
_BARE_KEY = re.compile(r"""[^\s{}\[\],:"'][^\n{}\[\],:"']*+""")
_BARE_VALUE = re.compile(r"""[^\s{}\[\],:"'][^\n{}\[\],]*+""")
# A key and its colon, or a closing bracket: what a comma inside an object's bare value must be
# followed by to end it (a trailing comma before the brace is the object's, not the value's).
_MEMBER_AHEAD = rf"""\s*+(?:[}}\]]|(?:{_STRING.pattern}|{_BARE_KEY.pattern})\s*+:)"""
_BARE_MEMBER_VALUE = re.compile(
    rf"""[^\s{{}}\[\],:"'](?:[^{{}},]++|,(?!{_MEMBER_AHEAD}))*+""", re.DOTALL
)
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)", re.DOTALL)
_NUMBER = re.compile(r"[-+]?+(?:\d++\.?+\d*+|\.\d++)(?:[eE][-+]?+\d++)?+")
_ESCAPED = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "0": "\0"}
_WORDS: dict[str, Scalar] = {
    "true": True,
    "True": True,
    "false": False,
    "False": False,
    "null": None,
    "None": None,
}


class _Open:
    """An object or array being read: what comes next, and an object's members so far."""

    __slots__ = ("closer", "expect", "is_object", "key", "members")

    def __init__(self, *, is_object: bool) -> None:
        self.is_object = is_object
        self.closer = "}" if is_object else "]"
        self.expect: _Expect = "key" if is_object else "value"
        self.key = ""
        self.members: list[tuple[str, Scalar]] = []

    def may_close(self) -> bool:
        """Whether the closing bracket may come now: after the opening one, a comma (a trailing
        one is allowed) or a member."""
        return self.expect in ("key", "next") if self.is_object else self.expect != "colon"


def loose_objects(text: str, depth: int = STRING_DEPTH) -> Iterator[Members]:
    """The scalar members of every object-like span in ``text`` (see the module's docstring)."""
    yield from _read(text, depth)
    unescaped = text.replace('\\"', '"')
    if unescaped != text:
        yield from _read(unescaped, depth)


def _read(text: str, depth: int) -> Iterator[Members]:
    stack: list[_Open] = []
    pos = 0
    while True:
        if not stack:
            pos = text.find("{", pos)
            if pos < 0:
                return
            stack.append(_Open(is_object=True))
            pos += 1
        visible = _NONSPACE.search(text, pos)
        if visible is None:
            return
        pos = visible.start()
        top, char = stack[-1], text[pos]
        if char == top.closer and top.may_close():
            stack.pop()
            pos += 1
            if top.is_object:
                yield tuple(top.members)
        elif top.expect == "colon" or top.expect == "next":
            if char != (":" if top.expect == "colon" else ","):
                # Not an object after all, nor any that holds it: read on from this character.
                stack.clear()
                continue
            top.expect = "value" if top.expect == "colon" or not top.is_object else "key"
            pos += 1
        elif top.expect == "value" and char in "{[":
            top.expect = "next"  # once the nested one closes
            stack.append(_Open(is_object=char == "{"))
            pos += 1
        elif char in _PUNCTUATION:
            stack.clear()
            continue
        else:
            found = _STRING.match(text, pos)
            if found is not None:
                word = _decoded(found[0])
                if depth > 0 and "{" in word:
                    yield from loose_objects(word, depth - 1)
                value: Scalar = word
            else:
                if top.expect == "key":
                    bare = _BARE_KEY
                else:
                    bare = _BARE_MEMBER_VALUE if top.is_object else _BARE_VALUE
                found = bare.match(text, pos)
                if found is None:
                    stack.clear()
                    continue
                word = found[0].rstrip()
                value = word if top.expect == "key" else _scalar(word)
            pos = found.end()
            if top.expect == "key":
                top.key, top.expect = word, "colon"
            else:
                if top.is_object:
                    top.members.append((top.key, value))
                top.expect = "next"


def _decoded(token: str) -> str:
    """A quoted string's text: prefix and quotes off, escapes decoded (an unknown one is its
    character, as ``\\'`` is ``'``)."""
    body = token.lstrip("uUbBrR")[1:-1]
    if "\\" not in body:
        return body
    text = _ESCAPE.sub(_unescaped, body)
    # A character outside the BMP is escaped as a surrogate pair: join it, as JSON's reader does.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _unescaped(match: re.Match[str]) -> str:
    code = match[1]
    if len(code) > 1:
        return chr(int(code[1:], 16))
    return _ESCAPED.get(code, code)


def _scalar(word: str) -> Scalar:
    """A bare word as a value: a number, a boolean, a null, or the word itself."""
    if word in _WORDS:
        return _WORDS[word]
    if _NUMBER.fullmatch(word):
        return float(word)
    return word
