"""A run or a comparison without a policy gates nothing: its JUnit `gate` test says so.

`oloproof run` with no `policy:` (and `oloproof compare` without `--policy`) decide no gate
and exit 0, as documented. Their JUnit file held a `gate` testcase that passed, so a CI
system's test report listed "gate: passed" for a gate that was never decided; a comparison
that paired no case at all read the same. The test is now skipped, saying no policy gated it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support import TOY_CONFIG, oloproof, toy_project

NO_POLICY = TOY_CONFIG.replace("policy: policy.yaml\n", "")


def _gate(path: Path) -> ET.Element:
    root = ET.parse(path).getroot()
    (gate,) = [case for case in root.iter("testcase") if case.get("name") == "gate"]
    return gate


def _said_skipped(gate: ET.Element) -> None:
    assert [child.tag for child in gate] == ["skipped"]
    assert gate[0].get("message") == "no policy: no gate was decided (exit 0)"


def test_a_run_without_a_policy_skips_the_gate_test(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", config=NO_POLICY, cases=2)
    done = oloproof("run", "--junit", "j.xml", cwd=root)
    assert done.code == 0, done.out + done.err
    assert "[NO_POLICY/COMPLETE]" in done.lines[0]
    _said_skipped(_gate(root / "j.xml"))
    suite = ET.parse(root / "j.xml").getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("1", "0", "1")


def test_a_comparison_without_a_policy_skips_the_gate_test(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", config=NO_POLICY, cases=2)
    runs = []
    for _ in range(2):
        done = oloproof("run", "--no-cache", cwd=root)
        assert done.code == 0, done.out + done.err
        runs += re.findall(r"run_[0-9A-Z]{26}", done.lines[0])
    done = oloproof("compare", *runs, "--junit", "c.xml", cwd=root)
    assert done.code == 0, done.out + done.err
    _said_skipped(_gate(root / "c.xml"))
