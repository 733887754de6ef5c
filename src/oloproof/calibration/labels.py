"""Read a labels file: human pass/fail verdicts on examples a judge can read as cases.

A labels file is read as a cases file is (``oloproof.dataset``): JSON Lines split at ``\n``
alone (a U+2028 inside a string is text), each value one the ledger could record
(``oloproof.strictjson``: no ``NaN``, no number too large, no key given twice, no lone
surrogate), nested at most ``MAX_NESTING`` levels, and each id one that prints as itself. The
file is a regular file of at most ``MAX_BYTES``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from ledger import CodecError, encode
from oloproof import strictjson
from oloproof.dataset import MAX_NESTING, nesting
from oloproof.errors import ArtifactError, DatasetError
from oloproof.evaluators.base import CaseView
from oloproof.idtext import id_problem, same_text
from oloproof.jsonkeys import DuplicateKey, first_repeat
from oloproof.sdk import validate_artifact
from oloproof.yamlfile import read_file

MAX_BYTES = 256 << 20
"""The most a labels file may hold: hundreds of thousands of examples, each one judged."""


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
    return read_labels(path)[0]


def read_labels(path: Path) -> tuple[list[LabelledExample], str]:
    """``load_labels``, with the digest (``labels_digest``) of the very bytes it parsed: a file
    changed between two reads would otherwise record one file's digest beside another's
    examples."""
    raw = _read(path)
    return _examples(path, raw), _digest(raw)


def _examples(path: Path, raw: bytes) -> list[LabelledExample]:
    try:
        lines = raw.decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DatasetError(f"{path}, line {line}: not UTF-8 text (byte {exc.start})") from None
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


def _read(path: Path) -> bytes:
    return read_file(path, MAX_BYTES, "a labels file", DatasetError)


def _parse_line(line: str, number: int, where: str) -> LabelledExample:
    deep = f"nested deeper than {MAX_NESTING} levels"
    try:
        data = strictjson.loads(line)
    except json.JSONDecodeError as exc:
        raise DatasetError(strictjson.syntax_problem(exc), where=where) from None
    except (strictjson.Unrecordable, DuplicateKey) as exc:
        raise DatasetError(str(exc), where=where) from None
    except RecursionError:
        raise DatasetError(deep, where=where) from None
    if not isinstance(data, dict):
        raise DatasetError("expected one JSON object", where=where)
    # The line's own object is one level more than its fields; only a line of that many
    # brackets can nest so deep.
    if line.count("[") + line.count("{") > MAX_NESTING and nesting(data, MAX_NESTING + 1) > (
        MAX_NESTING + 1
    ):
        raise DatasetError(deep, where=where)
    if strictjson.SURROGATE_ESCAPE.search(line):
        try:
            encode(data)
        except CodecError:
            raise DatasetError(
                "holds a lone surrogate escape (\\uD800-\\uDFFF without its pair), which is "
                "not text",
                where=where,
            ) from None
    try:
        parsed = _LabelLine.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(part) for part in err["loc"]) or "(line)"
        message = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        raise DatasetError(f"{key}: {message}", where=where) from None
    unseen = id_problem(parsed.id)
    if unseen is not None:
        raise DatasetError(f"id {unseen}", where=where)
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
    return _digest(_read(path))


def _digest(raw: bytes) -> str:
    return "sha256:" + hashlib.sha256(raw).hexdigest()
