"""Output that fits where it goes: a real terminal (pty) gets fitted, coloured tables and a
progress line; a pipe gets the plain layout the guides show, byte for byte."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.support import oloproof
from tests.terminal import on_terminal

ANSI = re.compile(r"\x1b\[[0-9;]*m")
RED, GREEN, YELLOW = "\x1b[31m", "\x1b[32m", "\x1b[33m"


def rejoin(table_lines: list[str]) -> list[list[str]]:
    """A fitted table's rows with each folded cell put back together: a row starts where its
    first cell has text; a piece after a break character joins without a space."""
    rows: list[list[str]] = []
    for line in table_lines:
        cells = [cell.strip() for cell in line.strip("│").split("│")]
        if cells[0] or not rows:
            rows.append(cells)
            continue
        for i, piece in enumerate(cells):
            if piece:
                glue = "" if rows[-1][i][-1:] in "_-/" else " "
                rows[-1][i] = (rows[-1][i] + glue + piece).strip()
    return rows


def _report_lines(lines: list[str]) -> list[str]:
    start = next(i for i, line in enumerate(lines) if line.startswith("Run run_"))
    return lines[start:]


@pytest.mark.parametrize("columns", [80, 60])
def test_on_a_terminal_every_line_fits_its_width(blackbox: Path, columns: int) -> None:
    screen = on_terminal("run", cwd=blackbox, columns=columns)
    assert screen.code == 1
    lines = _report_lines(screen.lines)
    assert max(len(line) for line in lines) <= columns, "\n".join(lines)
    # Boxes stay boxes: every table line starts and ends with a frame character.
    assert all(line[-1] in "│┐┤┘" for line in lines if line and line[0] in "│┌├└")
    start = next(i for i, line in enumerate(lines) if "│ rule" in line)
    end = next(i for i, line in enumerate(lines) if i > start and line.startswith("└"))
    if columns < 80:
        # Narrower still, the first column folds too; every word is still there, in order.
        column = "".join(line.split("│")[4].strip() for line in lines[start + 2 : end])
        assert column == (
            "interval_overlaps_threshold" * 2 + "observed_failures_exceed_limit"
        ).replace(" ", "")
        return
    # At 80 only the long cells fold, and each folded cell reads whole again.
    rows = rejoin(lines[start + 2 : end])
    assert rows == [
        ["answer-floor", "answer_correct", "INSUFFICIENT_EVIDENCE", "interval_overlaps_threshold"],
        [
            "retrieval-floor",
            "hit_rate_at_2",
            "INSUFFICIENT_EVIDENCE",
            "interval_overlaps_threshold",
        ],
        ["citations-valid", "citations_valid", "FAIL", "observed_failures_exceed_limit"],
    ]


def test_the_piped_layout_is_unchanged_whatever_columns_says(blackbox: Path) -> None:
    wide = oloproof("run", cwd=blackbox, env={"COLUMNS": "60"})
    assert wide.code == 1
    assert (
        "│ citations-valid │ citations_valid │ FAIL                  │ "
        "observed_failures_exceed_limit │"
    ) in wide.lines
    assert "\x1b[" not in wide.out


def test_verdicts_and_the_gate_are_coloured_on_a_terminal(blackbox: Path) -> None:
    screen = on_terminal("run", cwd=blackbox, columns=120)
    assert f"Gate: {RED}BLOCK" in screen.raw
    assert f"{RED}FAIL" in screen.raw
    assert f"{YELLOW}INSUFFICIENT_EVIDENCE" in screen.raw
    failures = on_terminal("inspect", "latest", "--failures", cwd=blackbox, columns=120)
    assert f"answer_correct: {RED}failed" in failures.raw


def test_no_color_turns_colour_off_and_keeps_the_fit(blackbox: Path) -> None:
    screen = on_terminal("run", cwd=blackbox, columns=80, env={"NO_COLOR": "1"})
    assert screen.code == 1
    report = screen.raw[screen.raw.index("Run run_") :]
    assert not ANSI.search(report)
    assert max(len(line) for line in _report_lines(screen.lines)) <= 80


def test_force_color_colours_a_pipe_without_fitting_it(blackbox: Path) -> None:
    piped = oloproof("run", cwd=blackbox, env={"FORCE_COLOR": "1", "NO_COLOR": ""})
    assert f"Gate: {RED}BLOCK" in piped.out
    plain = ANSI.sub("", piped.out)
    assert (
        "│ citations-valid │ citations_valid │ FAIL                  │ "
        "observed_failures_exceed_limit │"
    ) in plain.splitlines()


def test_the_progress_line_shows_rate_time_left_and_the_live_tally(blackbox: Path) -> None:
    # stdout is a pipe here, so the report is plain while stderr, a terminal, gets the bar.
    screen = on_terminal("run", cwd=blackbox, columns=160, stdout_terminal=False)
    assert screen.code == 1
    # The last frame, drawn as the run ends, before the line is cleared.
    frames = [f for f in re.split(r"\r|\n", ANSI.sub("", screen.raw)) if "15/15" in f]
    assert frames, screen.raw
    last = frames[-1]
    assert re.search(r"· [0-9.]+ cases/s · \d+:\d\d:\d\d left · 4 failed · 0 errored", last), last
    assert screen.piped.splitlines()[1] == "Gate: BLOCK (exit 1)"
    assert "cases/s" not in screen.piped


def test_an_errored_case_is_counted_live(blackbox: Path) -> None:
    app = blackbox / "app.py"
    text = app.read_text()
    assert "def run(case):\n" in text
    app.write_text(
        text.replace(
            "def run(case):\n",
            "def run(case):\n    if case['question'].startswith('How many seats'):\n"
            "        raise RuntimeError('boom')\n",
        )
    )
    screen = on_terminal("run", cwd=blackbox, columns=160, stdout_terminal=False)
    frames = [f for f in re.split(r"\r|\n", ANSI.sub("", screen.raw)) if "15/15" in f]
    assert frames and "· 1 errored" in frames[-1], screen.raw


def test_runs_and_failures_fold_to_the_terminal_and_stay_whole_in_a_pipe(blackbox: Path) -> None:
    assert oloproof("run", cwd=blackbox).code == 1
    piped_runs = oloproof("runs", cwd=blackbox)
    assert len(piped_runs.lines) == 1 and len(piped_runs.lines[0]) > 80
    piped_failures = oloproof("inspect", "latest", "--failures", cwd=blackbox)
    assert max(len(line) for line in piped_failures.lines) > 80
    for args, piped in (
        (["runs"], piped_runs),
        (["inspect", "latest", "--failures"], piped_failures),
    ):
        screen = on_terminal(*args, cwd=blackbox, columns=80)
        assert screen.code == 0, screen.plain
        assert max(len(line) for line in screen.lines) <= 80, args
        # Folding only moves words: the same words in the same order.
        assert screen.plain.split() == piped.out.split(), args
