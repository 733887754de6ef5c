"""How an id or a name must read where it is printed: each character shown as itself.

Case ids, system names and versions, and rule ids are printed in reports and listings and typed
back (``inspect --case``): ``id_problem`` says why one would print as other text, and
``same_text`` is the form in which two that read alike are one.
"""

from __future__ import annotations

import unicodedata
from typing import Final


def same_text(case_id: str) -> str:
    """``case_id`` in Unicode's composed form (NFC), without zero-width joiners: ids that
    differ only in how an accented letter is encoded, or in a joiner between two emoji (which
    shows as two emoji wherever the pair is no emoji of its own), are one id to anyone reading
    them."""
    if case_id.isascii():  # nearly every id: nothing to compose
        return case_id
    return unicodedata.normalize("NFC", case_id).replace(_JOINER, "")


def id_problem(case_id: str, what: str = "id") -> str | None:
    """Why ``case_id`` would print as another id, worded to follow ``field 'id' ``; or None.
    ``what`` names the text in the sentence (a system's ``name``, a ``rule id``).

    An id is read where it is printed and typed back (``inspect --case``), so each of its
    characters must show as itself: no control (Cc), format (Cf: zero-width spaces and
    joiners, bidi marks, soft hyphens, byte-order marks), line or paragraph separator, space
    other than U+0020 (a no-break space prints as one) or letter drawn as nothing (a Hangul
    filler), and no space at either end. A zero-width joiner between two emoji is allowed: it
    joins them into the one emoji it shows as (``same_text`` leaves it out when comparing).
    """
    if case_id.isascii() and case_id.isprintable() and case_id.strip(" ") == case_id:
        return None  # nearly every id: printable ASCII holds none of them
    at = next((i for i in range(len(case_id)) if _unseen(case_id, i)), None)
    if at is None:
        if case_id.strip(" ") == case_id:
            return None
        at = 0 if case_id.startswith(" ") else len(case_id) - 1
    char, last = case_id[at], len(case_id) - 1
    name = unicodedata.name(char, "") or _CONTROLS.get(char, "<control>")
    code = f"U+{ord(char):04X} {name}"
    looks = _as_printed(case_id)
    if _spacing(char) and 0 < at < last:
        return (
            f"{case_id!r} holds {code} (character {at + 1}), which prints as a plain space "
            f"(the {what} looks like {looks!r}); write a plain space instead"
        )
    place = "starts with" if at == 0 else "ends with" if at == last else "holds"
    number = f" (character {at + 1})" if place == "holds" else ""
    return (
        f"{case_id!r} {place} {code}{number}, which does not show where the {what} is printed "
        f"(it looks like {looks!r}); write the {what} without it"
    )


_JOINER: Final = "\u200d"
_SKIN_TONES: Final = ("\U0001f3fb", "\U0001f3ff")  # the five emoji modifiers
# Characters Unicode files as letters (or marks) that fonts draw as nothing at all.
_BLANK: Final = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0")
# Controls have no Unicode name (UnicodeData.txt says "<control>"); these are their aliases.
_CONTROLS: Final = {
    "\x00": "NULL",
    "\t": "CHARACTER TABULATION",
    "\n": "LINE FEED",
    "\r": "CARRIAGE RETURN",
    "\x1b": "ESCAPE",
    "\x7f": "DELETE",
    "\x85": "NEXT LINE",
}


def _spacing(char: str) -> bool:
    """A space other than U+0020: it prints as one."""
    return char != " " and unicodedata.category(char) == "Zs"


def _unseen(text: str, i: int) -> bool:
    """Whether ``text[i]`` does not show as itself (see ``id_problem``)."""
    char = text[i]
    if char in _BLANK or _spacing(char):
        return True
    if unicodedata.category(char) not in ("Cc", "Cf", "Zl", "Zp"):
        return False
    return not (char == _JOINER and _joins_emoji(text, i))


def _joins_emoji(text: str, i: int) -> bool:
    """Whether the joiner at ``text[i]`` stands between two emoji (symbols, category So), the
    first perhaps followed by its presentation selector or a skin tone, as in 👩🏽‍💻."""
    before = i - 1
    while before >= 0 and (
        text[before] == "\ufe0f" or _SKIN_TONES[0] <= text[before] <= _SKIN_TONES[1]
    ):
        before -= 1
    after = i + 1
    return (
        before >= 0
        and after < len(text)
        and unicodedata.category(text[before]) == "So"
        and unicodedata.category(text[after]) == "So"
    )


def _as_printed(text: str) -> str:
    """``text`` as it shows: each space-like character a space, the unseen ones gone, no
    space at either end."""
    shown = (" " if _spacing(c) else "" if _unseen(text, i) else c for i, c in enumerate(text))
    return "".join(shown).strip(" ")
