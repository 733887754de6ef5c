"""A rule that no run could fail is refused as a policy mistake, through the real CLI.

The probe: 40 cases, none answered right. ``min: 0``, ``min: 0.0`` and ``max: 1`` each gave
``Gate: PASS (exit 0)``: every metric lies between 0 and 1, so no interval can fall below 0 or
rise above 1, and no run can fail such a rule. Their mirror images, which no run could pass
(``min: 1``, ``max: 0``), were already refused. Now these are too: one sentence naming the
file and the line, exit 2, nothing written. The same holds for a comparison rule whose margin
no difference can cross: two metrics between 0 and 1 never differ by more than 100 points, so
``non_inferiority`` and ``equivalence`` with ``margin: 100`` can never fail (both PASSed a
candidate 50 points worse than its baseline, exit 0), and ``superiority`` with ``margin: 100``
can never pass (it FAILed, exit 1).

A run recorded with such a rule before (by a release that accepted it) is still re-derived as
it was decided: ``verify`` reads a recorded policy as it was recorded, not as a file to check.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli.test_run_errors import project as interrupted_project
from tests.support import Result, oloproof, patterns_project, run_in_progress, runs_fields

from oloproof import events as ev
from oloproof.store import open_project_ledger

CASES = 40

NOTHING_RIGHT = [("f", "f")] * CASES
# The baseline answers the first half right, the candidate nothing: 50 points worse.
HALF_LOST = [("p" if q < CASES // 2 else "f", "f") for q in range(CASES)]

FLOOR = "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.1}\n"


def _gate(done: Result) -> tuple[int, str]:
    return done.code, next(line for line in done.lines if line.startswith("Gate:"))


def _rule(bounds: str) -> str:
    return f"version: 1\nrules:\n  - {{id: floor, metric: answer_correct, {bounds}}}\n"


def _never_fails(bounds: str) -> str:
    example = (
        "max: 0.1 allows at most 10%" if bounds == "max: 1" else "min: 0.7 asks for at least 70%"
    )
    return (
        f"{{root}}/policy.yaml, line 3: rules.0: {bounds} can never fail: every metric lies "
        f"between 0 and 1, so no run could fail it; give the bound the release needs ({example})"
    )


@pytest.mark.parametrize(
    ("bounds", "named"),
    [
        ("min: 0", "min: 0"),
        ("min: 0.0", "min: 0"),
        ("max: 1", "max: 1"),
        ("max: 1.0", "max: 1"),
        ("min: 0, max: 1", "min: 0 with max: 1"),
    ],
)
def test_a_release_rule_no_run_could_fail_is_refused(
    tmp_path: Path, bounds: str, named: str
) -> None:
    root = patterns_project(tmp_path / "p", NOTHING_RIGHT, policy=_rule(bounds))
    done = oloproof("run", cwd=root)
    assert (done.code, done.err) == (2, f"error: {_never_fails(named).format(root=root)}\n"), (
        done.out
    )
    assert not (root / ".oloproof").exists()


def test_a_bound_beside_one_that_can_fail_is_kept(tmp_path: Path) -> None:
    # min: 0 says nothing here, but the rule's max still can fail: the rule is not vacuous.
    root = patterns_project(tmp_path / "p", NOTHING_RIGHT, policy=_rule("min: 0, max: 0.5"))
    done = oloproof("run", cwd=root)
    assert _gate(done) == (0, "Gate: PASS (exit 0)"), done.out + done.err
    # The lowest floor that can fail does, on this system.
    (root / "policy.yaml").write_text(FLOOR)
    done = oloproof("run", cwd=root)
    assert _gate(done) == (1, "Gate: BLOCK (exit 1)"), done.out + done.err


def _compare_rule(test: str, margin: int) -> str:
    return (
        f"version: 1\nrules:\n  - {{id: r, metric: answer_correct, {test}: {{margin: {margin}}}}}\n"
    )


def _comparisons(root: Path) -> int:
    with open_project_ledger(root, create=False) as ledger:
        return sum(1 for _ in ledger.events(ev.COMPARISON))


@pytest.mark.parametrize(
    ("test", "sentence"),
    [
        (
            "non_inferiority",
            "non_inferiority with margin 100 can never fail: two metrics between 0 and 1 never "
            "differ by more than 100 points; give the largest loss you would accept (margin: 5 "
            "is 5 points)",
        ),
        (
            "equivalence",
            "equivalence with margin 100 can never fail: two metrics between 0 and 1 never "
            "differ by more than 100 points; give the largest difference you would call none "
            "(margin: 5 is 5 points)",
        ),
        (
            "superiority",
            "superiority with margin 100 can never pass: two metrics between 0 and 1 never "
            "differ by more than 100 points; give the gain you need (margin: 0 asks for any)",
        ),
    ],
)
def test_a_comparison_rule_whose_margin_no_difference_can_cross_is_refused(
    tmp_path: Path, test: str, sentence: str
) -> None:
    root = patterns_project(tmp_path / "p", HALF_LOST, policy=FLOOR)
    base = oloproof("run", "--config", "baseline.yaml", cwd=root)
    cand = oloproof("run", cwd=root)
    assert (base.code, cand.code) == (0, 1), base.out + cand.out
    base_id, cand_id = base.lines[0].split()[1], cand.lines[0].split()[1]
    (root / "compare.yaml").write_text(_compare_rule(test, 100))
    done = oloproof("compare", cand_id, base_id, "--policy", "compare.yaml", cwd=root)
    assert (done.code, done.err) == (
        2,
        f"error: {root}/compare.yaml, line 3: rules.0: {sentence}\n",
    )
    assert _comparisons(root) == 0
    if test == "non_inferiority":
        # A margin the 50-point loss does cross fails the candidate.
        (root / "compare.yaml").write_text(_compare_rule(test, 10))
        done = oloproof("compare", cand_id, base_id, "--policy", "compare.yaml", cwd=root)
        assert (done.code, done.lines[-1]) == (1, "Gate: BLOCK (exit 1)"), done.out + done.err


# An earlier release, which accepted every rule: the refusals are switched off. It runs the
# candidate with `min: 0`, and compares it with the baseline by `non_inferiority: {margin: 100}`.
EARLIER = """
import sys
from pathlib import Path

