"""The shape of one line of cases.jsonl, as a JSON Schema for editors and other tools
(``schemas/case.json``, written by ``oloproof.schemas``).

``oloproof.dataset`` checks each line by hand instead, for its speed and for errors that name
the line and the field; these models only describe the file (what the loader refuses, they
refuse too), and loading the dataset does not import them (nor pydantic).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from oloproof.dataset import GRADE_LIMIT

# A label's ids are matched exactly, so whitespace at either end would match no passage; the
# pattern also refuses the empty id.
_NO_END_SPACE = r"^\S([\s\S]*\S)?$"


class RelevanceLabel(BaseModel):
    """A passage that answers the case."""

    model_config = ConfigDict(extra="forbid")
    doc_id: str = Field(pattern=_NO_END_SPACE, description="The relevant document.")
    chunk_id: str | None = Field(
        default=None, pattern=_NO_END_SPACE, description="The relevant chunk, if labelled."
    )
    grade: float = Field(
        default=1,
        ge=-GRADE_LIMIT,
        le=GRADE_LIMIT,
        description="Relevance grade; > 0 is relevant.",
    )


class GoldPassage(BaseModel):
    """The passage text that would have answered the case."""

    model_config = ConfigDict(extra="forbid")
    doc_id: str = Field(pattern=_NO_END_SPACE, description="The document the passage comes from.")
    chunk_id: str | None = Field(
        default=None, pattern=_NO_END_SPACE, description="The chunk, if any."
    )
    text: str = Field(min_length=1, pattern=r"\S", description="The passage text.")


class CaseRecord(BaseModel):
    """One line of cases.jsonl (the schema of a case)."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(
        min_length=1,
        description="Unique within the file, and each character shows as itself where the id "
        "is printed: no control, format (zero-width, bidi) or separator character, no space "
        "but U+0020, and none at either end. A zero-width joiner may join two emoji.",
    )
    input: dict[str, Any] = Field(description="What the system is called with.")
    expected: dict[str, Any] = Field(
        default_factory=dict,
        description="What evaluators compare against; `relevant` (a list of RelevanceLabel) and "
        "`gold_context` (a list of GoldPassage) have fixed shapes.",
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Free-form; slices read it.")
