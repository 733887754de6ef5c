"""Output checks: ``contains``, ``equals`` (also ``exact``), ``regex`` and ``json_schema``.

Each reads one field of the case's output and returns pass or fail. A check that compares with
an expected value reads it first: a case without one is ``excluded`` with ``no_expected_value``
whatever its output holds, since a case nobody labelled cannot be judged; an expected value that
is not text is a dataset mistake and raises ``DatasetError``. Then a problem with the output's
shape (the field is missing, or is not text) is the system's fault and so a ``fail`` with a
reason.

Reading a field: ``field: answer`` reads ``output["answer"]``, and ``field: result.answer`` reads
``output["result"]["answer"]`` (a segment of digits indexes a list). A system that returns a plain
string is read whole when ``field`` keeps its default (``answer``) or is null. ``field: null``
always reads the whole output.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from oloproof.errors import DatasetError
from oloproof.evaluator_config import (
    ContainsConfig,
    EqualsConfig,
    JsonSchemaConfig,
    RegexConfig,
    json_schema_dialect,
)
from oloproof.evaluators.base import CaseView
from oloproof.evaluators.fields import MISSING, parse_path, read_output, read_path
from oloproof.evaluators.reads import Reads
from oloproof.evaluators.schema_file import load_schema
from oloproof.results import MetricKind, Verdict

if TYPE_CHECKING:
    from oloproof.dataset import Case


def _output_text(view: CaseView, path: tuple[str, ...] | None, name: str | None) -> str | Verdict:
    """The output text, or the missing verdict that says why there is none.

    No verdict, not a fail: a fail is good news to a rule that caps its metric (``max:`` on
    a refusal or leak rate), so an output whose text sits under another name (a renamed
    field) would pass such a gate on replies nobody read. Missing, the case counts at its
    worst for every rule."""
    value = read_output(view.output, path)
    if value is MISSING:
        return Verdict.missing("field_missing", field=name)
    if not isinstance(value, str):
        return Verdict.missing("field_not_text", field=name, type=type(value).__name__)
    return value


def _expected_text(
    case_id: str, expected: Mapping[str, Any], path: tuple[str, ...] | None, name: str
) -> str | Verdict:
    """The expected text, or ``excluded: no_expected_value`` when the case has none."""
    value = read_path(expected, path)
    if value is MISSING or value is None:
        return Verdict.excluded("no_expected_value", expected_field=name)
    if not isinstance(value, str):
        raise DatasetError(
            f"expected.{name} must be text for this evaluator, not {type(value).__name__}",
            where=f"case {case_id}",
        )
    return value


# How text is read before it is compared: every space separator (Unicode category Zs: a
# no-break space, the thin and narrow spaces, an ideographic space) is a space, and what takes
# no place on the page (a zero-width space, a word joiner, a byte order mark, a soft hyphen) is
# nothing. Joiners that change how a script or an emoji is drawn (U+200C, U+200D) are kept.
_SPACES = "\u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u202f\u205f\u3000"
_READ_ALIKE = str.maketrans(dict.fromkeys(_SPACES, " ") | dict.fromkeys("\u200b\u2060\ufeff\u00ad"))


def _comparable(text: str, case_sensitive: bool) -> str:
    """``text`` in the form ``contains`` and ``equals`` compare: spaces read alike and the
    invisible characters gone (``_READ_ALIKE``), then NFC, so that text that reads the same
    compares the same whatever code points spell it (``é`` or ``e`` + U+0301), and, when case
    does not count, casefolded and composed again, since casefolding can decompose (``ǰ``).
    NFC rather than NFD, so that ``cafe`` is not found inside ``café``."""
    text = unicodedata.normalize("NFC", text.translate(_READ_ALIKE))
    if case_sensitive:
        return text
    return unicodedata.normalize("NFC", text.casefold())


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

    Both sides are compared as ``_comparable`` reads them: spaces alike, invisible characters
    gone, NFC and, unless ``case_sensitive``, casefolded. The label is read first: a case
    without an expected value is excluded with ``no_expected_value``, or
    ``empty_expected_value`` when it is empty (or only spaces and invisible characters),
    whatever the output holds; every output contains an empty text, so passing would say
    nothing. An output without text there is missing (``field_missing``, ``field_not_text``).

    Version 5 leaves an output without text missing (version 4 failed it); version 4 reads
    every space separator as a space and passes over invisible characters (version 3 failed
    ``14<U+00A0>days`` against ``14 days``); version 3 compares in NFC and
    excludes an unlabelled case whatever its output (version 2 compared code points and failed
    such a case whose output lacked the field); version 2 excluded an empty expected text,
    which version 1 passed.
    """

    config: ContainsConfig
    VERSION: ClassVar[int] = 5
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
        wanted = self._wanted(view.case_id, view.expected)
        if isinstance(wanted, Verdict):
            return wanted
        text = _output_text(view, self._field, self.config.field)
        if isinstance(text, Verdict):
            return text
        found = wanted in _comparable(text, self.config.case_sensitive)
        return Verdict.passed() if found else Verdict.failed("not_contained")

    def case_exclusion(self, case_id: str, expected: Mapping[str, Any]) -> Verdict | None:
        """``ExcludesByCase``: the exclusion the expected value decides, whatever the output."""
        wanted = self._wanted(case_id, expected)
        return wanted if isinstance(wanted, Verdict) else None

    def _wanted(self, case_id: str, expected: Mapping[str, Any]) -> str | Verdict:
        """The expected text as compared, or the exclusion its absence or emptiness decides."""
        name = self.config.expected_field
        text = _expected_text(case_id, expected, self._expected, name)
        if isinstance(text, Verdict):
            return text
        wanted = _comparable(text, self.config.case_sensitive)
        if not wanted.strip():  # every output contains it: a pass would say nothing
            return Verdict.excluded("empty_expected_value", expected_field=name)
        return wanted


