"""Whether two runs' results for one case id are the same case, answered alike: the rule a
comparison pairs by, and that its flips and the viewer's comparison page share.

A case is paired when its input and its expected values are the same in both runs and neither
result errored. A case whose expected values changed was judged against different answers in
the two runs: a fail that becomes a pass because its label moved is no improvement.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oloproof.events import identity_key, plain


def expected_key(body: Mapping[str, Any]) -> str:
    """A key of a case result's expected values (``expected_key`` when a holder kept only it)."""
    kept = body.get("expected_key")
    return str(kept) if kept is not None else identity_key(plain(body.get("expected") or {}))


def unpaired_reason(
    cand: Mapping[str, Any], base: Mapping[str, Any], *, expected: bool = True
) -> str | None:
    """Why ``cand`` and ``base`` are not paired, or ``None`` when they are. ``expected=False``
    is the rule of comparisons recorded before expected values had to match (schema 2)."""
    if cand.get("input_key") != base.get("input_key"):
        return "input_differs"
    if expected and expected_key(cand) != expected_key(base):
        return "expected_differs"
    cand_err, base_err = cand["status"] == "errored", base["status"] == "errored"
    if cand_err and base_err:
        return "errored_in_both"
    if cand_err:
        return "errored_in_candidate"
    if base_err:
        return "errored_in_baseline"
    return None
