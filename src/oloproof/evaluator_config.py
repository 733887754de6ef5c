"""The settings of every built-in evaluator, as they appear under ``evaluators:`` in oloproof.yaml.

One pydantic model per evaluator ``type``, joined into ``EvaluatorConfig``, a union discriminated
on ``type``. Everything that can be checked without reading a case is checked here (a regex
that does not compile, an inline JSON Schema that is not a schema, ``k < 1``), so a mistake
stops the run before any case executes. ``oloproof.evaluators.build_evaluator`` turns a config
into the evaluator that judges cases.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from oloproof.suggest import did_you_mean

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

RelevanceUnit = Literal["document", "chunk"]

_CRITERION_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$"
_CRITERION_DOC = (
    "The metric this evaluator's verdicts feed, as policy rules and reports name it "
    "(letters, digits, `_`, `.`, `-`)."
)
_FIELD_DOC = (
    "Where to read the output: a key of a mapping output, dotted for nested keys "
    "(`result.answer`). A plain-string output is read whole when this is left at its default "
    "or set to null."
)
_EXPECTED_FIELD_DOC = (
    "The key of the case's `expected` object to compare against (dotted paths allowed)."
)


class _Config(BaseModel):
    # Strict, as oloproof.config's models are: `k: true` is not k = 1.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)

    @field_validator("field", "expected_field", check_fields=False)
    @classmethod
    def _dotted(cls, value: str | None) -> str | None:
        # `answer..x` or `.answer` names a key no output has: every case would fail unread.
        if value is not None and "" in value.split("."):
            raise ValueError(f"{value!r} has an empty part: name keys joined by single dots")
        return value


# --- Text checks -----------------------------------------------------------------------------


class ContainsConfig(_Config):
    """Pass when the expected text occurs inside the output text."""

    type: Literal["contains"] = Field(description="Selects this evaluator.")
    criterion: str = Field(pattern=_CRITERION_PATTERN, description=_CRITERION_DOC)
    field: str | None = Field(default="answer", min_length=1, description=_FIELD_DOC)
    expected_field: str = Field(default="answer", min_length=1, description=_EXPECTED_FIELD_DOC)
    case_sensitive: bool = Field(
        default=False,
        description="Compare letter case exactly; by default both sides are casefolded.",
    )


class EqualsConfig(_Config):
    """Pass when the output text equals the expected text (``exact`` is another name for it)."""

    type: Literal["equals", "exact"] = Field(description="Selects this evaluator.")
    criterion: str = Field(pattern=_CRITERION_PATTERN, description=_CRITERION_DOC)
    field: str | None = Field(default="answer", min_length=1, description=_FIELD_DOC)
    expected_field: str = Field(default="answer", min_length=1, description=_EXPECTED_FIELD_DOC)
    case_sensitive: bool = Field(
        default=True, description="Compare letter case exactly; false casefolds both sides."
    )
    strip: bool = Field(
        default=True, description="Remove leading and trailing whitespace on both sides first."
    )


class RegexConfig(_Config):
    """Pass when a regular expression matches somewhere in the output text."""

    type: Literal["regex"] = Field(description="Selects this evaluator.")
    criterion: str = Field(pattern=_CRITERION_PATTERN, description=_CRITERION_DOC)
    field: str | None = Field(default="answer", min_length=1, description=_FIELD_DOC)
    pattern: str = Field(
        description="A Python regular expression, searched for anywhere in the text (re.search)."
    )
    ignore_case: bool = Field(default=False, description="Match regardless of letter case.")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        if not value:  # it matches every text, so the check would pass every case unread
            raise ValueError("an empty pattern matches every text, so it would check nothing")
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(
                f"pattern {value!r} is not a valid regular expression: {exc}"
            ) from None
        return value


class JsonSchemaConfig(_Config):
    """Pass when the output (or one field of it) validates against a JSON Schema."""

    type: Literal["json_schema"] = Field(description="Selects this evaluator.")
    criterion: str = Field(pattern=_CRITERION_PATTERN, description=_CRITERION_DOC)
    field: str | None = Field(
        default=None,
        min_length=1,
        description="A dotted key of a mapping output to check; null checks the whole output.",
    )
    json_schema: dict[str, Any] | None = Field(
        default=None,
        alias="schema",
        description="The JSON Schema, inline. Give this or `schema_path`, not both.",
    )
    schema_path: str | None = Field(
        default=None,
        min_length=1,
        description=(
            "A JSON file holding the schema, relative to the directory of the configuration file. "
            "Give this or `schema`, not both."
        ),
    )

    @model_serializer(mode="wrap")
    def _dump_as_written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # The attribute cannot be called `schema` (BaseModel has a method of that name); dump
        # it under the key users write, with or without by_alias, so a dump re-validates.
        data: dict[str, Any] = handler(self)
        if "json_schema" in data:
            data = {("schema" if key == "json_schema" else key): v for key, v in data.items()}
        return data

    @model_validator(mode="after")
    def _one_schema(self) -> JsonSchemaConfig:
        if (self.json_schema is None) == (self.schema_path is None):
            raise ValueError("give exactly one of `schema` (inline) or `schema_path` (a file)")
        if self.json_schema is not None:
            check_json_schema(self.json_schema)
        return self


class SchemaProblem(ValueError):
    """A JSON Schema the ``json_schema`` evaluator refuses, and where in it: ``at`` is the key
    path from the schema's root to the offending keyword."""

    def __init__(self, message: str, at: tuple[str | int, ...]) -> None:
        super().__init__(message)
        self.message = message
        self.at = at

    def __str__(self) -> str:
        """``properties.answer.$ref: MESSAGE``: the key path written as the errors write it."""
        if not self.at:
            return self.message
        return f"{'.'.join(str(part) for part in self.at)}: {self.message}"


