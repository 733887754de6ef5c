"""The built-in evaluators, and building them from their configs.

``build_evaluator`` turns one ``EvaluatorConfig`` (see ``oloproof.evaluator_config``) into an
object that keeps the ``Evaluator`` protocol of ``oloproof.evaluators.base``;
``build_evaluators`` does the same for a whole ``evaluators:`` list and refuses two evaluators
that feed the same criterion.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING

from oloproof.errors import ConfigError
from oloproof.evaluator_config import (
    CitationValidityConfig,
    ContainsConfig,
    EqualsConfig,
    EvaluatorConfig,
    HitRateConfig,
    JsonSchemaConfig,
    MrrConfig,
    NdcgConfig,
    PrecisionConfig,
    RecallConfig,
    RegexConfig,
)
from oloproof.evaluators.base import AsyncEvaluator, CaseView, Evaluator
from oloproof.evaluators.citations import CitationValidity

if TYPE_CHECKING:
    from oloproof.config import ProjectConfig
from oloproof.evaluators.retrieval import HitRate, Mrr, Ndcg, Precision, Recall
from oloproof.evaluators.text import Contains, Equals, JsonSchema, Regex
from oloproof.jsonkeys import first_repeat

__all__ = [
    "AsyncEvaluator",
    "CaseView",
    "CitationValidity",
    "Contains",
    "Equals",
    "Evaluator",
    "HitRate",
    "JsonSchema",
    "Mrr",
    "Ndcg",
    "Precision",
    "Recall",
    "Regex",
    "build_evaluator",
    "build_evaluators",
    "repeated_criterion",
]


def build_evaluator(config: EvaluatorConfig, *, base_dir: Path) -> Evaluator:
    """The evaluator ``config`` describes.

    ``base_dir`` is the directory of the configuration file; ``json_schema``'s ``schema_path``
    is resolved against it. Raises ``ConfigError`` when a referenced file cannot be used.
    """
    match config:
        case ContainsConfig():
            return Contains(config)
        case EqualsConfig():
            return Equals(config)
        case RegexConfig():
            return Regex(config)
        case JsonSchemaConfig():
            return JsonSchema(config, base_dir)
        case HitRateConfig():
            return HitRate(config)
        case RecallConfig():
            return Recall(config)
        case PrecisionConfig():
            return Precision(config)
        case MrrConfig():
            return Mrr(config)
        case NdcgConfig():
            return Ndcg(config)
        case CitationValidityConfig():
            return CitationValidity(config)
    raise TypeError(f"not an evaluator config: {config!r}")  # unreachable for valid configs


def build_evaluators(configs: Iterable[EvaluatorConfig], base_dir: Path) -> list[Evaluator]:
    """Build every evaluator of an ``evaluators:`` list, in order.

    Raises ``ConfigError`` when two of them claim the same criterion: their verdicts would
    feed one metric twice.
    """
    built = [build_evaluator(config, base_dir=base_dir) for config in configs]
    repeated = repeated_criterion([e.criterion for e in built])
    if repeated is not None:
        first, index = repeated
        raise ConfigError(
            f"evaluators {first} and {index} both name the criterion {built[index].criterion!r}",
            where=f"evaluators[{index}]",
            hint="give one of them another `criterion:`",
        )
    return built


def repeated_criterion(criteria: Sequence[str]) -> tuple[int, int] | None:
    """The positions of the first criterion named twice (the first and the repeat), or None:
    two evaluators feeding one criterion would feed one metric twice."""
    repeat = first_repeat(enumerate(criteria), key=itemgetter(1))
    return None if repeat is None else (repeat[0][0], repeat[1][0])


def refuse_repeated_criterion(config: ProjectConfig, config_path: Path) -> None:
    """Refuse two evaluators of ``config`` that feed one criterion, naming the second's line:
    one metric cannot take the verdicts of two (a run), nor can a calibration say which of them
    it measured (``oloproof calibrate``)."""
    criteria = [str(e.criterion) for e in config.evaluators]
    repeated = repeated_criterion(criteria)
    if repeated is None:
        return
    first, index = repeated
    raise ConfigError(
        f"{config.location('evaluators', index, path=config_path)}: evaluators.{index}: the "
        f"criterion {criteria[index]!r} is also evaluator {first}'s (line "
        f"{config.line_of('evaluators', first)}), and one metric cannot take the verdicts "
        "of two",
        hint="give one of them another `criterion:`",
    )
