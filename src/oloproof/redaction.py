r"""Keep configured secrets out of everything Oloproof stores or prints.

Requirements:

1. One registry. An adapter that reads a secret from the environment (an HTTP system's header
   value given as ``${NAME}``, a judge's API key) registers the value with ``register`` as it
   reads it; nothing else needs to know about that adapter. A new adapter only registers its
   own secrets.
2. Applied at the chokepoints, not per adapter: ``oloproof.events.make`` (every event the
   ledger stores is built there) passes each body through ``redact``, and the command line
   wraps its output streams in ``RedactingStream``, so every printed line (errors included)
   passes through ``redact_text``. Every occurrence of a registered value in a string (or in
   bytes) becomes ``[redacted]``, in map keys as well as values.
3. An occurrence is recognised in the forms an endpoint plausibly echoes a value in: any of
   its characters (all, some or none) may be written in one of these forms (``_character``),
   and the whole occurrence, escapes included, is replaced.

   - The string escapes of JSON: ``\/``, ``\"``, ``\\``, ``\n`` and the other short ones,
     ``\u002F`` or ``\u002f`` (a surrogate pair beyond the BMP); and those JavaScript and
     Python add: a backslash before any ASCII punctuation (``\'``), ``\x2f``,
     ``\U0001f600``. Up to three levels deep: JSON text quoted in JSON writes a ``/`` as
     ``\\\/``, and once more quoted, with seven backslashes.
   - Percent-encoding of its UTF-8 bytes, as a URL that quotes the value has it: ``%2F`` or
     ``%2f``, ``+`` for a space; up to three levels (``%252F``).
   - HTML character references: ``&#43;``, ``&#x2B;``, ``&quot;``.

4. Text cut short before it is stored (an excerpt of a body) is cut with ``cut``, which never
   ends part way through a secret, in any of those forms: the first characters of one are not
   recognised as it.
5. The run report says when it happened: ``stored_count()`` counts the occurrences replaced in
   what was stored, and a run records how many it replaced (``Redacted: 16 occurrences of
   configured secrets``).
6. Costs nothing until a secret is registered: every function checks one module attribute and
   returns its argument unchanged. Once one is, a text holding none of the characters an
   escaped form needs (``\``, ``%``, ``&``; ``+`` when a secret has a space) can only hold the
   values as they are, and is searched for those alone in one pass, as fast as when no escape
   was recognised; only other texts are searched for every form, one value at a time. Each
   value's patterns are compiled once, when it is registered.

Values shorter than ``MIN_LENGTH`` characters are not registered: they occur inside ordinary
text ("1", "yes"), replacing them would change outputs and so verdicts, and no credential is
that short. The registry lives as long as the process; ``forget_all`` is for tests.

Not recognised: a value an endpoint transformed rather than escaped (base64 of
``user:secret``, a hash, a change of case, a part of it). Oloproof's adapters send each value
as it was read, so an endpoint that repeats what it got repeats that, in one of the forms
above; and a pattern for a transform would miss part of the value (base64 writes each
character differently at each of three offsets, mixed with its neighbours') or match
ordinary text.
"""

from __future__ import annotations

import re
import string
import threading
from dataclasses import dataclass
from typing import IO, Any, Final

__all__ = [
    "MIN_LENGTH",
    "REDACTED",
    "RedactingStream",
    "add_stored",
    "cut",
    "forget_all",
    "redact",
    "redact_text",
    "register",
    "stored_count",
]

REDACTED: Final = "[redacted]"
MIN_LENGTH: Final = 6

# Three levels of quoting: JSON text in JSON in JSON puts 1, 2 to 3, or 4 to 7 backslashes
# before an escaped character; a URL quoted in a URL in a URL writes a "%" as "%2525".
_BACKSLASHES: Final = 7
_PERCENT_AGAIN: Final = 2  # the "25"s after a "%"
_LEADING_ZEROS: Final = 3  # that an HTML character reference may have (&#x002B;)
_SHORT_ESCAPES: Final = {"\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t"}
_BACKSLASHED: Final = frozenset(string.punctuation + " ")
_ENTITIES: Final = {"&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "apos"}


@dataclass(frozen=True, slots=True)
class _Patterns:
    """What the registered values are searched with (requirement 6)."""

    plain: re.Pattern[str]  # every value as it is
    every: tuple[re.Pattern[str], ...]  # each value in every form, the longest value first
    plus: bool  # whether a value has a space, which "+" may stand for
    shortest: int  # the fewest characters an occurrence can take: the shortest value as it is
    longest: int  # the most characters one occurrence can take, in any form


_lock = threading.Lock()
_every: dict[str, tuple[re.Pattern[str], int]] = {}  # each value's pattern, its longest
_patterns: _Patterns | None = None  # None until a secret is registered: the fast path
_stored = 0


def register(value: str | None) -> None:
    """Treat ``value`` as a secret from now on (a value read from the environment)."""
    global _patterns
    if not isinstance(value, str) or len(value) < MIN_LENGTH:
        return
    with _lock:
        if value in _every:
            return
        characters = [_character(c) for c in value]
        pattern = re.compile("".join(p for p, _ in characters))
        _every[value] = (pattern, sum(n for _, n in characters))
        ordered = sorted(_every, key=len, reverse=True)  # the longest value wins an overlap
        _patterns = _Patterns(
            plain=re.compile("|".join(re.escape(v) for v in ordered)),
            every=tuple(_every[v][0] for v in ordered),
            plus=any(" " in v for v in ordered),
            shortest=len(ordered[-1]),
            longest=max(n for _, n in _every.values()),
        )


def _character(c: str) -> tuple[str, int]:
    """The pattern of ``c`` in each form of requirement 3, and the most characters it takes.

    Each alternative opens with a literal character: only then does the engine skip straight
    to where an occurrence could start instead of trying the pattern at every position, which
    is several times slower."""
    code = ord(c)
    slashes = rf"\\\\{{0,{_BACKSLASHES - 1}}}"
    if code < 0x10000:
        after = [f"u{_hex(code, 4)}"]
    else:  # a UTF-16 surrogate pair, as JSON writes it
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        after = [f"u{_hex(high, 4)}{slashes}u{_hex(low, 4)}"]
    after.append(f"U{_hex(code, 8)}")
    if code < 0x100:
        after.append(f"x{_hex(code, 2)}")
    if c in _SHORT_ESCAPES:
        after.append(_SHORT_ESCAPES[c])
    elif c in _BACKSLASHED:
        after.append(re.escape(c))
    encoded = _utf8(c)
    zeros = f"0{{0,{_LEADING_ZEROS}}}"
    forms = [
        (f"{slashes}(?:{'|'.join(after)})", _BACKSLASHES + (9 if code < 0x10000 else 17)),
        ("".join(f"%(?:25){{0,{_PERCENT_AGAIN}}}{_hex(b, 2)}" for b in encoded), 7 * len(encoded)),
        (f"&#(?:{zeros}{code}|[xX]{zeros}{_hex(code)});", len(str(code)) + 4 + _LEADING_ZEROS),
    ]
    if c in _ENTITIES:
        forms.append((f"&{_ENTITIES[c]};", len(_ENTITIES[c]) + 2))
    if c == " ":
        forms.append((r"\+", 1))
    forms.append((re.escape(c), 1))  # last: an escape that starts here is the longer match
    return "(?:" + "|".join(p for p, _ in forms) + ")", max(n for _, n in forms)


def _hex(number: int, width: int = 1) -> str:
    """A pattern of ``number`` in hexadecimal, each letter in either case."""
    return "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{number:0{width}x}")