def check_json_schema(schema: dict[str, Any]) -> None:
    """Raise ``SchemaProblem``, saying where in ``schema``, when it is not a valid JSON Schema
    for its own dialect, one the run cannot record (a NaN, a key that is not text), its
    ``$schema`` names no dialect jsonschema knows, or a reference in it does not resolve within
    the schema itself."""
    from jsonschema.exceptions import SchemaError

    from ledger import CodecError, encode

    try:
        encode(schema)
    except CodecError as exc:
        raise SchemaProblem(f"the schema cannot be recorded with the run: {exc}", ()) from None

    dialect = json_schema_dialect(schema)
    try:
        dialect.check_schema(schema)
    except SchemaError as exc:
        raise SchemaProblem(f"not a valid JSON Schema: {exc.message}", tuple(exc.path)) from None
    if not set(schema) & set(dialect.VALIDATORS):
        # As an empty regex: a schema of annotations alone (or none) passes every output unread.
        raise SchemaProblem(
            "the schema has no keyword that checks anything (such as type, properties or "
            "required), so every output would pass it",
            (),
        )
    _check_references(schema, dialect)


def json_schema_dialect(schema: dict[str, Any]) -> type[Validator]:
    """The validator class of the dialect ``schema``'s ``$schema`` names (Draft 2020-12 when it
    names none).

    Raises ``SchemaProblem`` for a URI jsonschema does not know: jsonschema would validate such
    a schema as Draft 2020-12, where the keywords of the draft it was written for (draft-07's
    ``dependencies``, say) mean nothing, and outputs that break it would pass.
    """
    from jsonschema import Draft202012Validator

    if "$schema" not in schema:
        return Draft202012Validator
    uri = schema["$schema"]
    if not isinstance(uri, str):
        raise SchemaProblem("must be the URI of a JSON Schema dialect", ("$schema",))
    dialects = _known_dialects()
    # jsonschema itself takes a dialect's URI with or without its empty fragment.
    dialect = dialects.get(uri.removesuffix("#"))
    if dialect is not None:
        return dialect
    raise SchemaProblem(
        f"{uri!r} names no JSON Schema dialect this Oloproof knows, and would be validated as "
        f"Draft 2020-12{_dialect_hint(uri, dialects)}",
        ("$schema",),
    )


