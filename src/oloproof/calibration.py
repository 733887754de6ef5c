"""Measure a pass/fail judge against human labels, and use the measurement.

1. ``load_labels(path)`` reads a labels file (JSONL; see ``LabelledExample``), ``calibrate`` /
   ``acalibrate`` run the judge over the examples and count how often it agrees with the people.
   Positive means *pass*: **sensitivity** is the share of human-passed examples the judge passes,
   **specificity** the share of human-failed examples the judge fails, **agreement** the share of
   all judged examples where both agree. Each carries its counts and its Clopper-Pearson interval.
   A judgment the judge could not give (missing) or that did not apply (excluded) counts in
   neither; both are listed.
2. ``requirement_check`` decides whether a judge may gate: it needs a calibration bound to its
   exact identity, and the *lower* Clopper-Pearson bounds of sensitivity and specificity at the
   policy's level must reach the required minimums.
3. ``corrected_rate`` turns the judge's observed pass rate into an estimate of the true pass rate,
   correcting for the measured error rates (Rogan-Gladen), with an interval that carries the
   calibration's own uncertainty (see its docstring).

With a ledger: ``run_calibration`` (what ``oloproof calibrate`` does) records the calibration as
an ``oloproof.calibration`` event indexed by the judge's identity key; ``latest_calibration``
(or ``find_calibration``, with its address) finds it again, and ``judge_check`` gives the policy
its per-rule check.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from oloproof.errors import ArtifactError, ConfigError, DatasetError, UnknownIdError
from oloproof.evaluators.base import AsyncEvaluator, CaseView
from oloproof.results import Interval, Verdict
from oloproof.sdk import validate_artifact
from oloproof.stats import clopper_pearson

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ledger import Ledger
    from oloproof.config import Rule
    from oloproof.policy import JudgeCheck

__all__ = [
    "CORRECTED_METHOD",
    "Calibration",
    "LabelledExample",
    "Rate",
    "acalibrate",
    "calibrate",
    "calibration_at",
    "corrected_rate",
    "find_calibration",
    "judge_check",
    "judge_identities",
    "labels_digest",
    "latest_calibration",
    "load_labels",
    "requirement_check",
    "run_calibration",
    "tally",
]

CORRECTED_METHOD = "rogan-gladen-jeffreys-mc"
"""``Interval.method`` of a corrected rate's interval."""

NOT_CALIBRATED = "judge_not_calibrated"
BELOW_REQUIREMENT = "judge_below_requirement"


# --- the labels file ---------------------------------------------------------------------------


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
    are needed by the judges that read them. Blank lines are skipped.
    """

    id: str
    input: Mapping[str, Any]
    output: Any
    label: bool
    expected: Mapping[str, Any] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    artifacts: Mapping[str, list[dict[str, Any]]] = field(default_factory=dict)

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
    """Read a labels file; raises ``DatasetError`` naming the file and line of the first mistake."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read it as UTF-8 text ({exc})") from None
    examples: list[LabelledExample] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        example = _parse_line(line, where)
        if example.id in seen:
            raise DatasetError(
                f"id {example.id!r} already used on line {seen[example.id]}", where=where
            )
        seen[example.id] = number
        examples.append(example)
    if not examples:
        raise DatasetError(f"{path}: holds no labelled example")
    return examples


def _parse_line(line: str, where: str) -> LabelledExample:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"not valid JSON ({exc.msg})", where=where) from None
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
    )


def labels_digest(path: Path) -> str:
    """``sha256:<hex>`` of a labels file's bytes, recorded with its calibration."""
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


# --- the measurement ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Rate:
    """``k`` of ``n``, with its Clopper-Pearson interval (None when ``n`` is 0)."""

    k: int
    n: int
    interval: Interval | None

    @property
    def estimate(self) -> float | None:
        return self.k / self.n if self.n else None

    def lower_at(self, level: float) -> float:
        """The exact lower bound at ``level``; 0 when there is no observation."""
        return clopper_pearson(self.k, self.n, level).lower if self.n else 0.0

    def to_body(self) -> dict[str, Any]:
        interval = self.interval
        return {
            "k": self.k,
            "n": self.n,
            "estimate": self.estimate,
            "lower": None if interval is None else interval.lower,
            "upper": None if interval is None else interval.upper,
            "method": None if interval is None else interval.method,
        }

    @staticmethod
    def of(k: int, n: int, level: float) -> Rate:
        return Rate(k, n, clopper_pearson(k, n, level) if n else None)


