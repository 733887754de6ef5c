"""A case that failed some of its repeats is listed wherever failures are, through the real CLI.

The probe: six cases run with ``--repeats 3``; c2's model is wrong on one call in three (its
combined value is 0.667). A ``kind: observed_count`` rule with ``max_failures: 0`` counted it
as a failure and FAILed (exit 1), yet ``inspect RUN --failures`` said "0 of 6 cases failed,
errored or did not finish", the JUnit cases suite showed c2 as a passing test, and the viewer's
failures pages did not list it: a FAILed gate with no failing case anywhere. Now every one of
them lists c2, with how many of its repeats failed (``answer_correct: failed in 1 of 3
repeats``), and the count of failing cases each shows is the count the rule read.

Which cases failed, and how often, is read off the patterns here, not from Oloproof.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from tests.support import FLAKY_APP, oloproof, write_project

# Each call of a case takes the next step of its pattern: p right, f wrong. One call per repeat.
PATTERNS = {"q1": "ppp", "q2": "pfp", "q3": "ppp", "q4": "fff", "q5": "ppp", "q6": "ffp"}
CONFIG = """\
system: {name: flaky, version: "1", callable: "app:answer"}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
policy: policy.yaml
concurrency: 1
"""
POLICY = (
    "version: 1\nrules:\n"
    "  - {id: never-wrong, metric: answer_correct, kind: observed_count, max_failures: 0}\n"
)


def _failing() -> dict[str, str]:
    """By hand: each case some repeat failed, and how it reads among the problems."""
    words = {}
    for question, steps in PATTERNS.items():
        failed = steps.count("f")
        if failed == len(steps):
            words[f"c{question[1:]}"] = "failed"
        elif failed:
            words[f"c{question[1:]}"] = f"failed in {failed} of {len(steps)} repeats"
    return words


FAILING = _failing()


@pytest.fixture(scope="module")
def repeated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = write_project(
        tmp_path_factory.mktemp("failed") / "p",
        app=FLAKY_APP.format(patterns=PATTERNS),
        config=CONFIG,
        policy=POLICY,
        cases=[
            {"id": f"c{q[1:]}", "input": {"question": q}, "expected": {"answer": "yes"}}
            for q in PATTERNS
        ],
    )
    done = oloproof("run", "--repeats", "3", "--junit", "junit.xml", "--junit-cases", cwd=root)
    assert done.code == 1, done.out + done.err
    return root, done.lines[0].split()[1]


def test_the_count_rule_reads_the_cases_listed(repeated: tuple[Path, str]) -> None:
    root, run_id = repeated
    (rule,) = json.loads(oloproof("inspect", run_id, "--json", cwd=root).out)["rules"]
    assert (rule["outcome"], rule["reason"]) == ("FAIL", "observed_failures_exceed_limit")
    assert rule["detail"]["failures"] == len(FAILING) == 3


def test_inspect_failures_lists_a_case_that_failed_some_repeats(
    repeated: tuple[Path, str],
) -> None:
    root, run_id = repeated
    for args in ((), ("--criterion", "answer_correct")):
        done = oloproof("inspect", run_id, "--failures", *args, cwd=root)
        assert done.code == 0, done.err
        on = " on answer_correct" if args else ""
        blocks = done.out.rstrip("\n").split("\n\n")
        # Was: "0 of 6 cases failed, errored or did not finish", and c4 alone with --criterion.
        assert blocks[0] == f"{len(FAILING)} of 6 cases failed, errored or did not finish{on}"
        listed = {b.splitlines()[0]: b.splitlines()[-1] for b in blocks[1:]}
        assert listed == {case: f"  answer_correct: {word}" for case, word in FAILING.items()}
    shown = json.loads(oloproof("inspect", run_id, "--failures", "--json", cwd=root).out)
    assert [d["case_id"] for d in shown["failed"]] == sorted(FAILING)


def test_junit_fails_each_case_that_failed_some_repeats(repeated: tuple[Path, str]) -> None:
    root, _ = repeated
    suites = ET.parse(root / "junit.xml").getroot().findall("testsuite")
    cases = next(s for s in suites if s.get("name", "").endswith(": cases"))
    assert (cases.get("tests"), cases.get("failures"), cases.get("errors")) == ("6", "3", "0")
    failures = {t.get("name"): t.find("failure") for t in cases.findall("testcase")}
    assert {name: f.get("message") for name, f in failures.items() if f is not None} == {
        case: f"answer_correct: {word}" for case, word in FAILING.items()
    }


def test_the_viewer_lists_the_same_cases(repeated: tuple[Path, str], tmp_path: Path) -> None:
    root, run_id = repeated
    site = tmp_path / "site"
    done = oloproof("view", "--export", str(site), run_id, cwd=root)
    assert done.code == 0, done.err
    folder = site / "runs" / run_id / "failures"
    pages = {page.name: page.read_text() for page in folder.glob("*.html")}

    def listed(page: str) -> list[str]:
        return re.findall(r'href="\.\./cases/([^"]+)\.html"', page)

    # Unfiltered, failed on the criterion, and of the kind failed: the same three cases.
    for name in ("all-1.html", "criterion-answer_correct-1.html", "kind-failed-1.html"):
        assert listed(pages[name]) == sorted(FAILING), name
    assert listed(pages["kind-errored-1.html"]) == listed(pages["kind-missing-1.html"]) == []
    run_page = (site / "runs" / run_id / "index.html").read_text()
    assert f"{len(FAILING)} case(s) failed, errored or are missing a verdict" in run_page
