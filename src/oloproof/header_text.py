"""What text an HTTP header value cannot carry, for the HTTP system's headers and a judge's key.

httpx sends header text as ASCII, and h11 refuses control characters: a value holding either
fails every request. Said by the kind of its first such character, never the character itself
(it may be part of a secret).
"""

from __future__ import annotations


def unsendable(text: str) -> str | None:
    """The kind of the first character in ``text`` that no header value may hold, or None."""
    for char in text:
        if " " <= char <= "~" or char == "\t":
            continue
        if char in "\r\n":
            return "a line break"
        if char < " " or char == "\x7f":
            return "a control character"
        if "\udc80" <= char <= "\udcff":
            # How Python holds environment bytes that do not decode (PEP 383).
            return "bytes that are not text"
        return "a character outside ASCII"
    return None