@dataclass(frozen=True)
class Calibration:
    """A judge measured against human labels, bound to the judge's exact identity."""

    identity: str
    judge: dict[str, Any]
    level: float
    true_pass: int
    false_fail: int
    false_pass: int
    true_fail: int
    missing: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    disagreements: tuple[str, ...] = ()
    labels: dict[str, Any] = field(default_factory=dict)
    missing_reasons: dict[str, int] = field(default_factory=dict)

    @property
    def sensitivity(self) -> Rate:
        """Of the examples people passed, the share the judge passed."""
        return Rate.of(self.true_pass, self.true_pass + self.false_fail, self.level)

    @property
    def specificity(self) -> Rate:
        """Of the examples people failed, the share the judge failed."""
        return Rate.of(self.true_fail, self.true_fail + self.false_pass, self.level)

    @property
    def agreement(self) -> Rate:
        """Of the examples the judge judged, the share where it agreed with people."""
        agreed = self.true_pass + self.true_fail
        return Rate.of(agreed, agreed + self.false_pass + self.false_fail, self.level)

    def to_body(self) -> dict[str, Any]:
        """Plain data for an ``oloproof.calibration`` event (indexed by ``identity``)."""
        return {
            "identity": self.identity,
            "judge": self.judge,
            "level": self.level,
            "labels": dict(self.labels),
            "counts": {
                "true_pass": self.true_pass,
                "false_fail": self.false_fail,
                "false_pass": self.false_pass,
                "true_fail": self.true_fail,
                "missing": len(self.missing),
                "excluded": len(self.excluded),
            },
            "agreement": self.agreement.to_body(),
            "sensitivity": self.sensitivity.to_body(),
            "specificity": self.specificity.to_body(),
            "disagreements": list(self.disagreements),
            "missing": list(self.missing),
            "missing_reasons": dict(self.missing_reasons),
            "excluded": list(self.excluded),
        }

    @staticmethod
    def from_body(body: Mapping[str, Any]) -> Calibration:
        """The calibration an event body records (the inverse of ``to_body``)."""
        counts = body["counts"]
        return Calibration(
            identity=body["identity"],
            judge=dict(body["judge"]),
            level=float(body["level"]),
            true_pass=int(counts["true_pass"]),
            false_fail=int(counts["false_fail"]),
            false_pass=int(counts["false_pass"]),
            true_fail=int(counts["true_fail"]),
            missing=tuple(body.get("missing", ())),
            excluded=tuple(body.get("excluded", ())),
            disagreements=tuple(body.get("disagreements", ())),
            labels=dict(body.get("labels", {})),
            missing_reasons=dict(body.get("missing_reasons", {})),
        )


async def acalibrate(
    judge: AsyncEvaluator,
    labelled: Sequence[LabelledExample],
    *,
    level: float = 0.95,
    labels: Mapping[str, Any] | None = None,
) -> Calibration:
    """Run ``judge`` over ``labelled`` (concurrently, as its provider allows) and tally it.

    ``labels`` describes the labels file (e.g. ``{"path": ..., "sha256": ...}``) for the record.
    Raises ``ConfigError`` for a judge that does not give pass/fail verdicts.
    """
    _check_pass_fail(judge)
    verdicts = await _judge_all(judge, labelled)
    return tally(judge.spec(), labelled, verdicts, level=level, labels=labels)


def _check_pass_fail(judge: AsyncEvaluator) -> None:
    if judge.kind != "pass_fail":
        raise ConfigError(
            f"judge {judge.criterion!r} gives scores, and calibration measures pass/fail judges",
            hint="calibrate a pass_fail judge, or set scale: pass_fail",
        )