def _known_dialects() -> dict[str, type[Validator]]:
    """jsonschema's validator classes, by the URI of their dialect without its ``#``."""
    from jsonschema import (
        Draft3Validator,
        Draft4Validator,
        Draft6Validator,
        Draft7Validator,
        Draft201909Validator,
        Draft202012Validator,
    )

    classes: tuple[type[Validator], ...] = (
        Draft3Validator,
        Draft4Validator,
        Draft6Validator,
        Draft7Validator,
        Draft201909Validator,
        Draft202012Validator,
    )
    return {str(c.META_SCHEMA["$schema"]).removesuffix("#"): c for c in classes}


def _dialect_hint(uri: str, dialects: dict[str, type[Validator]]) -> str:
    """``; did you mean …?`` when ``uri`` differs from a known dialect's URI only in its scheme
    (editors often write draft-07's with https), letter case or a ``#``; else the known URIs."""

    def loose(text: str) -> str:
        return text.casefold().removesuffix("#").replace("https://", "http://", 1)

    known = [str(c.META_SCHEMA["$schema"]) for c in dialects.values()]
    match = next((k for k in known if loose(k) == loose(uri)), None)
    if match is not None:
        return f"; did you mean {match!r}?"
    return f" (known: {', '.join(known)})"


def _check_references(schema: dict[str, Any], dialect: type[Validator]) -> None:
    """Raise ``SchemaProblem`` for the first ``$ref`` (or ``$dynamicRef``, ``$recursiveRef``)
    that does not resolve within ``schema``.

    The evaluator fetches nothing while it judges: a reference to a URL or a file would make
    the verdict depend on something outside the schema, which is all its identity records, and
    would be fetched again for every case. The schema's subschemas are walked as its dialect
    defines them, so a property merely named ``$ref`` is not taken for a reference.
    """
    from referencing import Registry
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import specification_with

    specification = specification_with(str(dialect.META_SCHEMA["$schema"]))
    root = specification.create_resource(schema)
    paths = _key_paths(schema)
    subschemas: list[dict[str, Any]] = []
    targets: dict[int, Any] = {}  # what each `$ref` names, by the id of the schema holding it
    # An empty registry retrieves nothing: a reference resolves within the schema or not at all.
    pending = [(Registry().resolver_with_root(root), root)]
    while pending:
        resolver, resource = pending.pop()
        contents = resource.contents
        if not isinstance(contents, dict):
            continue  # true, false: they hold no reference
        subschemas.append(contents)
        for keyword in ("$ref", "$dynamicRef", "$recursiveRef"):
            ref = contents.get(keyword)
            if not isinstance(ref, str):
                continue
            try:
                resolved = resolver.lookup(ref)
            except Unresolvable:
                raise SchemaProblem(
                    f"{ref!r} does not resolve within the schema; a schema may refer only to "
                    "its own parts, since Oloproof fetches nothing from a URL or another file "
                    "while it judges (copy the definition under `$defs` and refer to it as "
                    "'#/$defs/NAME')",
                    (*paths.get(id(contents), ()), keyword),
                ) from None
            if keyword == "$ref":
                targets[id(contents)] = resolved.contents
        pending.extend((resolver.in_subresource(s), s) for s in resource.subresources())
    order = {key: n for n, key in enumerate(paths)}  # the schema's own order, for one answer
    subschemas.sort(key=lambda sub: order.get(id(sub), len(order)))
    _check_keywords(subschemas, paths, dialect)
    _check_ref_cycles(subschemas, targets, paths, dialect)


