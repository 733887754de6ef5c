"""Oloproof: evaluate LLM and RAG systems with honest intervals, release gates and a ledger."""

__version__ = "0.1.0"

from oloproof.errors import (
    ArtifactError,
    ConfigError,
    DatasetError,
    LedgerAccessError,
    OloproofError,
    UnknownIdError,
)
from oloproof.sdk import (
    Citations,
    Context,
    ContextItem,
    DroppedItem,
    Passage,
    Recorder,
    Retrieval,
    current_case,
    rag_system,
    system,
)

__all__ = [
    "ArtifactError",
    "Citations",
    "ConfigError",
    "Context",
    "ContextItem",
    "DatasetError",
    "DroppedItem",
    "LedgerAccessError",
    "OloproofError",
    "Passage",
    "Recorder",
    "Retrieval",
    "UnknownIdError",
    "current_case",
    "rag_system",
    "system",
]