def tally(
    spec: Mapping[str, Any],
    labelled: Sequence[LabelledExample],
    verdicts: Sequence[Verdict],
    *,
    level: float = 0.95,
    labels: Mapping[str, Any] | None = None,
) -> Calibration:
    """The calibration of the judge with ``spec``, from its ``verdicts`` on ``labelled``."""
    from oloproof.evaluators.judges import judge_identity

    # (human says pass, judge says pass) -> count
    counts = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    missing: list[str] = []
    reasons: dict[str, int] = {}
    excluded: list[str] = []
    disagreements: list[str] = []
    for example, verdict in zip(labelled, verdicts, strict=True):
        if verdict.status == "missing":
            missing.append(example.id)
            reason = verdict.reason or "unknown"
            reasons[reason] = reasons.get(reason, 0) + 1
        elif verdict.status == "excluded":
            excluded.append(example.id)
        elif verdict.status in ("pass", "fail"):
            judge_passed = verdict.status == "pass"
            counts[(example.label, judge_passed)] += 1
            if judge_passed != example.label:
                disagreements.append(example.id)
        else:
            raise ConfigError(f"the judge gave a score on {example.id!r}, not pass or fail")
    return Calibration(
        identity=judge_identity(spec),
        judge=dict(spec),
        level=level,
        true_pass=counts[(True, True)],
        false_fail=counts[(True, False)],
        false_pass=counts[(False, True)],
        true_fail=counts[(False, False)],
        missing=tuple(missing),
        excluded=tuple(excluded),
        disagreements=tuple(disagreements),
        labels={"n": len(labelled), **(labels or {})},
        missing_reasons=reasons,
    )


async def _judge_all(judge: AsyncEvaluator, labelled: Sequence[LabelledExample]) -> list[Verdict]:
    enter, leave = getattr(judge, "__aenter__", None), getattr(judge, "__aexit__", None)
    if enter is not None and leave is not None:
        await enter()
        try:
            return list(await asyncio.gather(*(judge.ajudge(ex.view()) for ex in labelled)))
        finally:
            await leave(None, None, None)
    return list(await asyncio.gather(*(judge.ajudge(ex.view()) for ex in labelled)))


def calibrate(
    judge: AsyncEvaluator,
    labelled: Sequence[LabelledExample],
    *,
    level: float = 0.95,
    labels: Mapping[str, Any] | None = None,
) -> Calibration:
    """``acalibrate`` for code that is not already inside an event loop."""
    return asyncio.run(acalibrate(judge, labelled, level=level, labels=labels))


# --- may the judge gate? -----------------------------------------------------------------------

RequirementOutcome = tuple[Literal["MANUAL_REVIEW"], str] | tuple[None, None]


def requirement_check(
    calibration: Calibration | None,
    min_sensitivity: float | None,
    min_specificity: float | None,
    level: float = 0.95,
    *,
    identity: str | None = None,
) -> RequirementOutcome:
    """Whether a judge metric may decide a rule.

    ``("MANUAL_REVIEW", "judge_not_calibrated")`` without a calibration, or when ``identity``
    is given and the calibration was made for another judge; ``("MANUAL_REVIEW",
    "judge_below_requirement")`` when the calibration judged no human pass or no human fail
    (a rate never measured clears nothing), or when the Clopper-Pearson lower bound (at
    ``level``) of sensitivity or specificity is below its minimum; ``(None, None)`` when it
    clears. A minimum of None is no requirement on that rate.
    """
    if calibration is None or (identity is not None and identity != calibration.identity):
        return "MANUAL_REVIEW", NOT_CALIBRATED
    if calibration.sensitivity.n == 0 or calibration.specificity.n == 0:
        return "MANUAL_REVIEW", BELOW_REQUIREMENT
    for minimum, rate in (
        (min_sensitivity, calibration.sensitivity),
        (min_specificity, calibration.specificity),
    ):
        if minimum is not None and rate.lower_at(level) < minimum:
            return "MANUAL_REVIEW", BELOW_REQUIREMENT
    return None, None


# --- the corrected metric ----------------------------------------------------------------------


