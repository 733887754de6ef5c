"""What to say when a name given on the command line names nothing usable.

- A run id (``run_…``) that no ref has: say so and point to ``oloproof runs``, which lists them.
- Text that reads as an address prefix but is shorter than the ledger accepts: say how many hex
  digits a prefix needs and how many were given.
- ``sha256:`` followed by what is no hex digit, or by more than 64 of them: say which.
- Text with white space at its start or end (``'latest '``, a run id copied with its
  newline): refused before any lookup (``malformed_id_message``), as are the ``sha256:`` and
  length mistakes above and an empty text. The ledger strips white space, and ``latest``
  stripped so would read the raw ref, which ``oloproof.latest`` never does.
- Text longer than any ref name is shown cut short, with its length.
- A whole address no event has may be a chain head, which ``verify``, ``ledger import`` and
  ``ledger compact`` print written like an address: say how ``verify --head`` checks one.
- Anything else the ledger refused keeps the ledger's sentence, with the pointer to
  ``oloproof runs`` added.
"""

from __future__ import annotations

import string

from ledger.address import DIGITS, MIN_PREFIX, PREFIX, REF_NAME_MAX

_SHOWN = 40  # characters of a too-long text shown
RUNS_HINT = "`oloproof runs` lists this project's runs"


def malformed_id_message(text: str) -> str | None:
    """The sentence for text that names nothing in any ledger, else None: empty, with white
    space around it, ``sha256:`` with what is no hex digit or more than 64 of them, or longer
    than any ref name. Checked before any lookup."""
    stripped = text.strip()
    if not stripped:
        return f"an empty id names nothing: give a run id, a ref or an address ({RUNS_HINT})"
    if stripped != text:
        return (
            f"{_shown(text)} has white space at its start or end, which no run id, ref or "
            f"address has; give {_shown(stripped)} ({RUNS_HINT})"
        )
    bare = text[len(PREFIX) :] if text.startswith(PREFIX) else text
    if text.startswith(PREFIX):
        wrong = next((c for c in bare if c not in string.hexdigits), None)
        if wrong is not None:
            return f"{_shown(text)} is not an address: {wrong!r} is not a hex digit ({RUNS_HINT})"
        if not bare:
            return f"{text!r} has no hex digits after 'sha256:' ({RUNS_HINT})"
    if len(bare) > DIGITS and all(c in string.hexdigits for c in bare):
        return (
            f"{_shown(text)} is not an address: it has {len(bare)} hex digits; an address has "
            f"{DIGITS} ({RUNS_HINT})"
        )
    if len(text) > REF_NAME_MAX:
        return (
            f"{_shown(text)} is no address, prefix or ref name: a ref name has at most "
            f"{REF_NAME_MAX} characters ({RUNS_HINT})"
        )
    return None


def unknown_id_message(text: str, ledger_message: str) -> str:
    """One sentence for a name the ledger could not resolve (``ledger_message`` says why)."""
    malformed = malformed_id_message(text)
    if malformed is not None:
        return malformed
    bare = text[len(PREFIX) :] if text.startswith(PREFIX) else text
    if bare and all(c in string.hexdigits for c in bare) and len(bare) < MIN_PREFIX:
        digits = "digit" if len(bare) == 1 else "digits"
        return (
            f"{text!r} is too short to look up: an address prefix needs at least {MIN_PREFIX} "
            f"hex digits (this has {len(bare)} {digits}); or name a run by its id ({RUNS_HINT})"
        )
    if text.startswith("run_"):
        return f"no run {text} in this ledger; {RUNS_HINT}"
    if text.startswith(PREFIX) and len(bare) == DIGITS:  # whole: it may be a printed chain head
        return f"{ledger_message}; {head_hint(text)}; {RUNS_HINT}"
    return f"{ledger_message}; {RUNS_HINT}"


def head_hint(text: str) -> str:
    """What to do with a whole address no event has: chain heads are written like addresses."""
    return (
        "a chain head (what verify, ledger import and ledger compact print) is no event: "
        f"oloproof verify --head {text} says whether it is one of this ledger's history"
    )


def _shown(text: str) -> str:
    """``text`` quoted, cut short with its length when it is longer than a line."""
    if len(text) <= 2 * _SHOWN:
        return repr(text)
    return f"{text[:_SHOWN]!r}… ({len(text)} characters)"