def _utf8(c: str) -> bytes:
    # A value read from the environment holds the bytes that are not UTF-8 as lone
    # surrogates, which give those bytes back; any other lone surrogate is encoded as UTF-8
    # would encode it, were it allowed.
    try:
        return c.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return c.encode("utf-8", "surrogatepass")


def _searches(text: str, patterns: _Patterns) -> tuple[re.Pattern[str], ...]:
    """The patterns to search ``text`` with: every escaped form holds one of these characters,
    so a text without them is searched for the values as they are, in one pass."""
    if "\\" in text or "%" in text or "&" in text or (patterns.plus and "+" in text):
        return patterns.every
    return (patterns.plain,)


def _replaced(text: str, patterns: _Patterns) -> tuple[str, int]:
    """``text`` with every occurrence replaced, and how many were."""
    if len(text) < patterns.shortest:  # most strings stored are names and ids
        return text, 0
    count = 0
    for pattern in _searches(text, patterns):
        text, n = pattern.subn(REDACTED, text)
        count += n
    return text, count


def redact_text(text: str) -> str:
    """``text`` with every registered secret replaced (not counted: for printed output)."""
    patterns = _patterns
    if patterns is None:
        return text
    return _replaced(text, patterns)[0]


def cut(text: str, limit: int) -> str:
    """``text``'s first ``limit`` characters, or fewer where the cut would fall inside a
    registered secret, in any form: it then ends before the secret, which is left out whole."""
    patterns = _patterns
    if patterns is None or len(text) <= limit:
        return text[:limit]
    window = text[: limit + patterns.longest]  # holds all of any occurrence the cut falls in
    searches = _searches(window, patterns)
    end, moved = limit, True
    while moved:  # a cut moved back to before one secret may fall inside another
        moved = False
        for pattern in searches:
            for found in pattern.finditer(window):
                if found.start() >= end:
                    break
                if found.end() > end:
                    end, moved = found.start(), True
                    break
    return text[:end]


def redact(value: Any) -> Any:
    """``value`` (a body to store) with every registered secret replaced in every string and
    bytes inside it, counting the replacements (``stored_count``)."""
    patterns = _patterns
    if patterns is None:
        return value
    found = [0]
    cleaned = _walk(value, patterns, found)
    if found[0]:
        global _stored
        with _lock:
            _stored += found[0]
    return cleaned


def _walk(value: Any, patterns: _Patterns, found: list[int]) -> Any:
    if isinstance(value, str):
        cleaned, n = _replaced(value, patterns)
        found[0] += n
        return cleaned
    if isinstance(value, dict):
        return {_walk(k, patterns, found): _walk(v, patterns, found) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_walk(v, patterns, found) for v in value]
    if isinstance(value, bytes):
        # Searched as text: every byte that is not UTF-8 stands for itself and comes back.
        text, n = _replaced(value.decode("utf-8", "surrogateescape"), patterns)
        found[0] += n
        return text.encode("utf-8", "surrogateescape") if n else value
    return value


def stored_count() -> int:
    """How many occurrences ``redact`` has replaced in this process so far."""
    return _stored


def add_stored(count: int) -> None:
    """Count ``count`` occurrences replaced by another process in what this one stores (a Ray
    replica redacts what it sends back with the secrets it read)."""
    global _stored
    with _lock:
        _stored += count


def forget_all() -> None:
    """Forget every registered secret (for tests; a run never forgets one)."""
    global _patterns
    with _lock:
        _every.clear()
        _patterns = None


class RedactingStream:
    """A text stream that writes through ``redact_text``: the command line wraps stdout and
    stderr in it. It has no ``buffer``, so nothing can write around it by accident."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact_text(text) if _patterns is not None else text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return getattr(self._stream, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:
        return getattr(self._stream, "errors", None)

    @property
    def closed(self) -> bool:
        return bool(getattr(self._stream, "closed", False))