def corrected_rate(
    observed_k: int,
    observed_n: int,
    calibration: Calibration,
    level: float = 0.95,
    *,
    draws: int = 10_000,
    seed: int = 0,
) -> tuple[float | None, Interval]:
    """The true pass rate, corrected for the judge's measured errors, with its interval.

    Point estimate (Rogan & Gladen 1978), with p the judge's observed pass rate k/n, Se and Sp
    the calibration's sensitivity and specificity::

        rate = (p + Sp - 1) / (Se + Sp - 1), clipped to [0, 1]

    None when it is undefined: no observation, a calibration without human passes or human
    fails, or Se + Sp <= 1 (a judge no better than chance). The interval is then [0, 1].

    Interval: Monte Carlo over the three proportions. Each of p, Se and Sp is drawn ``draws``
    times from its Jeffreys posterior Beta(k + 1/2, n - k + 1/2) (independent: the suite and the
    two halves of the labels are disjoint samples); each draw gives a corrected rate, clipped to
    [0, 1], and the interval is the alpha/2 and 1 - alpha/2 quantiles of those. A draw with
    Se + Sp <= 1 says nothing about the rate, so it counts as 0 for the lower quantile and 1 for
    the upper (conservative). The Jeffreys draws never collapse at 0 or 1, so a calibration with
    no errors still carries its uncertainty. Seeded (``numpy.random.default_rng(seed)``), so the
    same inputs give the same interval; ``method`` is ``rogan-gladen-jeffreys-mc``.
    """
    import numpy as np

    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    if not 0 <= observed_k <= observed_n:
        raise ValueError(f"need 0 <= k <= n, got k={observed_k}, n={observed_n}")
    positives = calibration.true_pass + calibration.false_fail
    negatives = calibration.true_fail + calibration.false_pass
    whole = Interval(0.0, 1.0, level, CORRECTED_METHOD)
    if observed_n == 0 or positives == 0 or negatives == 0:
        return None, whole
    se_hat = calibration.true_pass / positives
    sp_hat = calibration.true_fail / negatives
    youden = se_hat + sp_hat - 1.0
    if youden <= 0.0:
        return None, whole
    estimate = float(min(1.0, max(0.0, (observed_k / observed_n + sp_hat - 1.0) / youden)))

    rng = np.random.default_rng(seed)
    p = rng.beta(observed_k + 0.5, observed_n - observed_k + 0.5, draws)
    se = rng.beta(calibration.true_pass + 0.5, calibration.false_fail + 0.5, draws)
    sp = rng.beta(calibration.true_fail + 0.5, calibration.false_pass + 0.5, draws)
    denominator = se + sp - 1.0
    usable = denominator > 0.0
    rate = np.clip((p + sp - 1.0) / np.where(usable, denominator, 1.0), 0.0, 1.0)
    alpha = 1.0 - level
    lower = float(np.quantile(np.where(usable, rate, 0.0), alpha / 2))
    upper = float(np.quantile(np.where(usable, rate, 1.0), 1.0 - alpha / 2))
    return estimate, Interval(lower, upper, level, CORRECTED_METHOD)


# --- with a ledger -----------------------------------------------------------------------------


def run_calibration(
    config_path: Path,
    evaluator_id: str,
    labels_path: Path,
    ledger: Ledger,
    *,
    level: float = 0.95,
) -> tuple[str, Calibration]:
    """Calibrate the judge whose criterion is ``evaluator_id`` in ``config_path``; record it.

    Returns the address of the ``oloproof.calibration`` event and the calibration. Raises
    ``UnknownIdError`` when no judge has that criterion, ``ConfigError`` for a bad config or a
    score judge, ``DatasetError`` for a bad labels file; nothing is written then.
    """
    from oloproof import events
    from oloproof.config import load_config
    from oloproof.evaluators.judges import build_judge
    from oloproof.judge_config import JUDGE_TYPES

    config = load_config(config_path)
    entries = [e for e in config.evaluators if e.criterion == evaluator_id]
    judges = [e for e in config.evaluators if e.type in JUDGE_TYPES]
    if not entries:
        known = ", ".join(sorted(e.criterion or "" for e in judges)) or "none"
        raise UnknownIdError(
            f"{config_path} has no judge with criterion {evaluator_id!r} (judges: {known})"
        )
    entry = entries[0]
    if entry.type not in JUDGE_TYPES:
        raise ConfigError(
            f"evaluator {evaluator_id!r} is a {entry.type} check, not an LLM judge; "
            "only judges are calibrated"
        )
    judge = build_judge(entry, base_dir=config_path.resolve().parent)  # type: ignore[arg-type]
    examples = load_labels(labels_path)
    labels = {"path": str(labels_path), "sha256": labels_digest(labels_path)}
    _check_pass_fail(judge)
    verdicts = asyncio.run(_judge_all(judge, examples))
    if not any(verdict.status in ("pass", "fail") for verdict in verdicts):
        raise ConfigError(
            f"the judge {evaluator_id!r} judged none of the {len(examples)} examples "
            f"({_first_problem(verdicts)}); nothing was recorded",
            hint="check the provider, base_url, model and the key's environment variable",
        )
    calibration = tally(judge.spec(), examples, verdicts, level=level, labels=labels)
    # The time keeps a repeated, identical calibration a new event, so it becomes the latest.
    recorded_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    body = {**calibration.to_body(), "recorded_at": recorded_at}
    address = ledger.put(events.make(events.CALIBRATION, body))
    return address, calibration


