"""``oloproof calibrate``: measure a judge against human labels and record the measurement.

The lines are built from the calibration event's body alone, so ``oloproof inspect`` on the
calibration's address prints exactly what ``calibrate`` printed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer

from ledger import Event, Ledger, on_read_only_file_system
from oloproof import events as ev
from oloproof.cli.arguments import a_number, check_input_file
from oloproof.cli.inspect_cmd import RENDERERS
from oloproof.cli.main import app
from oloproof.cli.project import config_path
from oloproof.cli.render import model_names
from oloproof.display import first_few, fmt_percent, fmt_percent_interval
from oloproof.results import Interval
from oloproof.stats import clopper_pearson
from oloproof.store import LEDGER_DIR, open_project_ledger

SHOWN_IDS = 5
"""How many example ids a disagreement or missing line names before it says how many more."""


@app.command("calibrate")
def calibrate_command(
    evaluator: str = typer.Option(
        ..., "--evaluator", help="The judge to calibrate, named by its criterion."
    ),
    labels: Path = typer.Option(
        ...,
        "--labels",
        help="Human-labelled examples, one JSON object a line (see docs/judges.md).",
    ),
    config: Path | None = typer.Option(
        None,
        "--config",
        help="The project file (default: the oloproof.yaml of the project this folder is in).",
    ),
    level: float = typer.Option(
        0.95,
        "--level",
        min=0.5,
        max=0.999,
        callback=a_number,
        help="Confidence level of the printed intervals.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the calibration as JSON."),
) -> None:
    """Run a judge over human-labelled examples and record its agreement, sensitivity and
    specificity, bound to the judge's exact identity (provider, model, template, parameters).

    A policy rule on a judge metric decides MANUAL_REVIEW until such a calibration exists,
    clears the rule's minimums and shows the judge better than chance.

    Exit code: 0 recorded, 2 bad input.

    Example: oloproof calibrate --evaluator groundedness --labels labels.jsonl
    """
    from oloproof.calibration import run_calibration

    check_input_file(labels, recorded=True)
    config = config_path(config)
    check_input_file(config)
    root = config.resolve().parent
    opened: list[Ledger] = []

    def ledger() -> Ledger:  # made only for a calibration to record: bad input writes nothing
        if not opened:
            opened.append(open_project_ledger(root))
        return opened[0]

    if (root / LEDGER_DIR).exists() or on_read_only_file_system(root):
        # Opened now, as it costs nothing: a ledger that cannot take the calibration (read-only
        # media) is refused before the judge is paid to answer every example.
        ledger()

    try:
        address, _ = run_calibration(config, evaluator, labels, ledger, level=level)
        _render(opened[0], address, opened[0].get(address), as_json)
    finally:
        for made in opened:
            made.close()


def _render(ledger: Ledger, address: str, event: Event, as_json: bool) -> int:
    if as_json:
        data = {"address": address, **event.body}
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        typer.echo("\n".join(calibration_lines(address, event.body)))
    return 0


def calibration_lines(address: str, body: Mapping[str, Any]) -> list[str]:
    """What ``calibrate`` prints, from the event body alone."""
    judge = body["judge"]
    template = judge.get("template", {})
    counts = body["counts"]
    lines = [
        f"Calibration of {judge.get('criterion')} ({judge.get('type')}): "
        f"{judge.get('provider')} {judge.get('model')}, "
        f"template {template.get('name')} v{template.get('version')}",
        f"  labels: {body['labels'].get('path', '?')} ({body['labels'].get('n', '?')} examples)",
    ]
    level, missing = float(body["level"]), int(counts["missing"])
    for name, gated in (("agreement", False), ("sensitivity", True), ("specificity", True)):
        lines.append(f"  {name:<12} {_rate(body[name], level, missing, gated)}")
    human_passes = counts["true_pass"] + counts["false_fail"]
    human_fails = counts["true_fail"] + counts["false_pass"]
    lines.append(
        f"  the judge passed {counts['true_pass']} of {human_passes} human passes and "
        f"failed {counts['true_fail']} of {human_fails} human fails; "
        f"{counts['missing']} missing, {counts['excluded']} excluded"
    )
    reasons = body.get("missing_reasons") or {}
    if reasons:
        listed = ", ".join(f"{reason} {count}" for reason, count in sorted(reasons.items()))
        lines.append(f"  missing because: {listed}")
    for label in ("disagreements", "missing"):
        ids = list(body.get(label, []))
        if ids:
            lines.append(f"  {label}: {first_few(ids, SHOWN_IDS)}")
    models = body.get("reply_models")
    if models is not None:  # a run whose replies name another model cannot rely on it
        lines.append(f"  replies from: {model_names(models) or 'no reply'}")
    lines.append(f"Judge identity: {body['identity']}")
    lines.append(f"Calibration event: {address}")
    return lines


def _rate(rate: Mapping[str, Any], level: float, missing: int, gated: bool) -> str:
    """A rate as recorded (of the judged examples), or, with ``missing`` examples, with each
    counted against it: a gate holds every missing example against both rates it checks
    (``gated``; ``Rate.lower_at``), so the judged examples alone would print a rate better
    than the one that decides."""
    k, judged = int(rate["k"]), int(rate["n"])
    if not judged:
        return "no examples (0 / 0)" + (f"; {missing} missing" if missing else "")
    if not missing:
        interval = Interval(rate["lower"], rate["upper"], level, rate["method"])
        estimate = fmt_percent(rate["estimate"])
        return f"{estimate:>6} {fmt_percent_interval(interval)}  {k} / {judged}"
    n = judged + missing
    shown = f"{fmt_percent(k / n):>6} {fmt_percent_interval(clopper_pearson(k, n, level))}"
    counted = "a disagreement" if missing == 1 else "disagreements"
    return (
        f"{shown}  {k} / {n}: the {missing} missing counted as {counted}"
        f"{', as a gate does' if gated else ''} ({k} / {judged} of those judged)"
    )


RENDERERS[ev.CALIBRATION] = _render
