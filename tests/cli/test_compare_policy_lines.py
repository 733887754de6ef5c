"""Every refusal of a comparison policy names its file, line and field, through the real CLI.

The probe: a rule on a metric neither run measures was refused (exit 2) as ``FILE: rule 'b'
reads metric 'ech', …``, with no line, where the release policy's same refusal and every other
error of the file gave one. So were ``judge:`` minimums on a metric no judge gives, and a file
whose top level is not a mapping. Each now says ``FILE, line N: KEY: …``; the refusals that
already did are held to it here. Nothing is recorded for any of them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, write_project

APP = """
from oloproof import system


@system(name="toy", version="1")
def run(case):
    return {"answer": case["q"]}
"""
CONFIG = """\
system: {name: toy, version: "1", callable: "app:run"}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
"""
RULE = "  - {id: a, metric: echo, non_inferiority: {margin: 5}}\n"
JUDGE_HINT = (
    " (judge: belongs to rules on a groundedness, citation support, answer or rubric judge's "
    "metric)"
)

REFUSALS = {
    "unknown metric": (
        "version: 1\nrules:\n"
        + RULE
        + "  - id: b\n    non_inferiority: {margin: 5}\n    metric: ech\n",
        "line 6: rules.1.metric: rule 'b' reads metric 'ech', which neither run measures "
        "(metrics: echo)",
    ),
    "judge on a metric no judge gives": (
        "version: 1\nrules:\n  - id: a\n    metric: echo\n    non_inferiority: {margin: 5}\n"
        "    judge: {min_sensitivity: 0.8}\n",
        "line 6: rules.0.judge: rule 'a' sets judge: minimums, but its metric 'echo' is not an "
        "LLM judge's" + JUDGE_HINT,
    ),
    "a list": (
        "# rules, as a list\n- " + RULE.strip(" -"),
        "line 2: (top level): expected a policy mapping (version, rules), found a list",
    ),
    "nothing": (
        "# to be written\n",
        "line 1: (top level): expected a policy mapping (version, rules), found nothing",
    ),
    "text": (
        "version 1\n",
        "line 1: (top level): expected a policy mapping (version, rules), found text",
    ),
    # Refusals that named their line already.
    "version": ("version: 2\nrules:\n" + RULE, "line 1: version: Input should be 1"),
    "no rules key": ("version: 1\n", "line 1: rules: required key is missing"),
    "no rules": (
        "version: 1\nrules: []\n",
        "line 2: rules: a policy needs at least one rule (with none, any run would pass)",
    ),
    "level": (
        "version: 1\nconfidence_level: 0.2\nrules:\n" + RULE,
        "line 2: confidence_level: 0.2 is outside 0.5 to 0.999: an interval at that level would "
        "not mean what a gate needs (0.95 is usual)",
    ),
    # Was: "Input should be less than 1", no word of what was meant.
    "level in percent": (
        "version: 1\nconfidence_level: 95\nrules:\n" + RULE,
        "line 2: confidence_level: 95 reads as a percentage: the level is a fraction of 1, so "
        "write 0.95",
    ),
    "block_on": (
        "version: 1\nblock_on: [INSUFFICIENT_EVIDENCE]\nrules:\n" + RULE,
        "line 2: block_on: FAIL is not listed, so a rule that fails would pass the gate; list "
        "FAIL (INSUFFICIENT_EVIDENCE and MANUAL_REVIEW are yours to choose)",
    ),
    "no test": (
        "version: 1\nrules:\n  - {id: a, metric: echo}\n",
        "line 3: rules.0: give exactly one of non_inferiority, superiority or equivalence",
    ),
    "margin 100": (
        "version: 1\nrules:\n  - {id: a, metric: echo, superiority: {margin: 100}}\n",
        "line 3: rules.0: superiority with margin 100 can never pass: two metrics between 0 and "
        "1 never differ by more than 100 points; give the gain you need (margin: 0 asks for any)",
    ),
    # Was "rules.0.non_inferiority.margin: required key is missing", beside the key written
    # misspelt (test_misspelt_required_key_named).
    "unknown key": (
        "version: 1\nrules:\n  - {id: a, metric: echo, non_inferiority: {margn: 5}}\n",
        "line 3: rules.0.non_inferiority.margn: unknown key; did you mean 'margin'?",
    ),
    "repeated id": (
        "version: 1\nrules:\n" + RULE + RULE,
        "line 4: rules.1.id: rule id 'a' is also rule 0's (line 3); each rule's decision is "
        "reported by its id",
    ),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    cases = (
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(3)
    )
    root = tmp_path_factory.mktemp("lines") / "p"
    write_project(root, app=APP, config=CONFIG, policy="version: 1\n", cases=cases)
    ids = []
    for args in (("run",), ("run", "--no-cache")):
        done = oloproof(*args, cwd=root)
        assert done.code == 0, done.err
        ids.append(done.lines[0].split()[1])
    return root, ids[1], ids[0]


@pytest.mark.parametrize("name", list(REFUSALS))
def test_each_refusal_names_file_line_and_key(
    project: tuple[Path, str, str], name: str, tmp_path: Path
) -> None:
    root, cand_id, base_id = project
    text, said = REFUSALS[name]
    policy = tmp_path / "compare.yaml"
    policy.write_text(text)
    done = oloproof("compare", cand_id, base_id, "--policy", str(policy), cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == f"error: {policy}, {said}\n"
    assert "re-derived 0 decision(s), 0 diagnosis(es) and 0 comparison(s)" in (
        oloproof("verify", cwd=root).out
    )
