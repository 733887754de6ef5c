"""Measure a pass/fail judge against human labels, and use the measurement.

1. ``load_labels(path)`` reads a labels file (JSONL; see ``LabelledExample``), ``calibrate`` /
   ``acalibrate`` run the judge over the examples and count how often it agrees with the people.
   Positive means *pass*: **sensitivity** is the share of human-passed examples the judge passes,
   **specificity** the share of human-failed examples the judge fails, **agreement** the share of
   all judged examples where both agree. Each carries its counts and its Clopper-Pearson interval.
   A judgment the judge could not give (missing) or that did not apply (excluded) counts in
   neither; both are listed. Only the model's verdicts count: an example the judge would fail
   without asking its model (no answer text where it reads one), or that it would read as it
   reads another (one observation counted twice), is refused before any call.
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

The package is cut along its seams, each a module of one concern:

    measure  the pure maths: rates and their intervals, the calibration's counts, whether a
             judge may gate, the corrected rate and its interval
    labels   reading a labels file into ``LabelledExample`` values
    judging  running a judge over labelled examples and tallying its verdicts
    record   the ledger side: recording, finding and checking calibrations, and ``judge_check``
             for the policy

The names below are the supported ones; import them from ``oloproof.calibration``. numpy is
loaded only when a corrected rate is computed, scipy only when an interval is.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from oloproof.calibration.judging import acalibrate, calibrate, tally
    from oloproof.calibration.labels import LabelledExample, labels_digest, load_labels
    from oloproof.calibration.measure import (
        CORRECTED_METHOD,
        Calibration,
        Rate,
        corrected_rate,
        requirement_check,
    )
    from oloproof.calibration.record import (
        calibration_at,
        find_calibration,
        judge_check,
        judge_identities,
        latest_calibration,
        reply_models_in,
        reply_models_of_run,
        run_calibration,
    )

# Each name is loaded from its module when first used, so that reading a calibration (what
# `inspect` does) never loads the judge runner and the evaluators.
_HOMES = {
    "acalibrate": "judging",
    "calibrate": "judging",
    "tally": "judging",
    "LabelledExample": "labels",
    "labels_digest": "labels",
    "load_labels": "labels",
    "CORRECTED_METHOD": "measure",
    "Calibration": "measure",
    "Rate": "measure",
    "corrected_rate": "measure",
    "requirement_check": "measure",
    "calibration_at": "record",
    "find_calibration": "record",
    "judge_check": "record",
    "judge_identities": "record",
    "latest_calibration": "record",
    "reply_models_in": "record",
    "reply_models_of_run": "record",
    "run_calibration": "record",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'oloproof.calibration' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"oloproof.calibration.{home}"), name)
    globals()[name] = value
    return value


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
    "reply_models_in",
    "reply_models_of_run",
    "requirement_check",
    "run_calibration",
    "tally",
]
