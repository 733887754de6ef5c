"""A case id is read and typed by people: `run`, `inspect`, `compare --cases`, the JUnit and
Markdown reports print it, and `inspect --case ID` takes it back. An id holding a character that
does not show as itself (a space at either end, a zero-width space or joiner, a bidi mark, a
soft hyphen, a byte-order mark, a tab or an escape, a no-break space) prints as another id, so
the cases file is refused when it is read: exit 2, one sentence naming the file, the line, the
field and the character by its code point, and no ledger made. Real CLI in a subprocess.

(Before: "c1 " beside "c1", or "c\u200b1" beside "c1", loaded as two cases that print the same;
`inspect --case c1` could reach only one of them, and a comparison with a dataset that spells
the id plainly paired nothing and reported the case missing.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, write_project

APP = """
from oloproof import system

@system(name="echo", version="1")
def run(case):
    return {"answer": case["q"]}
"""
CONFIG = """\
system: {name: echo, version: "1", callable: app:run}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
"""
POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"


def _project(root: Path, *ids: str) -> Path:
    return write_project(
        root,
        app=APP,
        config=CONFIG,
        policy=POLICY,
        cases=({"id": i, "input": {"q": "x"}, "expected": {"answer": "x"}} for i in ids),
    )


UNSEEN = "which does not show where the id is printed"
# The id on line 2 (after a plain "c1"), and what the sentence says of it after the field.
REFUSED: dict[str, tuple[str, str]] = {
    "trailing space": ("c1 ", f"'c1 ' ends with U+0020 SPACE, {UNSEEN} (it looks like 'c1')"),
    "leading space": (" c1", f"' c1' starts with U+0020 SPACE, {UNSEEN} (it looks like 'c1')"),
    "zero width space": (
        "c\u200b1",
        f"'c\\u200b1' holds U+200B ZERO WIDTH SPACE (character 2), {UNSEEN} (it looks like 'c1')",
    ),
    "zero width joiner between letters": (
        "c\u200d1",
        f"'c\\u200d1' holds U+200D ZERO WIDTH JOINER (character 2), {UNSEEN} (it looks like 'c1')",
    ),
    "word joiner": (
        "c1\u2060",
        f"'c1\\u2060' ends with U+2060 WORD JOINER, {UNSEEN} (it looks like 'c1')",
    ),
    "byte-order mark": (
        "\ufeffc1",
        f"'\\ufeffc1' starts with U+FEFF ZERO WIDTH NO-BREAK SPACE, {UNSEEN} (it looks like 'c1')",
    ),
    "soft hyphen": (
        "c\u00ad1",
        f"'c\\xad1' holds U+00AD SOFT HYPHEN (character 2), {UNSEEN} (it looks like 'c1')",
    ),
    "right-to-left override": (
        "c\u202e1",
        f"'c\\u202e1' holds U+202E RIGHT-TO-LEFT OVERRIDE (character 2), {UNSEEN} "
        "(it looks like 'c1')",
    ),
    "left-to-right isolate": (
        "c\u20661",
        f"'c\\u20661' holds U+2066 LEFT-TO-RIGHT ISOLATE (character 2), {UNSEEN} "
        "(it looks like 'c1')",
    ),
    "tab": (
        "c\t1",
        f"'c\\t1' holds U+0009 CHARACTER TABULATION (character 2), {UNSEEN} (it looks like 'c1')",
    ),
    "newline": ("c1\n", f"'c1\\n' ends with U+000A LINE FEED, {UNSEEN} (it looks like 'c1')"),
    "escape": (
        "c\x1b[0m1",
        f"'c\\x1b[0m1' holds U+001B ESCAPE (character 2), {UNSEEN} (it looks like 'c[0m1')",
    ),
    "hangul filler": (
        "c\u31641",
        f"'c\u31641' holds U+3164 HANGUL FILLER (character 2), {UNSEEN} (it looks like 'c1')",
    ),
    "no-break space": (
        "c\u00a01",
        "'c\\xa01' holds U+00A0 NO-BREAK SPACE (character 2), which prints as a plain space "
        "(the id looks like 'c 1'); write a plain space instead",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_an_id_that_prints_as_another_is_refused(tmp_path: Path, name: str) -> None:
    case_id, said = REFUSED[name]
    root = _project(tmp_path / "p", "c1", case_id)
    result = oloproof("run", cwd=root)
    fix = "" if "plain space" in said else "; write the id without it"
    sentence = f"error: {root}/cases.jsonl, line 2: field 'id' {said}{fix}\n"
    assert (result.code, result.err) == (2, sentence), name
    assert not (root / ".oloproof").exists()


def test_qrels_to_cases_refuses_the_same_ids(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", "c1", "c1 ")
    (root / "q.txt").write_text("c1 0 d1 1\n", encoding="utf-8")
    done = oloproof("qrels-to-cases", "q.txt", cwd=root)
    assert (done.code, done.err) == (
        2,
        f"error: cases.jsonl, line 2: field 'id' 'c1 ' ends with U+0020 SPACE, {UNSEEN} "
        "(it looks like 'c1'); write the id without it\n",
    )


# Spaces inside an id, letters of any script (in NFC), emoji, and emoji joined into one by a
# zero-width joiner (a technologist, a heart on fire), which shows as the emoji it makes.
ACCEPTED = ("refund policy 1", "caf\u00e9", "\U0001f525", "\U0001f469\u200d\U0001f4bb dev",
            "\u2764\ufe0f\u200d\U0001f525", "\u0645\u0631\u062d\u0628\u0627")  # fmt: skip


def test_ids_that_show_as_they_are_run_and_can_be_typed_back(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", *ACCEPTED)
    run = oloproof("run", cwd=root)
    assert run.code == 0, run.err
    for case_id in ACCEPTED:
        shown = oloproof("inspect", "latest", "--case", case_id, cwd=root)
        assert shown.code == 0, shown.err
        assert shown.lines[0] == f"case {case_id} (ok)"


def test_two_ids_apart_only_by_a_joiner_between_emoji_are_one_id(tmp_path: Path) -> None:
    # Where the pair is no emoji of its own, a terminal shows the two emoji side by side.
    root = _project(tmp_path / "p", "\U0001f525\U0001f525", "\U0001f525\u200d\U0001f525")
    result = oloproof("run", cwd=root)
    assert (result.code, result.err) == (
        2,
        f"error: {root}/cases.jsonl, line 2: case id '\\U0001f525\\u200d\\U0001f525' is the "
        "same text as '\\U0001f525\\U0001f525' on line 1, written with other Unicode code "
        "points (they look alike wherever they are shown); write both the same way, or rename "
        "one\n",
    )
    assert not (root / ".oloproof").exists()