def _first_problem(verdicts: Sequence[Verdict]) -> str:
    for verdict in verdicts:
        if verdict.status == "missing":
            error = verdict.detail.get("error")
            return f"{verdict.reason}: {error}" if isinstance(error, str) else str(verdict.reason)
    return "every example was excluded"


def find_calibration(ledger: Ledger, identity: str) -> tuple[str, Calibration] | None:
    """The newest calibration recorded for the judge with ``identity``, with its address."""
    address = ledger.latest("calibration", identity)
    if address is None:
        return None
    found = calibration_at(ledger, address)
    return None if found is None else (address, found)


def calibration_at(ledger: Ledger, address: str) -> Calibration | None:
    """The calibration recorded at ``address``, or None when that is no calibration event."""
    from ledger import LedgerError
    from oloproof import events

    try:
        event = ledger.get(address)
    except LedgerError:
        return None
    if event.type != events.CALIBRATION:
        return None
    return Calibration.from_body(event.body)


def latest_calibration(ledger: Ledger, identity: str) -> Calibration | None:
    """The newest calibration recorded for the judge with ``identity``, or None."""
    found = find_calibration(ledger, identity)
    return None if found is None else found[1]


def judge_identities(evaluators: Iterable[Any]) -> dict[str, tuple[str, Mapping[str, Any]]]:
    """Criterion -> (identity key, spec) of the LLM judges among ``evaluators``.

    ``evaluators`` may be built evaluators or their ``spec()`` mappings (as a run event stores
    them); the judges are found by type.
    """
    from oloproof.evaluators.judges import judge_identity
    from oloproof.judge_config import JUDGE_TYPES

    found: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for evaluator in evaluators:
        spec = evaluator if isinstance(evaluator, Mapping) else evaluator.spec()
        if spec.get("type") in JUDGE_TYPES:
            found[spec["criterion"]] = (judge_identity(spec), spec)
    return found


def judge_check(ledger: Ledger, evaluators: Iterable[Any], level: float) -> JudgeCheck:
    """The policy's per-rule judge check over the run's ``evaluators``.

    ``evaluators`` may be built evaluators or their ``spec()`` mappings (as a run event stores
    them); the LLM judges among them are found by type. For a rule whose metric is a judge's
    criterion, the judge's ``JudgeStanding``: outcome None when the judge's newest calibration
    for its exact identity clears the rule's ``judge`` minimums (``requirement_check``), else
    ``MANUAL_REVIEW`` with its reason. Its detail records the judge's identity, the address of
    the calibration relied on (None without one), the minimums and the lower bounds at
    ``level``. None for a rule on any other metric.
    """
    from oloproof.policy import JudgeStanding

    identities = judge_identities(evaluators)
    found: dict[str, tuple[str, Calibration] | None] = {}

    def check(rule: Rule) -> JudgeStanding | None:
        entry = identities.get(rule.metric)
        if entry is None:
            return None
        identity = entry[0]
        if identity not in found:
            found[identity] = find_calibration(ledger, identity)
        recorded = found[identity]
        calibration = recorded[1] if recorded is not None else None
        requirement = rule.judge
        minimums = (
            requirement.min_sensitivity if requirement else None,
            requirement.min_specificity if requirement else None,
        )
        outcome, reason = requirement_check(calibration, *minimums, level, identity=identity)
        detail: dict[str, Any] = {
            "identity": identity,
            "calibration": recorded[0] if recorded is not None else None,
            "min_sensitivity": minimums[0],
            "min_specificity": minimums[1],
            "level": level,
        }
        if calibration is not None:
            for name, rate in (
                ("sensitivity", calibration.sensitivity),
                ("specificity", calibration.specificity),
            ):
                detail[name] = {"k": rate.k, "n": rate.n, "lower": rate.lower_at(level)}
        return JudgeStanding(outcome, reason, detail)

    return check
