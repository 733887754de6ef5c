"""Errors raised by the oloproof library.

The CLI turns every ``OloproofError`` into one sentence on stderr and exit code 2; nothing
else in the library prints or exits.

    OloproofError                 a user mistake: bad input, unknown id (exit 2)
    ├── ConfigError               oloproof.yaml, a policy file, a system reference
    ├── DatasetError              cases.jsonl
    ├── ArtifactError             a system recorded a malformed artifact or returned an
    │                             output the ledger cannot record
    ├── UnknownIdError            an id, prefix or ref that names nothing usable
    └── LedgerAccessError         the ledger refused (format, corruption, lock)

    Terminated (a KeyboardInterrupt) SIGTERM stopped a run; handled as Ctrl-C is (exit 143)
"""

from __future__ import annotations


class OloproofError(Exception):
    """A user-facing error: ``message`` says what is wrong, ``where`` says where."""

    exit_code = 2

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where
        self.hint = hint

    def __str__(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        return f"{text} ({self.hint})" if self.hint else text


class ConfigError(OloproofError):
    """oloproof.yaml, a policy file or a system reference is wrong."""


class DatasetError(OloproofError):
    """cases.jsonl is wrong."""


class ArtifactError(OloproofError):
    """A system recorded an artifact that is malformed or undeclared, or returned an output
    the ledger cannot record (a NaN, say)."""


class UnknownIdError(OloproofError):
    """An id, address prefix or ref names nothing usable."""


class LedgerAccessError(OloproofError):
    """The ledger refused an operation (unsupported format, corruption, lock)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM stopped the work ``oloproof.aio.run`` was doing: handled wherever Ctrl-C is."""