# The keywords of every dialect that check nothing themselves: identifiers, annotations and
# the places definitions are kept (``$ref`` and the rest are among a dialect's VALIDATORS).
_ANNOTATIONS = frozenset(
    {
        "$schema", "$id", "id", "$anchor", "$dynamicAnchor", "$recursiveAnchor",
        "$vocabulary", "$comment", "$defs", "definitions", "title", "description", "default",
        "examples", "deprecated", "readOnly", "writeOnly", "contentMediaType",
        "contentEncoding", "contentSchema",
    }
)  # fmt: skip


def _check_keywords(
    subschemas: list[dict[str, Any]],
    paths: dict[int, tuple[str | int, ...]],
    dialect: type[Validator],
) -> None:
    """Raise ``SchemaProblem`` for a keyword the dialect does not know that is close to one it
    does (``requried``, ``minLenght``): JSON Schema ignores a keyword it does not know, so the
    check it was meant to make would silently pass every output. A keyword close to none
    (``x-order``) is left alone: schemas may carry annotations of their own."""
    known = _ANNOTATIONS | set(dialect.VALIDATORS)
    for schema in subschemas:
        for keyword in schema:
            suggestion = "" if keyword in known else did_you_mean(keyword, known)
            if suggestion:
                raise SchemaProblem(
                    f"unknown keyword {keyword!r}{suggestion} (JSON Schema ignores a keyword it "
                    "does not know, so what it was meant to check would pass every output)",
                    (*paths.get(id(schema), ()), keyword),
                )


# Keywords whose subschemas apply to the very value their own schema applies to, not to a part
# of it; those with a map of subschemas are marked True.
_IN_PLACE = {
    "allOf": False,
    "anyOf": False,
    "oneOf": False,
    "not": False,
    "if": False,
    "then": False,
    "else": False,
    "extends": False,
    "dependentSchemas": True,
    "dependencies": True,
}


def _check_ref_cycles(
    subschemas: list[dict[str, Any]],
    targets: dict[int, Any],
    paths: dict[int, tuple[str | int, ...]],
    dialect: type[Validator],
) -> None:
    """Raise ``SchemaProblem`` for a ``$ref`` that leads back to a schema it is reached from
    through ``$ref`` and ``_IN_PLACE`` keywords alone. Nothing on that way looks into a part of
    the output, so validating goes round until Python's recursion limit, for every output: each
    judgment would be missing. (A ``$dynamicRef`` resolves by where validation has been, so it
    is not followed: such a cycle is found only when a case is judged.)"""
    in_place = {k: keyed for k, keyed in _IN_PLACE.items() if k in dialect.VALIDATORS}
    ref_alone = "draft-0" in str(dialect.META_SCHEMA["$schema"])  # siblings ignored up to 07

    def steps(schema: dict[str, Any]) -> list[tuple[tuple[str | int, ...], Any]]:
        found: list[tuple[tuple[str | int, ...], Any]] = []
        if id(schema) in targets:
            found.append((("$ref",), targets[id(schema)]))
            if ref_alone:
                return found
        for keyword, keyed in in_place.items():
            value = schema.get(keyword)
            if isinstance(value, dict) and keyed:
                found += [((keyword, key), sub) for key, sub in value.items()]
            elif isinstance(value, dict):
                found.append(((keyword,), value))
            elif isinstance(value, list):
                found += [((keyword, index), sub) for index, sub in enumerate(value)]
        return [(where, sub) for where, sub in found if isinstance(sub, dict)]

    done: set[int] = set()
    for start in subschemas:
        if id(start) in done:
            continue
        # Depth first, without recursion: a path of schemas, each with the steps left to take.
        way = [(start, steps(start))]
        on_way = {id(start)}
        while way:
            schema, left = way[-1]
            if not left:
                way.pop()
                on_way.discard(id(schema))
                done.add(id(schema))
                continue
            where, sub = left.pop(0)
            if id(sub) in on_way:
                raise SchemaProblem(
                    f"{schema.get('$ref') if where == ('$ref',) else 'this'!r} refers back to "
                    "a schema it is reached from, and nothing on the way looks into a part of "
                    "the output (only `$ref` and keywords such as `allOf`, `anyOf`, `not` and "
                    "`if`, which apply to the same value): validating would never end",
                    (*paths.get(id(schema), ()), *where),
                )
            if id(sub) not in done:
                way.append((sub, steps(sub)))
                on_way.add(id(sub))