import oloproof
from oloproof import config
from oloproof.store import open_project_ledger

config.Rule._decides = lambda rule: None
config.CompareRule._decides = lambda rule: None
base = oloproof.evaluate(Path("baseline.yaml"))
cand = oloproof.evaluate(Path("oloproof.yaml"))
with open_project_ledger(Path(".")) as ledger:
    compared = oloproof.compare_runs(
        ledger, cand.run_id, base.run_id, policy_path=Path("compare.yaml")
    )
print(cand.run_id, cand.exit_code, compared.exit_code)
"""


def test_runs_and_comparisons_recorded_with_such_rules_still_verify(tmp_path: Path) -> None:
    root = patterns_project(tmp_path / "p", HALF_LOST, policy=_rule("min: 0"))
    (root / "compare.yaml").write_text(_compare_rule("non_inferiority", 100))
    earlier = subprocess.run(
        [sys.executable, "-c", EARLIER], cwd=root, capture_output=True, text=True, check=False
    )
    assert earlier.returncode == 0, earlier.stdout + earlier.stderr
    cand_id, run_exit, compare_exit = earlier.stdout.split()
    assert (run_exit, compare_exit) == ("0", "0")  # what the vacuous rules decided then
    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out + verified.err
    assert "re-derived 2 decision(s), 0 diagnosis(es) and 1 comparison(s)" in verified.out
    shown = oloproof("inspect", cand_id, cwd=root)
    assert shown.code == 0, shown.out + shown.err
    assert "Gate: PASS (exit 0)" in shown.lines


# A release before the checks on a policy's level and block_on (and before at least one rule
# was required of a comparison policy): a run decided at level 0.4 with a gate that blocks on
# INSUFFICIENT_EVIDENCE alone, compared by a policy of no rules.
OLDER = """
import sys
from pathlib import Path

import oloproof
from oloproof import config
from oloproof.store import open_project_ledger

config._checked_block_on = config._a_level = config._at_least_one = lambda value: value
base = oloproof.evaluate(Path("baseline.yaml"))
cand = oloproof.evaluate(Path("oloproof.yaml"))
with open_project_ledger(Path(".")) as ledger:
    compared = oloproof.compare_runs(
        ledger, cand.run_id, base.run_id, policy_path=Path("compare.yaml")
    )
