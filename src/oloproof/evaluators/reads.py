"""What an evaluator reads of a case: the parts a judgment's identity is made of.

Each built-in evaluator declares its reads: the output fields, the ``expected`` fields, the
``input`` fields and the artifact kinds (the last artifact of each kind, as evaluators read
them). A judgment is reused when the evaluator's spec and the values of exactly these parts are
the same as when it was made, so a change to anything else of the case (another expected field,
a label another evaluator reads, the metadata) keeps it.

An LLM judge reads what its prompt includes: its material is the values it would render into
its template for the case (or, for a case it decides without a call, that decision).

An evaluator that declares nothing (one written outside Oloproof) is taken to read the whole
case: its id, input, expected values, metadata, output and artifacts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

from oloproof.evaluators.base import CaseView
from oloproof.evaluators.fields import MISSING, parse_path, read_output, read_path

# One part of a case an evaluator reads, and its value. Parts with a name are the same for every
# evaluator that reads them, so a run works out each one's key once per case; None: not shared.
Part = tuple[str | None, Any]


class ReadDeclaration(Protocol):
    def parts(self, view: CaseView) -> list[Part]:
        """The values of the case this evaluator's verdict can depend on, part by part."""

    def declared(self) -> dict[str, list[str | None]]:
        """What is read, by part (for people: docs, ``inspect``)."""


def _read(value: Any) -> list[Any]:
    # [0] for a field that is absent, [1, value] for one present: no value can pass for absent.
    return [0] if value is MISSING else [1, value]


@dataclass(frozen=True)
class Reads:
    """A declaration of the case fields an evaluator reads (None: the whole part)."""

    output: tuple[str | None, ...] = ()
    expected: tuple[str | None, ...] = ()
    input: tuple[str | None, ...] = ()
    artifacts: tuple[str, ...] = ()

    def parts(self, view: CaseView) -> list[Part]:
        found: list[Part] = []
        output, expected, inputs = self._paths
        for name, path in output:
            found.append((name, _read(read_output(view.output, path))))
        for name, path in expected:
            found.append((name, _read(read_path(view.expected, path))))
        for name, path in inputs:
            found.append((name, _read(read_path(view.input, path))))
        for kind in self.artifacts:
            found.append((f"artifact {kind}", view.artifact(kind)))
        return found

    @cached_property
    def _paths(self) -> tuple[list[tuple[str, tuple[str, ...] | None]], ...]:
        # Each part's name and parsed path, worked out once (parts() runs for every case).
        return tuple(
            [(f"{part} {p!r}", parse_path(p)) for p in paths]
            for part, paths in (
                ("output", self.output),
                ("expected", self.expected),
                ("input", self.input),
            )
        )

    def declared(self) -> dict[str, list[str | None]]:
        return {
            "output": list(self.output),
            "expected": list(self.expected),
            "input": list(self.input),
            "artifacts": list(self.artifacts),
        }


@dataclass(frozen=True)
class PromptReads:
    """An LLM judge's reads: the values its prompt would hold for a case."""

    reads: Reads
    prompt_values: Callable[[CaseView], Any]

    def parts(self, view: CaseView) -> list[Part]:
        return [(None, self.prompt_values(view))]

    def declared(self) -> dict[str, list[str | None]]:
        return self.reads.declared()


class WholeCase:
    """The declaration assumed for an evaluator that makes none: it may read anything."""

    def parts(self, view: CaseView) -> list[Part]:
        whole = [view.case_id, view.input, view.expected, view.metadata, view.output]
        return [("case", [*whole, view.artifacts])]

    def declared(self) -> dict[str, list[str | None]]:
        return {"case": [None]}


def reads_of(evaluator: Any) -> ReadDeclaration:
    """The evaluator's declaration, or ``WholeCase`` when it has none."""
    declare = getattr(evaluator, "reads", None)
    return declare() if callable(declare) else WholeCase()