def _key_paths(value: Any, at: tuple[str | int, ...] = ()) -> dict[int, tuple[str | int, ...]]:
    """The key path of every object in ``value``, by its ``id``, to name where a problem is."""
    found: dict[int, tuple[str | int, ...]] = {}
    children: list[tuple[str | int, Any]] = []
    if isinstance(value, dict):
        found[id(value)] = at
        children = list(value.items())
    elif isinstance(value, list):
        children = list(enumerate(value))
    for key, child in children:
        found.update(_key_paths(child, (*at, key)))
    return found


# --- Retrieval metrics -----------------------------------------------------------------------


class _RetrievalConfig(_Config):
    type: str = Field(description="Selects this evaluator.")
    k: int = Field(ge=1, description="The cut-off: only the first k recorded candidates count.")
    relevance_unit: RelevanceUnit = Field(
        default="document",
        description=(
            "`document`: a unit is a doc_id, whatever chunk was retrieved; `chunk`: a unit is "
            "a (doc_id, chunk_id) pair, and every relevance entry must name its chunk_id."
        ),
    )
    criterion: str | None = Field(
        default=None,
        pattern=_CRITERION_PATTERN,
        description="The metric name; by default `<type>_at_<k>`, e.g. `hit_rate_at_2`.",
    )

    @model_validator(mode="after")
    def _default_criterion(self) -> _RetrievalConfig:
        if self.criterion is None:
            # The model is frozen; filling a default derived from two fields is the one write.
            object.__setattr__(self, "criterion", default_criterion(self.type, self.k))
        return self


def default_criterion(evaluator_type: str, k: int) -> str:
    """The name a retrieval metric takes when the config gives none: ``hit_rate_at_2``."""
    return f"{evaluator_type}_at_{k}"


class HitRateConfig(_RetrievalConfig):
    """Pass when at least one relevant unit is among the first k candidates."""

    type: Literal["hit_rate"] = Field(description="Selects this evaluator.")


class RecallConfig(_RetrievalConfig):
    """The share of relevant units found among the first k candidates."""

    type: Literal["recall"] = Field(description="Selects this evaluator.")


class PrecisionConfig(_RetrievalConfig):
    """The share of the k positions that hold a distinct relevant unit."""

    type: Literal["precision"] = Field(description="Selects this evaluator.")


class MrrConfig(_RetrievalConfig):
    """One over the position of the first relevant unit within the first k, else 0."""

    type: Literal["mrr"] = Field(description="Selects this evaluator.")


class NdcgConfig(_RetrievalConfig):
    """Normalised discounted cumulative gain of the first k candidates, graded labels."""

    type: Literal["ndcg"] = Field(description="Selects this evaluator.")


RetrievalConfig = HitRateConfig | RecallConfig | PrecisionConfig | MrrConfig | NdcgConfig


# --- Citations -------------------------------------------------------------------------------


class CitationValidityConfig(_Config):
    """Pass when every id the answer cites names a passage of the context it was given."""

    type: Literal["citation_validity"] = Field(description="Selects this evaluator.")
    criterion: str = Field(
        default="citations_valid", pattern=_CRITERION_PATTERN, description=_CRITERION_DOC
    )
    require_citations: bool = Field(
        default=False, description="Fail an answer that cites nothing (reason `no_citations`)."
    )


EvaluatorConfig = Annotated[
    ContainsConfig
    | EqualsConfig
    | RegexConfig
    | JsonSchemaConfig
    | HitRateConfig
    | RecallConfig
    | PrecisionConfig
    | MrrConfig
    | NdcgConfig
    | CitationValidityConfig,
    Field(discriminator="type"),
]
"""Any built-in evaluator's settings, selected by ``type``."""
