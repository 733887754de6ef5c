"""Read a labels file: human pass/fail verdicts on examples a judge can read as cases."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from oloproof.dataset import same_text
from oloproof.errors import ArtifactError, DatasetError
from oloproof.evaluators.base import CaseView
from oloproof.jsonkeys import DuplicateKey, first_repeat, unique_keys
from oloproof.sdk import validate_artifact


class _LabelLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, description="A name for the example, unique in the file.")
    input: dict[str, Any] = Field(description="The case input, as in cases.jsonl.")
    output: Any = Field(description="The system's output the judge reads.")
    context: list[dict[str, Any]] | dict[str, Any] | None = Field(
        default=None,
        description=(
            "The passages given to the model: a list of {doc_id, text} or a context/v1 object."
        ),
    )
    citations: list[str] | dict[str, Any] | None = Field(
        default=None, description="The ids the answer cites: a list or a citations/v1 object."
    )
    expected: dict[str, Any] = Field(default_factory=dict, description="As in cases.jsonl.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="As in cases.jsonl.")
    label: StrictBool = Field(description="The human verdict: true for pass, false for fail.")


@dataclass(frozen=True)
class LabelledExample:
    """One human-labelled example: what the judge reads of a case, and the human verdict.

    A labels file holds one JSON object a line::

        {"id": "refund-1", "input": {"question": "..."}, "output": {"answer": "..."},
         "context": [{"doc_id": "kb-01", "text": "..."}], "citations": ["kb-01"],
         "expected": {"answer": "14 days"}, "label": true}

    ``id``, ``input``, ``output`` and ``label`` (true = the example should pass) are required;
    ``context`` (a list of context items, or a whole ``context/v1`` object), ``citations`` (a
    list of ids, or a ``citations/v1`` object), ``expected`` and ``metadata`` are optional, and
    are needed by the judges that read them. Blank lines are skipped. ``line`` is where the
    example is in its file (None when it was not read from one).
    """

    id: str
    input: Mapping[str, Any]
    output: Any
    label: bool
    expected: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    artifacts: Mapping[str, list[dict[str, Any]]] = field(default_factory=dict)
    line: int | None = None

    def view(self) -> CaseView:
        """The example as a judge sees a case."""
        return CaseView(
            case_id=self.id,
            input=self.input,
            expected=self.expected,
            metadata=self.metadata,
            output=self.output,
            artifacts=self.artifacts,
        )


def load_labels(path: Path) -> list[LabelledExample]:
    """Read a labels file; raises ``DatasetError`` naming the file and line of the first mistake.

    Ids are compared as cases.jsonl compares them: two that differ only in how an accented
    letter is encoded are one id given twice.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read it as UTF-8 text ({exc})") from None
    # Each line is parsed only when the search reaches it: the file's first mistake is the one
    # reported, a repeated id included.
    parsed, kept = itertools.tee(_parsed(path, lines))
    repeat = first_repeat(parsed, key=lambda example: same_text(example.id))
    if repeat is not None:
        earlier, example = repeat
        where, first = f"{path}, line {example.line}", earlier.line
        if earlier.id == example.id:
            raise DatasetError(f"id {example.id!r} already used on line {first}", where=where)
        raise DatasetError(
            f"id {example.id!a} is the same text as {earlier.id!a} on line {first}, written "
            "with other Unicode code points (they look alike wherever they are shown); "
            "write both the same way, or rename one",
            where=where,
        )
    examples = list(kept)
    if not examples:
        raise DatasetError(f"{path}: holds no labelled example")
    return examples


def _parsed(path: Path, lines: list[str]) -> Iterator[LabelledExample]:
    """The examples of a labels file's ``lines``, each parsed once it is reached."""
    for number, line in enumerate(lines, start=1):
        if line.strip():
            yield _parse_line(line, number, f"{path}, line {number}")


def _parse_line(line: str, number: int, where: str) -> LabelledExample:
    try:
        data = json.loads(line, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"not valid JSON ({exc.msg})", where=where) from None
    except DuplicateKey as exc:
        raise DatasetError(str(exc), where=where) from None
    if not isinstance(data, dict):
        raise DatasetError("expected one JSON object", where=where)
    try:
        parsed = _LabelLine.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(part) for part in err["loc"]) or "(line)"
        message = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        raise DatasetError(f"{key}: {message}", where=where) from None
    artifacts: dict[str, list[dict[str, Any]]] = {}
    try:
        if parsed.context is not None:
            context = parsed.context
            value = {"items": context} if isinstance(context, list) else context
            artifacts["context/v1"] = [validate_artifact("context/v1", value)]
        if parsed.citations is not None:
            artifacts["citations/v1"] = [validate_artifact("citations/v1", parsed.citations)]
    except ArtifactError as exc:
        raise DatasetError(exc.message, where=where) from None
    return LabelledExample(
        id=parsed.id,
        input=parsed.input,
        output=parsed.output,
        label=parsed.label,
        expected=parsed.expected,
        metadata=parsed.metadata,
        artifacts=artifacts,
        line=number,
    )


def labels_digest(path: Path) -> str:
    """``sha256:<hex>`` of a labels file's bytes, recorded with its calibration."""
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
