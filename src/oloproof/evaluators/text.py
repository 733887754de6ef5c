"""Output checks: ``contains``, ``equals`` (also ``exact``), ``regex`` and ``json_schema``.

Each reads one field of the case's output and returns pass or fail. A problem with the output's
shape (the field is missing, or is not text) is the system's fault and so a ``fail`` with a
reason; a case without the expected value it should be compared with is ``excluded`` with
``no_expected_value``; an expected value that is not text is a dataset mistake and raises
``DatasetError``.

Reading a field: ``field: answer`` reads ``output["answer"]``, and ``field: result.answer`` reads
``output["result"]["answer"]`` (a segment of digits indexes a list). A system that returns a plain
string is read whole when ``field`` keeps its default (``answer``) or is null. ``field: null``
always reads the whole output.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from oloproof.errors import ConfigError, DatasetError
from oloproof.evaluator_config import (
    ContainsConfig,
    EqualsConfig,
    JsonSchemaConfig,
    RegexConfig,
    check_json_schema,
)
from oloproof.evaluators.base import CaseView
from oloproof.evaluators.fields import MISSING, parse_path, read_output, read_path
from oloproof.evaluators.reads import Reads
from oloproof.jsonkeys import DuplicateKey, unique_keys
from oloproof.results import MetricKind, Verdict

if TYPE_CHECKING:
    from oloproof.dataset import Case


def _output_text(view: CaseView, path: tuple[str, ...] | None, name: str | None) -> str | Verdict:
    """The output text, or the failing verdict that says why there is none."""
    value = read_output(view.output, path)
    if value is MISSING:
        return Verdict.failed("field_missing", field=name)
    if not isinstance(value, str):
        return Verdict.failed("field_not_text", field=name, type=type(value).__name__)
    return value


def _expected_text(view: CaseView, path: tuple[str, ...] | None, name: str) -> str | Verdict:
    """The expected text, or ``excluded: no_expected_value`` when the case has none."""
    value = read_path(view.expected, path)
    if value is MISSING or value is None:
        return Verdict.excluded("no_expected_value", expected_field=name)
    if not isinstance(value, str):
        raise DatasetError(
            f"expected.{name} must be text for this evaluator, not {type(value).__name__}",
            where=f"case {view.case_id}",
        )
    return value


def expected_text_check(configs: Iterable[Any]) -> Callable[[Case], str | None] | None:
    """The check ``load_dataset`` makes of each case for the ``contains`` and ``equals``
    evaluators among ``configs``: an expected value they compare with must be text. A number
    there is a dataset mistake that would otherwise stop the run only once it reached the case.
    None when no evaluator compares with expected text."""
    fields = [
        (parse_path(c.expected_field), c.expected_field, c.criterion)
        for c in configs
        if isinstance(c, ContainsConfig | EqualsConfig)
    ]
    if not fields:
        return None

    def check(case: Case) -> str | None:
        for path, name, criterion in fields:
            value = read_path(case.expected, path)
            if value is not MISSING and value is not None and not isinstance(value, str):
                return (
                    f"expected.{name} of case {case.id!r} must be text for {criterion!r}, "
                    f"not {type(value).__name__}"
                )
        return None

    return check


@dataclass(frozen=True)
class Contains:
    """Pass when the expected text is a substring of the output text.

    Both sides are casefolded unless ``case_sensitive``. Fails with ``field_missing`` or
    ``field_not_text``; excluded with ``no_expected_value``, or ``empty_expected_value`` when
    the expected text is empty (or only spaces): every output contains it, so passing would
    say nothing (version 2; version 1 passed it).
    """

    config: ContainsConfig
    VERSION: ClassVar[int] = 2
    _field: tuple[str, ...] | None = field(init=False, repr=False)
    _expected: tuple[str, ...] | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_field", parse_path(self.config.field))
        object.__setattr__(self, "_expected", parse_path(self.config.expected_field))

    @property
    def criterion(self) -> str:
        return self.config.criterion

    @property
    def kind(self) -> MetricKind:
        return "pass_fail"

    def spec(self) -> dict[str, Any]:
        return {**self.config.model_dump(mode="json", by_alias=True), "version": self.VERSION}

    def reads(self) -> Reads:
        return Reads(output=(self.config.field,), expected=(self.config.expected_field,))

    def judge(self, view: CaseView) -> Verdict:
        text = _output_text(view, self._field, self.config.field)
        if isinstance(text, Verdict):
            return text
        expected = _expected_text(view, self._expected, self.config.expected_field)
        if isinstance(expected, Verdict):
            return expected
        if not expected.strip():
            return Verdict.excluded(
                "empty_expected_value", expected_field=self.config.expected_field
            )
        if not self.config.case_sensitive:
            text, expected = text.casefold(), expected.casefold()
        return Verdict.passed() if expected in text else Verdict.failed("not_contained")


@dataclass(frozen=True)
class Equals:
    """Pass when the output text equals the expected text.

    With ``strip`` (default) surrounding whitespace is removed from both sides first; without
    ``case_sensitive`` both sides are casefolded. Same exclusions and failures as ``contains``.
    """

    config: EqualsConfig
    VERSION: ClassVar[int] = 1
    _field: tuple[str, ...] | None = field(init=False, repr=False)
    _expected: tuple[str, ...] | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_field", parse_path(self.config.field))
        object.__setattr__(self, "_expected", parse_path(self.config.expected_field))

    @property
    def criterion(self) -> str:
        return self.config.criterion

    @property
    def kind(self) -> MetricKind:
        return "pass_fail"

    def spec(self) -> dict[str, Any]:
        return {**self.config.model_dump(mode="json", by_alias=True), "version": self.VERSION}

    def reads(self) -> Reads:
        return Reads(output=(self.config.field,), expected=(self.config.expected_field,))

    def judge(self, view: CaseView) -> Verdict:
        text = _output_text(view, self._field, self.config.field)
        if isinstance(text, Verdict):
            return text
        expected = _expected_text(view, self._expected, self.config.expected_field)
        if isinstance(expected, Verdict):
            return expected
        if self.config.strip:
            text, expected = text.strip(), expected.strip()
        if not self.config.case_sensitive:
            text, expected = text.casefold(), expected.casefold()
        return Verdict.passed() if text == expected else Verdict.failed("not_equal")


@dataclass(frozen=True)
class Regex:
    """Pass when ``re.search(pattern, text)`` finds a match anywhere in the output text.

    The pattern was compiled when the config was validated; a bad pattern never reaches here.
    Fails with ``no_match``, ``field_missing`` or ``field_not_text``; never excluded.
    """

    config: RegexConfig
    VERSION: ClassVar[int] = 1
    _field: tuple[str, ...] | None = field(init=False, repr=False)
    _pattern: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        flags = re.IGNORECASE if self.config.ignore_case else 0
        object.__setattr__(self, "_field", parse_path(self.config.field))
        object.__setattr__(self, "_pattern", re.compile(self.config.pattern, flags))

    @property
    def criterion(self) -> str:
        return self.config.criterion

    @property
    def kind(self) -> MetricKind:
        return "pass_fail"

    def spec(self) -> dict[str, Any]:
        return {**self.config.model_dump(mode="json", by_alias=True), "version": self.VERSION}

    def reads(self) -> Reads:
        return Reads(output=(self.config.field,))

    def judge(self, view: CaseView) -> Verdict:
        text = _output_text(view, self._field, self.config.field)
        if isinstance(text, Verdict):
            return text
        return Verdict.passed() if self._pattern.search(text) else Verdict.failed("no_match")


@dataclass(frozen=True)
class JsonSchema:
    """Pass when the output (or its ``field``) validates against a JSON Schema.

    The schema's own ``$schema`` picks the dialect (Draft 2020-12 when absent); ``format`` is
    not asserted. A failure carries reason ``schema_violation`` and, in its detail, the error
    ``jsonschema`` ranks most relevant (``best_match``, the one ``jsonschema.validate`` raises):
    its message, the path into the instance and the failing keyword. Fails with
    ``field_missing`` when the field is absent; never excluded.

    ``schema_path`` is resolved against ``base_dir`` (the configuration file's directory) and
    read once, here; ``spec()`` carries the schema itself, so editing the file changes the
    judgment identity.
    """

    config: JsonSchemaConfig
    base_dir: Path
    VERSION: ClassVar[int] = 1
    _field: tuple[str, ...] | None = field(init=False, repr=False)
    _schema: dict[str, Any] = field(init=False, repr=False)
    _validator: Any = field(init=False, repr=False)
    _best_match: Any = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # Imported here, not at the top: jsonschema is only needed once such an evaluator exists.
        from jsonschema.exceptions import best_match
        from jsonschema.validators import validator_for

        schema = self.config.json_schema
        if schema is None:
            schema = _load_schema(self.base_dir, self.config.schema_path or "")
        object.__setattr__(self, "_field", parse_path(self.config.field))
        object.__setattr__(self, "_schema", schema)
        object.__setattr__(self, "_validator", validator_for(schema)(schema))
        object.__setattr__(self, "_best_match", best_match)

    @property
    def criterion(self) -> str:
        return self.config.criterion

    @property
    def kind(self) -> MetricKind:
        return "pass_fail"

    def spec(self) -> dict[str, Any]:
        spec = self.config.model_dump(mode="json", by_alias=True)
        return {**spec, "schema": self._schema, "version": self.VERSION}

    def reads(self) -> Reads:
        return Reads(output=(self.config.field,))

    def judge(self, view: CaseView) -> Verdict:
        value = read_output(view.output, self._field)
        if value is MISSING:
            return Verdict.failed("field_missing", field=self.config.field)
        error = self._best_match(self._validator.iter_errors(value))
        if error is None:
            return Verdict.passed()
        return Verdict.failed(
            "schema_violation",
            message=error.message,
            path=error.json_path,
            validator=str(error.validator),
        )


def _load_schema(base_dir: Path, schema_path: str) -> dict[str, Any]:
    path = base_dir / schema_path
    try:
        schema = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=unique_keys)
    except DuplicateKey as exc:
        raise ConfigError(f"the JSON Schema file is ambiguous: {exc}", where=str(path)) from None
    except OSError as exc:
        raise ConfigError(
            f"cannot read the JSON Schema file: {exc.strerror or exc}", where=str(path)
        ) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"the JSON Schema file is not JSON: {exc.msg} at line {exc.lineno}", where=str(path)
        ) from None
    if not isinstance(schema, dict):
        raise ConfigError("a JSON Schema file must hold an object", where=str(path))
    try:
        check_json_schema(schema)
    except ValueError as exc:
        raise ConfigError(str(exc), where=str(path)) from None
    return schema
