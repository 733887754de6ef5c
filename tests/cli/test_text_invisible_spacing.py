"""`contains` and `equals` read a no-break or thin space as a space, and pass over characters
that take no place on the page (a zero-width space, a word joiner, a byte order mark, a soft
hyphen). Real CLI run in a subprocess.

(Before: an answer "Refunds take 14<U+00A0>days." failed `contains` "14 days", and
"Paris<U+200B>" failed `equals` "Paris"; `inspect --case` showed the same text on both sides
and the verdict `failed`.)
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, write_project

APP = """
from oloproof import system

@system(name="echo", version="1")
def run(case):
    return {"answer": case["say"]}
"""

CONFIG = """\
system: {name: echo, version: "1", callable: app:run}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: contains}
  - {type: equals, criterion: equals}
"""

# id: (what the system answers, the expected text, the criteria that pass)
CASES: dict[str, tuple[str, str, set[str]]] = {
    "no_break_space": ("14\u00a0days", "14 days", {"contains", "equals"}),
    "narrow_no_break_space": ("14\u202fdays", "14 days", {"contains", "equals"}),
    "ideographic_space": ("New\u3000York", "New York", {"contains", "equals"}),
    "zero_width_space": ("Paris\u200b", "Paris", {"contains", "equals"}),
    "trailing_zero_width_after_space": ("Paris \u200b", "Paris", {"contains", "equals"}),
    "byte_order_mark": ("\ufeffParis", "Paris", {"contains", "equals"}),
    "word_joiner": ("Pa\u2060ris", "Paris", {"contains", "equals"}),
    "soft_hyphen": ("co\u00adoperate", "cooperate", {"contains", "equals"}),
    # Other characters still count: a line break is not a space, a letter is not invisible.
    "line_break": ("14\ndays", "14 days", set()),
    "different_word": ("14 weeks", "14 days", set()),
}


def test_spacing_that_reads_the_same_compares_the_same(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=CONFIG,
        policy="version: 1\nrules:\n  - {id: r, metric: equals, min: 0.5}\n",
        cases=[
            {"id": case_id, "input": {"say": said}, "expected": {"answer": exp}}
            for case_id, (said, exp, _) in CASES.items()
        ]
        # Only invisible characters: nothing to look for, as an empty expected text.
        + [{"id": "invisible_label", "input": {"say": "x"}, "expected": {"answer": "\u200b"}}],
    )
    result = oloproof("run", cwd=root)
    assert result.code in (0, 1, 3), result.err
    for case_id, (_, _, passing) in CASES.items():
        shown = oloproof("inspect", "latest", "--case", case_id, "--json", cwd=root)
        assert shown.code == 0, shown.err
        verdicts = json.loads(shown.out)["verdicts"]
        got = {name: v["s"] for name, v in verdicts.items()}
        want = {name: "pass" if name in passing else "fail" for name in ("contains", "equals")}
        assert got == want, case_id
    shown = oloproof("inspect", "latest", "--case", "invisible_label", "--json", cwd=root)
    assert json.loads(shown.out)["verdicts"]["contains"] == {
        "s": "excluded",
        "r": "empty_expected_value",
    }
