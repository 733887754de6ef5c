"""A comparison rule on the metric of a rubric judge with ``scale: score`` is refused before
anything is written, as a release rule on it is: a judge's rule decides only once the judge is
calibrated, and ``oloproof calibrate`` measures pass/fail judges alone. A comparison an earlier
release recorded with such a rule is still read, and verified, as recorded. Real CLI, judge
on 127.0.0.1.

(Before: ``compare --policy`` with ``{id: t, metric: tone, non_inferiority: {margin: 5}}``
over two runs of such a judge decided the rule MANUAL_REVIEW (judge_not_calibrated), exit 3,
whatever the scores; under ``block_on: [FAIL]`` it passed, exit 0, the rule never checked.)
"""

from __future__ import annotations

from pathlib import Path

from tests.support import oloproof, toy_project

from oloproof.testing import ScriptedJudgeServer, score

CONFIG = """\
system: {{name: toy, version: "1", callable: app:run}}
evaluators:
  - type: rubric_judge
    criterion: tone
    rubric: Is the answer polite?
    scale: score
    provider: openai
    model: m
    base_url: {url}
    api_key_env: null
"""
POLICY = (
    "version: 1\nblock_on: [FAIL]\nrules:\n"
    "  - {id: t, metric: tone, non_inferiority: {margin: 5}}\n"
)
# What a release before the refusal did: compared without it.
EARLIER = (
    "-c",
    "import oloproof.compare as c\n"
    "c.refuse_rules_on_score_judges = lambda *args: None\n"
    "from oloproof.cli.main import main\n"
    "main()\n",
)


def two_runs(tmp_path: Path) -> tuple[Path, str, str]:
    root = toy_project(tmp_path / "p", cases=3)
    (root / "compare.yaml").write_text(POLICY)
    with ScriptedJudgeServer(default=score(0.8)) as judge:
        (root / "oloproof.yaml").write_text(CONFIG.format(url=judge.openai_base_url))
        ids = []
        for _ in range(2):
            done = oloproof("run", cwd=root)
            assert done.code == 0, done.out + done.err
            ids.append(done.lines[0].split()[1])
    return root, ids[1], ids[0]


def test_a_compare_rule_on_a_score_judge_is_refused(tmp_path: Path) -> None:
    root, cand, base = two_runs(tmp_path)
    done = oloproof("compare", cand, base, "--policy", "compare.yaml", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == (
        f"error: {root}/compare.yaml, line 4: rule 't' reads tone, a rubric judge's score "
        "(scale: score), and a rule on a judge's metric decides only once the judge is "
        "calibrated, which only a pass/fail judge can be: it would be MANUAL_REVIEW on every "
        "comparison; put the rule on a rubric judge with scale: pass_fail, calibrated with "
        "oloproof calibrate\n"
    )
    assert comparisons(root) == 0


def comparisons(root: Path) -> int:
    from oloproof.store import open_project_ledger

    with open_project_ledger(root, create=False) as ledger:
        return len(list(ledger.events("oloproof.comparison")))


def test_a_recorded_comparison_with_such_a_rule_is_verified_as_recorded(tmp_path: Path) -> None:
    root, cand, base = two_runs(tmp_path)
    made = oloproof("compare", cand, base, "--policy", "compare.yaml", cwd=root, command=EARLIER)
    assert made.code == 0, made.out + made.err
    assert comparisons(root) == 1
    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out + verified.err
