"""Run a pass/fail judge over labelled examples and tally its verdicts into a calibration."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from oloproof import aio, strictjson
from oloproof.calibration.labels import LabelledExample
from oloproof.calibration.measure import Calibration, sorted_models
from oloproof.errors import ConfigError, DatasetError
from oloproof.evaluators.base import AsyncEvaluator
from oloproof.evaluators.fields import dotted_expected_check
from oloproof.evaluators.judge_reply import REASON_HINTS
from oloproof.evaluators.judges import LLMJudge
from oloproof.evaluators.reads import reads_of
from oloproof.identities import ReadKeys
from oloproof.results import Verdict


async def acalibrate(
    judge: AsyncEvaluator,
    labelled: Sequence[LabelledExample],
    *,
    level: float = 0.95,
    labels: Mapping[str, Any] | None = None,
) -> Calibration:
    """Run ``judge`` over ``labelled`` (concurrently, as its provider allows) and tally it.

    ``labels`` describes the labels file (e.g. ``{"path": ..., "sha256": ...}``) for the record.
    Raises ``ConfigError`` for a judge that does not give pass/fail verdicts, and
    ``DatasetError`` for an example it would decide without asking its model, or one it
    reads as it reads another (``refuse_unmeasurable``).
    """
    check_pass_fail(judge)
    verdicts = await judge_all(judge, labelled)
    return tally(judge.spec(), labelled, verdicts, level=level, labels=labels)


def check_pass_fail(judge: AsyncEvaluator) -> None:
    """Raise ``ConfigError`` unless ``judge`` gives pass/fail verdicts (it cannot be calibrated)."""
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
    from oloproof.events import judge_identity

    # (human says pass, judge says pass) -> count
    counts = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    missing: list[str] = []
    reasons: dict[str, int] = {}
    excluded: list[str] = []
    disagreements: list[str] = []
    models: set[str | None] = set()
    for example, verdict in zip(labelled, verdicts, strict=True):
        if verdict.status == "missing":
            missing.append(example.id)
            reason = verdict.reason or "unknown"
            reasons[reason] = reasons.get(reason, 0) + 1
        elif verdict.status == "excluded":
            excluded.append(example.id)
        elif verdict.status in ("pass", "fail"):
            judge_passed = verdict.status == "pass"
            if "reply_model" in verdict.detail:  # a model's reply, not a verdict made without
                models.add(verdict.detail["reply_model"])
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
        reply_models=sorted_models(models),
    )


async def judge_all(
    judge: AsyncEvaluator, labelled: Sequence[LabelledExample], *, source: Path | None = None
) -> list[Verdict]:
    """The judge's verdicts on ``labelled``, in order, judged concurrently inside its context.

    Raises ``DatasetError`` before any call when an example cannot measure the judge, or
    repeats another (``refuse_unmeasurable``; ``source`` is the labels file, for the error).
    """
    refuse_unmeasurable(judge, labelled, source)
    enter, leave = getattr(judge, "__aenter__", None), getattr(judge, "__aexit__", None)
    if enter is not None and leave is not None:
        await enter()
        try:
            return list(await asyncio.gather(*(judge.ajudge(ex.view()) for ex in labelled)))
        finally:
            await leave(None, None, None)
    return list(await asyncio.gather(*(judge.ajudge(ex.view()) for ex in labelled)))


def refuse_unmeasurable(
    judge: AsyncEvaluator, labelled: Sequence[LabelledExample], source: Path | None = None
) -> None:
    """Raise ``DatasetError`` at the first example that would get a verdict (or lack one) the
    model never gave, that repeats what the judge reads of an earlier example, or whose expected
    value sits under a key with a dot its ``expected_field`` path cannot name (the judge would
    exclude it, as it would such a case: ``dotted_expected_check``).

    A judge decides some outputs without asking its model: it fails one that has no answer
    text where its ``field`` points. In a run that fail is the system's; in a labels file it
    is not the judge's verdict, so counting it as one would credit the judge with agreement it
    never showed (a human fail, failed for want of an answer, would raise its specificity).
    Such an example is a labels file written for another reading of the output, found before
    anything is called or recorded. So is one the citation judge gives no verdict on (ids cited
    where no context was recorded): no label of it can be compared with the model's. An
    exclusion is left to ``tally``: it is decided from what the example holds, never from the
    model, and counts in neither rate.

    Two examples whose prompts would hold the same values (the judgment cache's reads: ids and
    anything else the judge does not read may differ) are one question asked twice. Counted
    twice, they would narrow the Clopper-Pearson bounds the gate reads as if the judge had
    been observed twice (forty lines repeating two examples cleared an 80% minimum); labelled
    the two ways, one of the labels is wrong.
    """
    if not isinstance(judge, LLMJudge):
        return  # an evaluator of another kind gives every verdict itself
    declaration = reads_of(judge)
    seen: dict[bytes, LabelledExample] = {}
    dotted = dotted_expected_check([judge.config], of="example")
    for example in labelled:
        # As in a cases file: the judge would exclude the example as having no reference.
        problem = dotted(example) if dotted is not None else None
        if problem is not None:
            raise DatasetError(problem, where=_where(example, source))
        verdict = judge.decided_without_call(example.view())
        if verdict is not None and verdict.status == "excluded":
            continue  # counted in neither rate, so a repeat of it counts nothing twice
        if verdict is not None:
            raise _unmeasurable(judge.criterion, verdict, _where(example, source))
        earlier = seen.setdefault(ReadKeys(example.view()).of(declaration), example)
        if earlier is not example:
            raise _repeated(judge.criterion, earlier, example, source)


def _where(example: LabelledExample, source: Path | None) -> str:
    """Where ``example`` is, for an error: its file and line, else its id."""
    if source is not None and example.line is not None:
        return f"{source}, line {example.line}"
    return f"example {example.id!r}"


def _repeated(
    criterion: str, earlier: LabelledExample, example: LabelledExample, source: Path | None
) -> DatasetError:
    there = f"example {earlier.id!r}" + (
        f" on line {earlier.line}" if earlier.line is not None else ""
    )
    same = f"the judge {criterion!r} reads the same here as in {there}"
    if earlier.label == example.label:
        return DatasetError(
            f"{same}, so the two would count one observation twice",
            where=_where(example, source),
            hint="keep one",
        )
    labels = {True: "pass", False: "fail"}
    return DatasetError(
        f"{same}, labelled {labels[earlier.label]} there and {labels[example.label]} here; one "
        "example cannot be both",
        where=_where(example, source),
        hint="settle on one label",
    )


def _unmeasurable(criterion: str, verdict: Verdict, where: str) -> DatasetError:
    field = verdict.detail.get("field")
    if verdict.reason == "field_missing":
        return DatasetError(
            f"the output has no {field!r}, the field the judge {criterion!r} reads, so this "
            "example cannot measure the judge",
            where=where,
            hint="put the answer text there, or set the judge's field to where it is",
        )
    if verdict.reason == "field_not_text":
        kind = verdict.detail.get("type")
        return DatasetError(
            f"the output's {field!r} is {strictjson.kind_named(str(kind))}, not the text the "
            f"judge {criterion!r} reads, so this example cannot measure the judge",
            where=where,
            hint="give the answer as text",
        )
    decided = (  # a judge leaves an answer citing ids without a context unjudged
        "give this example no verdict"
        if verdict.status == "missing"
        else f"{verdict.status} this example"
    )
    return DatasetError(
        f"the judge {criterion!r} would {decided} without asking its model "
        f"({verdict.reason}), so it cannot measure the judge",
        where=where,
    )


def calibrate(
    judge: AsyncEvaluator,
    labelled: Sequence[LabelledExample],
    *,
    level: float = 0.95,
    labels: Mapping[str, Any] | None = None,
) -> Calibration:
    """``acalibrate`` for code that is not already inside an event loop."""
    return aio.run(acalibrate(judge, labelled, level=level, labels=labels))


SAMPLE_REPLY = 200
"""How many characters of a sample reply an error shows."""


def nothing_judged(
    evaluator_id: str, labelled: Sequence[LabelledExample], verdicts: Sequence[Verdict]
) -> ConfigError:
    """The error for a judge that judged none of ``labelled``: what happened, and a sample.

    It counts the reasons, names the first problem and, when a reply came back, shows the start
    of one: "check the key" does not help when the model answered in the wrong format.
    """
    import json

    reasons: dict[str, int] = {}
    for verdict in verdicts:
        if verdict.status == "missing":
            reasons[verdict.reason or "unknown"] = reasons.get(verdict.reason or "unknown", 0) + 1
    split = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items(), key=lambda i: (-i[1], i[0])))
    pairs = list(zip(labelled, verdicts, strict=True))
    missing = [(example, v) for example, v in pairs if v.status == "missing"]
    what = f"{split}; " if split else "every example was excluded"
    if missing:
        example, first = missing[0]
        said = first.detail.get("parse_error") or first.detail.get("error") or first.reason
        what += f"first, on {example.id}: {said}"
    replied = next((v for _, v in missing if isinstance(v.detail.get("raw_reply"), str)), None)
    if replied is not None and replied.reason in ("unparseable_reply", "instructions_dropped"):
        text = replied.detail["raw_reply"]
        sample = json.dumps(text[:SAMPLE_REPLY] + ("…" if len(text) > SAMPLE_REPLY else ""))
        hint = f"a reply began: {sample}; " + (
            "the model did not read the instructions: set instructions: user on the judge"
            if replied.reason == "instructions_dropped"
            else "the model does not answer with the verdict object: try structured_output: "
            "json_schema, a server that enforces it, or a stronger model"
        )
    elif missing and missing[0][1].reason in REASON_HINTS:  # a usual cause, with its remedy
        hint = REASON_HINTS[missing[0][1].reason or ""].split(": ", 1)[1]
    else:
        hint = "check the provider, base_url, model and the key's environment variable"
    return ConfigError(
        f"the judge {evaluator_id!r} judged none of the {len(labelled)} examples ({what}); "
        "nothing was recorded",
        hint=hint,
    )
