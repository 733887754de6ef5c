"""The checks of a Python caller's arguments, and how an error names them.

Requirements (``docs/python-api.md``):

1. A public function checks each argument by name before anything runs, and takes what the
   matching option of its command takes: unchecked, an argument would be taken for something
   else (``True`` as 1, ``"no"`` as true) or fail deep inside (a str compared with an int, an
   integer the ledger cannot record). A numpy integer is a whole number; a ``bool`` is not.
2. An error names the arguments the way its caller wrote them (``Spelling``): a command's
   options (``--sample 5``), or a function's keyword arguments (``evaluate(): sample=5``), so
   that neither reads a name it never wrote.

Light on purpose (no ledger, no pydantic): the diagnosis labels the CLI loads at start-up use
``Spelling``.
"""

from __future__ import annotations

import numbers
import os
from dataclasses import dataclass
from pathlib import Path

from oloproof.errors import ConfigError

INT_MAX = (1 << 64) - 1  # ledger.codec.INT_MAX, not imported (see above): what a run records
MAX_REPEATS = 1000
"""The most repeats of a case ``--repeats`` and ``repeats=`` take (each repeat of a case is
kept in the case's result)."""


@dataclass(frozen=True)
class Spelling:
    """How an error names its caller's arguments: as a command's options (``function`` None)
    or as the keyword arguments of ``function`` (``"evaluate()"``), which it is said ``where``.
    """

    function: str | None = None

    def name(self, argument: str) -> str:
        """``--top-k`` or ``top_k``; the repeatable ``--filter`` is the list ``filters``."""
        if self.function is not None:
            return argument
        return "--filter" if argument == "filters" else f"--{argument.replace('_', '-')}"

    def given(self, argument: str, value: object) -> str:
        """``--sample 5``, ``--intervention top-k`` or ``sample=5``, ``intervention='top-k'``."""
        if self.function is None:
            return f"{self.name(argument)} {value}"
        return f"{argument}={value!r}"

    def on(self, argument: str) -> str:
        """A flag given: ``--reuse-generations``, or ``reuse_generations=True``."""
        return self.name(argument) if self.function is None else f"{argument}=True"

    def wanted(self, argument: str, metavar: str) -> str:
        """``--top-k N`` or ``top_k=N``: an argument to give, with a placeholder for its value."""
        sep = " " if self.function is None else "="
        return f"{self.name(argument)}{sep}{metavar}"

    def item(self, argument: str, shown: str) -> str:
        """One value of a repeatable option: ``--filter X``, or ``X in filters``."""
        return (
            f"{self.name(argument)} {shown}" if self.function is None else f"{shown} in {argument}"
        )


OPTIONS = Spelling()
"""The command line's names (the default of the functions the CLI calls)."""


def shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def count(name: str, value: object, what: str, low: int, high: int = INT_MAX, *, where: str) -> int:
    """``value`` as an int from ``low`` to ``high``; a numpy integer is one, a bool is not."""
    too_large = False
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        number = int(value)
        if low <= number <= high:
            return number
        too_large = number > INT_MAX
    span = f", {low} or more" if high == INT_MAX else f" from {low} to {high}"
    said = f"{name} is {what} (an int{span}), not {shown(value)}"
    raise ConfigError(f"{said} (larger than a run records)" if too_large else said, where=where)


def whole(name: str, value: object, what: str, *, where: str | None) -> int:
    """``value`` as an int of any size, its range left to the caller (whose error says what it
    always said); a numpy integer is one, a bool is not. ``what`` says what it is, with its
    type (and what else, such as None, is taken)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    raise ConfigError(f"{name} is {what}, not {shown(value)}", where=where)


def flag(name: str, value: object, *, where: str) -> bool:
    """``value`` when it is ``True`` or ``False`` (``"no"`` would read as true)."""
    if not isinstance(value, bool):
        raise ConfigError(f"{name} is True or False, not {shown(value)}", where=where)
    return value


def text(name: str, value: object, what: str, *, where: str) -> str:
    """``value`` when it is a str (``what`` says what else, such as None, is taken)."""
    if not isinstance(value, str):
        raise ConfigError(f"{name} is {what}, not {shown(value)}", where=where)
    return value


def path(name: str, value: object, what: str, *, where: str, optional: bool = False) -> Path:
    """``value`` as a path: a str or an ``os.PathLike`` (not the settings themselves)."""
    if isinstance(value, (str, os.PathLike)):
        return Path(value)
    kind = "None" if value is None else type(value).__name__
    if value is not None:
        kind = f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"
    or_none = " or None" if optional else ""
    raise ConfigError(f"{name} is {what} (a str or os.PathLike){or_none}, not {kind}", where=where)
