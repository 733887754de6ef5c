"""``oloproof compare --junit`` and ``--summary``: a comparison for a CI system.

The same rules as a run's (``oloproof.cli.ci``): one JUnit test per comparison rule, plus the
gate; a Markdown summary with the paired differences, the decisions and the changed cases
(the first ``SUMMARY_FLIPS``, fewer when their rows would not fit in ``COMMENT_CHARS``, then
how many more).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from typing import Any

from oloproof.cli.ci import (
    BLOCKED_DEFAULT,
    Md,
    gate_testcase,
    junit_document,
    junit_suite,
    md_code,
    md_table,
    md_text,
    rule_testcase,
)
from oloproof.display import fmt_points, fmt_points_interval, fmt_written, plural
from oloproof.flips import Flip, changed_cases_line
from oloproof.report import (
    compared_apart_lines,
    comparison_evidence_line,
    comparison_rule_note,
    counted_text,
    level_line,
    repeated_pairs_line,
    rule_margins,
    unpaired_lines,
)
from oloproof.results import Interval

SUMMARY_FLIPS = 100
"""How many changed cases a Markdown summary lists at most: each row is about 100 characters
with short ids, and a GitHub pull request comment holds ``COMMENT_CHARS`` in all; the rest are
counted and named by command."""

COMMENT_CHARS = 65_536
"""The most characters a GitHub pull request comment holds: a longer one is refused whole, so
a summary lists fewer changed cases when long case ids would make their rows exceed it."""


def _label(body: Mapping[str, Any]) -> tuple[str | None, int]:
    gate = body.get("gate")
    if gate is None:
        return None, 0
    return ("BLOCK" if gate["blocked"] else "PASS"), int(gate["exit_code"])


def comparison_junit(address: str, body: Mapping[str, Any]) -> str:
    """One test per comparison rule and one for the gate."""
    policy = body.get("policy") or {}
    blocks = tuple(policy.get("block_on") or BLOCKED_DEFAULT)
    tests = [
        rule_testcase(
            "oloproof.compare",
            d["id"],
            d["metric"],
            d["outcome"],
            d["reason"],
            blocks,
            comparison_rule_note(d),
        )
        for d in body["decisions"]
    ]
    label, code = _label(body)
    tests.append(gate_testcase("oloproof.gate", label, code, comparison_evidence_line(body)))
    name = f"oloproof compare {body['candidate']['run_id']} {body['baseline']['run_id']}"
    return junit_document(
        [junit_suite(name, tests)],
        {"comparison": address, "gate": "none" if label is None else f"{label} (exit {code})"},
    )


def _difference(row: Mapping[str, Any], margins: Sequence[float]) -> list[str]:
    """The estimate and interval cells; ``margins``: the row's rules' (``rule_margins``)."""
    diff = row["difference"]
    if diff is None:
        return ["—", "—"]
    interval = Interval(diff["lower"], diff["upper"], 0.0, "")
    return [fmt_points(diff["estimate"]), fmt_points_interval(interval, margins)]


def comparison_summary(address: str, body: Mapping[str, Any], flips: Sequence[Flip]) -> str:
    """The comparison as Markdown: with the first ``SUMMARY_FLIPS`` changed cases, or as many
    of them as keep it within ``COMMENT_CHARS``; its ``not paired`` lines name their first
    cases unless those ids alone would make it longer."""
    listed = min(len(flips), SUMMARY_FLIPS)
    ids = len(_summary(address, body, flips, 0, ids=True)) <= COMMENT_CHARS
    text = _summary(address, body, flips, listed, ids)
    if len(text) <= COMMENT_CHARS:
        return text
    # With fewer listed than there are, each row listed makes the text longer (the count of
    # those not listed loses a digit at most): the most that fit is found by bisection.
    fit = bisect.bisect_right(
        range(listed), COMMENT_CHARS, key=lambda n: len(_summary(address, body, flips, n, ids))
    )
    return _summary(address, body, flips, max(fit - 1, 0), ids)


def _summary(
    address: str, body: Mapping[str, Any], flips: Sequence[Flip], listed: int, ids: bool
) -> str:
    """The comparison as Markdown, listing the first ``listed`` changed cases, and with
    ``ids`` the first ids of each ``not paired`` line."""
    label, code = _label(body)
    gate = "no policy" if label is None else f"**Gate: {label} (exit {code})**"
    cand, base = body["candidate"]["run_id"], body["baseline"]["run_id"]
    lines = [
        f"### Oloproof comparison of `{cand}` against `{base}`",
        "",
        f"{gate} · {body['paired_cases']} paired cases · `{address}`",
        "",
    ]
    evidence = comparison_evidence_line(body)
    if evidence is not None:
        lines += [md_text(evidence), ""]
    # Why cases count as missing, as the terminal says it under its head: a count alone hides
    # a candidate that errored.
    for line in unpaired_lines(body, ids):
        lines += [md_text(line), ""]
    repeated = repeated_pairs_line(body)
    if repeated is not None:
        lines += [md_text(repeated), ""]
    level = level_line(float(body["level"]))
    if level is not None:
        lines += [md_text(level), ""]
    lines += [
        *md_table(
            ["metric", "difference", "interval", "paired", "missing", "excluded"],
            [
                [
                    r["metric"],
                    *_difference(r, rule_margins(body, r["metric"])),
                    str(r["paired"]),
                    str(r["missing"]),
                    str(r["excluded"]),
                ]
                for r in body["metrics"]
            ],
        ),
        "",
    ]
    counted = [
        (r["metric"], counted_text(r, rule_margins(body, r["metric"]))) for r in body["metrics"]
    ]
    for metric, text in counted:
        if text is not None:
            lines += [md_text(f"{metric}: {text}"), ""]
    # As the terminal says them: a row judged differently reads as the system's doing without
    # it, and a metric one run lacks is in no row at all.
    for line in compared_apart_lines(body):
        lines += [md_text(line), ""]
    if body["decisions"]:
        lines += md_table(
            ["rule", "metric", "test", "decision", "reason"],
            [
                [
                    d["id"],
                    d["metric"],
                    f"{d['test']}, margin {fmt_written(d['margin_points'], 1)} points",
                    Md(f"**{d['outcome']}**"),
                    d["reason"],
                ]
                for d in body["decisions"]
            ],
        )
        lines.append("")
        for d in body["decisions"]:
            note = comparison_rule_note(d)
            if note is not None:
                lines += [md_text(f"{d['id']}: {note}"), ""]
    lines.append(md_text(changed_cases_line(flips)))
    shown = flips[:listed]
    moved = [f for f in shown if f.counted]
    if moved:
        lines.append("")
        lines += md_table(
            ["metric", "case", "baseline", "candidate", "see"],
            [
                [f.metric, f.case_id, f.baseline, f.candidate, md_code(f.candidate_case)]
                for f in moved
            ],
        )
    apart = [f for f in shown if not f.counted]
    if apart:
        # A table of their own, with why: a row of the first table reads as the system's doing.
        lines.append("")
        lines += md_table(
            ["metric", "case", "baseline", "candidate", "counted neither way", "see"],
            [
                [
                    f.metric,
                    f.case_id,
                    f.baseline,
                    f.candidate,
                    f.direction_text,
                    md_code(f.candidate_case),
                ]
                for f in apart
            ],
        )
    unlisted = len(flips) - listed
    if unlisted > 0:
        every = md_code(f"oloproof inspect {address} --json")
        lines += [
            "",
            f"and {unlisted} more changed {plural(unlisted, 'case')}, not listed "
            f"here: {every} lists them all (`flipped`)",
        ]
    lines.append("")
    return "\n".join(lines)
