"""What a person reads of a run: a long slice table summarised in one line (``--slices`` lists
it), one case pretty and folded to the terminal (``--json`` raw), and failures on chosen
criteria (``--failures --criterion NAME``). Through the real CLI; widths on a real pty."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support import oloproof
from tests.terminal import on_terminal

CRITERIA = ["answer_correct", "hit_rate_at_2", "recall_at_2", "citations_valid"]


def _cases(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / "cases.jsonl").read_text().splitlines()]


def _slice_every_case(root: Path) -> int:
    """Give each case its own ``metadata.case`` slice value beside its topic; return the
    number of slice rows the report then holds (one per slice value and criterion)."""
    cases = _cases(root)
    for case in cases:
        case["metadata"]["case"] = case["id"]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    config = root / "oloproof.yaml"
    config.write_text(
        config.read_text().replace(
            "slices: [metadata.topic]", "slices: [metadata.topic, metadata.case]"
        )
    )
    values = len({c["metadata"]["topic"] for c in cases}) + len(cases)
    return values * len(CRITERIA)


def _slice_rows(lines: list[str]) -> list[str]:
    """The data rows of the slice table: the boxed rows after its title, header left out."""
    start = next(i for i, line in enumerate(lines) if line.startswith("Slices (exploratory"))
    rows = []
    for line in lines[start + 1 :]:
        if not line.startswith(("│", "┌", "├", "└", "╞", "╘", "╒", "┼")):
            if rows:
                break
            continue
        if line.startswith("│"):
            rows.append(line)
    return rows[1:]


def test_a_long_slice_table_is_one_line_and_slices_lists_it(blackbox: Path) -> None:
    rows = _slice_every_case(blackbox)
    values = rows // len(CRITERIA)
    assert rows > 60
    run = oloproof("run", cwd=blackbox)
    assert run.code == 1, run.err  # the guide's gate still blocks
    summary = (
        f"{rows} exploratory slice rows not shown (2 slices, {values} values; they never gate); "
        "add --slices to list them"
    )
    assert summary in run.lines
    assert not any(line.startswith("Slices (exploratory") for line in run.lines)
    # The gate and the metrics are printed as without the extra slice.
    assert "Gate: BLOCK (exit 1)" in run.lines
    assert any(line.startswith("│ answer_correct") for line in run.lines)

    listed = oloproof("inspect", "latest", "--slices", cwd=blackbox)
    assert listed.code == 0, listed.err
    assert summary not in listed.lines
    shown = _slice_rows(listed.lines)
    assert len(shown) == rows
    ids = {c["id"] for c in _cases(blackbox)}
    named = {cells[1].strip() for cells in (row.strip("│").split("│") for row in shown)}
    assert ids <= named
    again = oloproof("run", "--slices", cwd=blackbox)
    assert len(_slice_rows(again.lines)) == rows


def test_the_guides_slice_table_is_shown_whole(blackbox: Path) -> None:
    # The guide's own project, with its one slice, keeps its table as the guide shows it.
    run = oloproof("run", cwd=blackbox)
    topics = {c["metadata"]["topic"] for c in _cases(blackbox)}
    assert len(_slice_rows(run.lines)) == len(topics) * len(CRITERIA)
    assert not any("exploratory slice rows not shown" in line for line in run.lines)


def _unfold(lines: list[str], head: str) -> str:
    """The text of the key ``head`` (``    question:``) with its continuation lines joined:
    the lines after it indented further than the key itself."""
    start = next(i for i, line in enumerate(lines) if line.startswith(head))
    column = len(head) - len(head.lstrip(" -"))
    parts = [lines[start].removeprefix(head).strip()]
    for line in lines[start + 1 :]:
        if len(line) - len(line.lstrip(" ")) <= column:
            break
        parts.append(line.strip())
    return " ".join(parts)


def test_a_case_is_pretty_and_folded_to_the_terminal_and_json_is_raw(blackbox: Path) -> None:
    assert oloproof("run", cwd=blackbox).code == 1
    case = _cases(blackbox)[0]
    screen = on_terminal("inspect", "latest", "--case", case["id"], cwd=blackbox, columns=60)
    assert screen.code == 0, screen.plain
    lines = screen.lines
    assert lines[0] == f"case {case['id']} (ok)"
    # Every line fits, but for the judgment and address lines: an address is one word.
    words = [line for line in lines if line.strip()]
    assert all(len(line) <= 60 for line in words if "sha256:" not in line)
    assert len(lines) > 40  # folded, not a few long JSON lines
    question = case["input"]["question"]
    assert len(question) + len("    question: ") > 60
    assert _unfold(lines, "    question:") == question
    gold = case["expected"]["gold_context"][0]["text"]
    assert _unfold(lines, "      - text:") == gold
    for criterion in CRITERIA:
        assert any(line.startswith(f"    {criterion}: ") for line in lines)

    piped = oloproof("inspect", "latest", "--case", case["id"], cwd=blackbox)
    assert piped.code == 0 and not piped.out.startswith("{")
    assert all(len(line) <= 100 for line in piped.lines if "sha256:" not in line)

    raw = oloproof("inspect", "latest", "--case", case["id"], "--json", cwd=blackbox)
    detail = json.loads(raw.out)
    assert (detail["case_id"], detail["input"], detail["expected"], detail["metadata"]) == (
        case["id"],
        case["input"],
        case["expected"],
        case["metadata"],
    )
    assert set(detail["verdicts"]) == set(CRITERIA)


def _failed_on(report: dict, criterion: str) -> set[str]:
    """Cases of ``inspect --failures --json`` that errored or whose verdict on ``criterion``
    is a failure, a zero or missing."""
    out = set()
    for detail in report["failed"]:
        verdict = detail["verdicts"].get(criterion)
        if detail["status"] == "errored" or (
            verdict is not None
            and (
                verdict["s"] in ("fail", "missing")
                or (verdict["s"] == "value" and verdict["v"] == 0)
            )
        ):
            out.add(detail["case_id"])
    return out


def test_failures_are_filtered_by_criterion(blackbox: Path) -> None:
    assert oloproof("run", cwd=blackbox).code == 1
    every = json.loads(oloproof("inspect", "latest", "--failures", "--json", cwd=blackbox).out)
    total = len(_cases(blackbox))
    citations = _failed_on(every, "citations_valid")
    answers = _failed_on(every, "answer_correct")
    assert citations and answers and citations != answers
    for criterion, expected in (("citations_valid", citations), ("answer_correct", answers)):
        shown = oloproof("inspect", "latest", "--failures", "--criterion", criterion, cwd=blackbox)
        assert shown.code == 0, shown.err
        assert shown.lines[0] == (
            f"{len(expected)} of {total} cases failed, errored or did not finish on {criterion}"
        )
        listed = {line for line in shown.lines if re.fullmatch(r"[a-z0-9_]+", line)}
        assert listed == expected
        # Only the chosen criterion's verdicts are printed under each case.
        others = [c for c in CRITERIA if c != criterion]
        assert not any(line.startswith(tuple(f"  {c}:" for c in others)) for line in shown.lines)
        as_json = json.loads(
            oloproof(
                "inspect", "latest", "--failures", "--criterion", criterion, "--json", cwd=blackbox
            ).out
        )
        assert {d["case_id"] for d in as_json["failed"]} == expected
    both = oloproof(
        "inspect",
        "latest",
        "--failures",
        *("--criterion", "citations_valid", "--criterion", "answer_correct"),
        cwd=blackbox,
    )
    assert both.lines[0].startswith(f"{len(citations | answers)} of {total} cases")
    typo = oloproof(
        "inspect", "latest", "--failures", "--criterion", "citation_valid", cwd=blackbox
    )
    assert typo.code == 2 and "did you mean 'citations_valid'?" in typo.err
