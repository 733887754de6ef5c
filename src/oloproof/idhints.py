"""What to say when a name given on the command line names nothing usable.

- A run id (``run_…``) that no ref has: say so and point to ``oloproof runs``, which lists them.
- Text that reads as an address prefix but is shorter than the ledger accepts: say how many hex
  digits a prefix needs and how many were given.
- Anything else the ledger refused keeps the ledger's sentence, with the pointer to
  ``oloproof runs`` added.
"""

from __future__ import annotations

import string

from ledger.address import MIN_PREFIX

_PREFIX = "sha256:"
RUNS_HINT = "`oloproof runs` lists this project's runs"


def unknown_id_message(text: str, ledger_message: str) -> str:
    """One sentence for a name the ledger could not resolve (``ledger_message`` says why)."""
    bare = text[len(_PREFIX) :] if text.startswith(_PREFIX) else text
    if bare and all(c in string.hexdigits for c in bare) and len(bare) < MIN_PREFIX:
        digits = "digit" if len(bare) == 1 else "digits"
        return (
            f"{text!r} is too short to look up: an address prefix needs at least {MIN_PREFIX} "
            f"hex digits (this has {len(bare)} {digits}); or name a run by its id ({RUNS_HINT})"
        )
    if text.startswith(_PREFIX) and not bare:
        return f"{text!r} has no hex digits after 'sha256:' ({RUNS_HINT})"
    if text.startswith("run_"):
        return f"no run {text} in this ledger; {RUNS_HINT}"
    return f"{ledger_message}; {RUNS_HINT}"
