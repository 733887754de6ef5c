"""Keep configured secrets out of everything Oloproof stores or prints.

Requirements:

1. One registry. An adapter that reads a secret from the environment (an HTTP system's header
   value given as ``${NAME}``, a judge's API key) registers the value with ``register`` as it
   reads it; nothing else needs to know about that adapter. A new adapter only registers its
   own secrets.
2. Applied at the chokepoints, not per adapter: ``oloproof.events.make`` (every event the
   ledger stores is built there) passes each body through ``redact``, and the command line
   wraps its output streams in ``RedactingStream``, so every printed line (errors included)
   passes through ``redact_text``. Every occurrence of a registered value in a string (or in
   bytes) becomes ``[redacted]``, in map keys as well as values; so does the value as it
   appears inside JSON text (quotes and backslashes escaped), where an endpoint echoes it in a
   body.
3. Text cut short before it is stored (an excerpt of a body) is cut with ``cut``, which never
   ends part way through a secret: the first characters of one are not recognised as it.
4. The run report says when it happened: ``stored_count()`` counts the occurrences replaced in
   what was stored, and a run records how many it replaced (``Redacted: 16 occurrences of
   configured secrets``).
5. Costs nothing until a secret is registered: every function checks one module attribute and
   returns its argument unchanged.

Values shorter than ``MIN_LENGTH`` characters are not registered: they occur inside ordinary
text ("1", "yes"), replacing them would change outputs and so verdicts, and no credential is
that short. The registry lives as long as the process; ``forget_all`` is for tests.
"""

from __future__ import annotations

import json
import re
import threading
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

_lock = threading.Lock()
_values: set[str] = set()
_text: re.Pattern[str] | None = None  # None until a secret is registered: the fast path
_bytes: re.Pattern[bytes] | None = None
_longest = 0  # the longest form of a registered value, in characters
_stored = 0


def register(value: str | None) -> None:
    """Treat ``value`` as a secret from now on (a value read from the environment)."""
    global _text, _bytes, _longest
    if not isinstance(value, str) or len(value) < MIN_LENGTH:
        return
    forms = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    with _lock:
        if forms <= _values:
            return
        _values.update(forms)
        ordered = sorted(_values, key=len, reverse=True)  # the longest form wins an overlap
        _longest = len(ordered[0])
        _text = re.compile("|".join(re.escape(v) for v in ordered))
        _bytes = re.compile(b"|".join(re.escape(v.encode("utf-8")) for v in ordered))


def redact_text(text: str) -> str:
    """``text`` with every registered secret replaced (not counted: for printed output)."""
    pattern = _text
    if pattern is None:
        return text
    return pattern.sub(REDACTED, text)


def cut(text: str, limit: int) -> str:
    """``text``'s first ``limit`` characters, or fewer where the cut would fall inside a
    registered secret: it then ends before the secret, which is left out whole."""
    pattern = _text
    if pattern is None or len(text) <= limit:
        return text[:limit]
    for found in pattern.finditer(text, 0, limit + _longest):
        if found.start() >= limit:
            break
        if found.end() > limit:
            return text[: found.start()]
    return text[:limit]


def redact(value: Any) -> Any:
    """``value`` (a body to store) with every registered secret replaced in every string and
    bytes inside it, counting the replacements (``stored_count``)."""
    if _text is None:
        return value
    found = [0]
    cleaned = _walk(value, found)
    if found[0]:
        global _stored
        with _lock:
            _stored += found[0]
    return cleaned


def _walk(value: Any, found: list[int]) -> Any:
    if isinstance(value, str) and _text is not None:
        cleaned, n = _text.subn(REDACTED, value)
        found[0] += n
        return cleaned
    if isinstance(value, dict):
        return {_walk(k, found): _walk(v, found) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_walk(v, found) for v in value]
    if isinstance(value, bytes) and _bytes is not None:
        cleaned_bytes, n = _bytes.subn(REDACTED.encode(), value)
        found[0] += n
        return cleaned_bytes
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
    global _text, _bytes, _longest
    with _lock:
        _values.clear()
        _text = _bytes = None
        _longest = 0


class RedactingStream:
    """A text stream that writes through ``redact_text``: the command line wraps stdout and
    stderr in it. It has no ``buffer``, so nothing can write around it by accident."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact_text(text) if _text is not None else text)
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
