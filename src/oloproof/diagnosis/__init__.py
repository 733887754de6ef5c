"""Diagnose a run's failures: re-execute them under an intervention, beside a control.

The package is cut along its seams, each a module of one concern:

    labels   the label logic and its constants: pure, light (the CLI loads it at start-up)
    derive   every label and count of a diagnosis, derived from the ledger's events alone
    run      selecting the cases, executing the child runs, recording the diagnosis
    audit    re-deriving a stored diagnosis and listing its differences (verify)
    scope    the Selected and Excluded lines the CLI and the viewer both show
    lines    the count and label lines of what a diagnosis found, which both show too

The public names below load on first use (PEP 562), so importing ``oloproof.diagnosis.labels``
does not pull in the runner and its dependencies.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_LAZY = {
    "Diagnosis": "oloproof.diagnosis.derive",
    "DiagnosisStoppedError": "oloproof.diagnosis.run",
    "adiagnose": "oloproof.diagnosis.run",
    "diagnose": "oloproof.diagnosis.run",
    "diagnosis_checks": "oloproof.diagnosis.audit",
    "load_diagnosis": "oloproof.diagnosis.derive",
    "verify_diagnosis": "oloproof.diagnosis.audit",
}

if TYPE_CHECKING:
    from oloproof.diagnosis.audit import diagnosis_checks, verify_diagnosis
    from oloproof.diagnosis.derive import Diagnosis, load_diagnosis
    from oloproof.diagnosis.run import DiagnosisStoppedError, adiagnose, diagnose


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'oloproof.diagnosis' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "Diagnosis",
    "DiagnosisStoppedError",
    "adiagnose",
    "diagnose",
    "diagnosis_checks",
    "load_diagnosis",
    "verify_diagnosis",
]