print(cand.run_id, cand.exit_code, compared.exit_code)
"""


def test_policies_recorded_before_their_level_and_gate_checks_still_verify(
    tmp_path: Path,
) -> None:
    policy = (
        "version: 1\nconfidence_level: 0.4\nblock_on: [INSUFFICIENT_EVIDENCE]\nrules:\n"
        "  - {id: floor, metric: answer_correct, min: 0.9}\n"
    )
    root = patterns_project(tmp_path / "p", HALF_LOST, policy=policy)
    (root / "compare.yaml").write_text("version: 1\nrules: []\n")
    older = subprocess.run(
        [sys.executable, "-c", OLDER], cwd=root, capture_output=True, text=True, check=False
    )
    assert older.returncode == 0, older.stdout + older.stderr
    cand_id, run_exit, compare_exit = older.stdout.split()
    assert (run_exit, compare_exit) == ("0", "0")  # a FAIL its gate let through, then
    assert oloproof("run", cwd=root).code == 2  # today's release refuses the policy
    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out + verified.err
    assert "re-derived 2 decision(s), 0 diagnosis(es) and 1 comparison(s)" in verified.out
    shown = oloproof("inspect", cand_id, cwd=root)
    assert "Gate: PASS (exit 0)" in shown.lines, shown.out


# An earlier release, which accepted `min: 0`, running the CLI: the refusal is switched off.
SHOUTS = "version: 1\nrules:\n  - {{id: floor, metric: shouts, {bounds}}}\n"
EARLIER_CLI = """
from oloproof import config

config.Rule._decides = lambda rule: None
from oloproof.cli.main import main

main()
"""


def test_a_run_an_earlier_release_started_with_such_a_rule_can_be_resumed(
    tmp_path: Path,
) -> None:
    # The resume read the policy file through today's refusals and stopped with one. Its
    # advice, a bound that can fail, then met "policy.yaml changed since the run started":
    # the run could never be finished, though `inspect` offered the --resume.
    root = interrupted_project(tmp_path, ["fast", *[f"slow{i}" for i in range(5)]])
    (root / "policy.yaml").write_text(SHOUTS.format(bounds="min: 0"))
    (root / "earlier.py").write_text(EARLIER_CLI)
    assert oloproof("run", cwd=root).code == 2  # today's release refuses the policy
    with run_in_progress(root, "sleeping\n", {"TOY_SLEEP": "120"}, command=("earlier.py",)):
        pass  # Ctrl-C once the first slow case sleeps: the fast one is finished
    run_id = oloproof("runs", cwd=root).lines[0].split()[0]
    assert runs_fields(root, run_id)[3:5] == ["INTERRUPTED", "PASS (exit 0)"]
    assert (
        f"finish it with: oloproof run --resume {run_id}"
        in oloproof("inspect", run_id, cwd=root).out
    )
    # The policy file edited since is still refused: the run is decided by what it recorded.
    (root / "policy.yaml").write_text(SHOUTS.format(bounds="min: 0.7"))
    edited = oloproof("run", "--resume", run_id, cwd=root)
    assert (edited.code, edited.out) == (2, ""), edited.err
    assert edited.err.startswith(f"error: {root}/policy.yaml changed since {run_id} started")

    (root / "policy.yaml").write_text(SHOUTS.format(bounds="min: 0"))
    resumed = oloproof("run", "--resume", run_id, cwd=root)
    assert resumed.code == 0, resumed.out + resumed.err
    # The other lines of stderr are the slow cases' own ("sleeping").
    assert resumed.err.splitlines()[0] == (
        f"warning: {run_id} is decided by the policy it recorded, which this release refuses "
        f"for a new run: {_never_fails('min: 0').format(root=root)}"
    )
    assert resumed.lines[0] == f"Run {run_id} [DECIDED/COMPLETE]"
    assert "Gate: PASS (exit 0)" in resumed.lines
    assert "6 / 6 observed · 0 missing · 0 excluded" in resumed.out
    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out + verified.err
    assert "re-derived 2 decision(s), 0 diagnosis(es) and 0 comparison(s)" in verified.out