@dataclass(frozen=True)
class Equals:
    """Pass when the output text equals the expected text.

    Both sides are read as ``contains`` reads them (spaces alike, invisible characters gone,
    NFC and, without ``case_sensitive``, casefolded); then, with ``strip`` (default),
    surrounding whitespace is removed. The label is read first, as by ``contains``: excluded
    with ``no_expected_value`` whatever the output holds; otherwise fails with ``not_equal``, or
    is missing (``field_missing``, ``field_not_text``) for an output without text there.

    Version 4 leaves an output without text missing (version 3 failed it); version 3 reads
    spaces alike and passes over invisible characters (version 2 failed ``Paris<U+200B>``
    against ``Paris``); version 2 compares in NFC and excludes an unlabelled
    case whatever its output (version 1 compared code points and failed such a case whose
    output lacked the field).
    """

    config: EqualsConfig
    VERSION: ClassVar[int] = 4
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
        expected = _expected_text(
            view.case_id, view.expected, self._expected, self.config.expected_field
        )
        if isinstance(expected, Verdict):
            return expected
        text = _output_text(view, self._field, self.config.field)
        if isinstance(text, Verdict):
            return text
        sensitive = self.config.case_sensitive
        # Stripped once read: an invisible character beside a space must not keep the space.
        text, expected = _comparable(text, sensitive), _comparable(expected, sensitive)
        if self.config.strip:
            text, expected = text.strip(), expected.strip()
        return Verdict.passed() if text == expected else Verdict.failed("not_equal")

    def case_exclusion(self, case_id: str, expected: Mapping[str, Any]) -> Verdict | None:
        """``ExcludesByCase``: ``no_expected_value`` when the case has none, whatever the
        output."""
        text = _expected_text(case_id, expected, self._expected, self.config.expected_field)
        return text if isinstance(text, Verdict) else None


@dataclass(frozen=True)
class Regex:
    """Pass when ``re.search(pattern, text)`` finds a match anywhere in the output text.

    The pattern was compiled when the config was validated; a bad pattern never reaches here.
    Fails with ``no_match``; missing (``field_missing``, ``field_not_text``) for an output
    without text there; never excluded. Version 2 leaves such an output missing (version 1
    failed it).
    """

    config: RegexConfig
    VERSION: ClassVar[int] = 2
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
    its message, the path into the instance and the failing keyword. Missing
    (``field_missing``) when the field is absent, as for the text checks; never excluded.
    Version 2 leaves such an output missing (version 1 failed it).

    ``schema_path`` is resolved against ``base_dir`` (the configuration file's directory) and
    read once, here; ``spec()`` carries the schema itself, so editing the file changes the
    judgment identity. Nothing else can change a verdict: a ``$schema`` naming no dialect
    jsonschema knows, and a ``$ref`` that does not resolve within the schema (to a URL or
    another file), are refused before any case runs, and nothing is fetched while judging.
    """

    config: JsonSchemaConfig
    base_dir: Path
    VERSION: ClassVar[int] = 2
    _field: tuple[str, ...] | None = field(init=False, repr=False)
    _schema: dict[str, Any] = field(init=False, repr=False)
    _validator: Any = field(init=False, repr=False)
    _best_match: Any = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # Imported here, not at the top: jsonschema is only needed once such an evaluator exists.
        from jsonschema.exceptions import best_match
        from referencing import Registry

        schema = self.config.json_schema
        if schema is None:
            schema = load_schema(self.base_dir, self.config.schema_path or "")
        # Every reference was found to resolve within the schema when it was checked; an empty
        # registry also makes sure that jsonschema never fetches one while judging.
        validator = json_schema_dialect(schema)(schema, registry=Registry())
        object.__setattr__(self, "_field", parse_path(self.config.field))
        object.__setattr__(self, "_schema", schema)
        object.__setattr__(self, "_validator", validator)
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
        if value is MISSING:  # as ``_output_text`` says why
            return Verdict.missing("field_missing", field=self.config.field)
        error = self._best_match(self._validator.iter_errors(value))
        if error is None:
            return Verdict.passed()
        return Verdict.failed(
            "schema_violation",
            message=error.message,
            path=error.json_path,
            validator=str(error.validator),
        )
