"""The citation judge counts an answer citing ids with no context recorded against the system.

The probe: a system records its citations on every case but its context only where its
retriever worked; on 20 of 101 cases it answered from nowhere citing `kb-999` and recorded no
context. `citation_support_judge` excluded those 20 (`no_context_recorded`):
`citations_supported` read `80 / 80 observed · 0 missing · 21 excluded`, the fabricated
citations out of the metric, as `citation_validity` did before its version 3. An answer that
cites ids claims a context the judge must read; with none recorded the claim cannot be checked,
so the judgment is missing now, made without a call. An answer citing nothing is still excluded.
So is missing (`no_context_text`, excluded before) one citing a passage recorded without its
text: nothing recorded can show what the passage says.

The change is the citation judge's own (its version 6); the other judges keep version 5, so an
upgrade re-judges only its cases: checked by a run that the release before made (the citation
judge at version 5), killed midway. Its resume is refused naming both versions, and a new run
takes the groundedness judgments it made from the cache and asks the citation judge again.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from scipy.stats import beta
from tests.cli.test_citations_without_context_count_against import APP
from tests.support import metric_of, oloproof, start_run, write_project

from oloproof.evaluators.judges import CitationSupportJudge
from oloproof.testing import ScriptedJudgeServer, verdict

JUDGE = """\
    provider: openai
    model: passes-all
    base_url: {url}
    api_key_env: JUDGE_KEY
    max_retries: 0
"""
CONFIG = """\
system: {{name: citer, version: "1", callable: "app:citer"}}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - type: citation_support_judge
{judge}"""
BOTH = CONFIG + "  - type: groundedness_judge\n{judge}"
POLICY = "version: 1\nrules:\n  - {id: cited, metric: citations_supported, min: 0.5}\n"
ENV = {"JUDGE_KEY": "judge-key-0123456789"}

# The release before: today's code with the citation judge at version 5.
CITATION_JUDGE_5 = """
from oloproof.evaluators import judges

judges.CitationSupportJudge.VERSION = 5
from oloproof.cli.main import main

main()
"""


def _project(root: Path, url: str, config: str, cases: list[dict[str, object]]) -> Path:
    return write_project(
        root,
        app=APP,
        config=config.format(judge=JUDGE.format(url=url)),
        policy=POLICY,
        cases=cases,
    )


def _cases(fallback: int, count: int = 101) -> list[dict[str, object]]:
    return [{"id": f"c{n}", "input": {"n": n, "fallback": fallback}} for n in range(count)]


def test_cited_ids_without_a_context_are_missing(tmp_path: Path) -> None:
    # c0 cites nothing: excluded; c1..c20 cite without a context: missing.
    with ScriptedJudgeServer(default=verdict(True)) as server:
        root = _project(tmp_path / "p", server.openai_base_url, CONFIG, _cases(fallback=21))
        done = oloproof("run", cwd=root, env=ENV)
        asked = len(server.requests)
    row = next(line for line in done.lines if "citations_supported" in line and "observed" in line)
    # Was: 80 / 80 observed · 0 missing · 21 excluded.
    assert "80 / 80 observed · 20 missing · 1 excluded" in row, done.out + done.err
    assert asked == 80  # the missing judgments were made without a call
    report = json.loads(oloproof("inspect", "latest", "--json", cwd=root).out)
    metric = metric_of(report, "citations_supported")
    assert metric["missing_reasons"] == {"no_context_recorded": 20}, metric
    assert metric["excluded_reasons"] == {"no_citations": 1}, metric
    # The lower bound counts the 20 against the system: scipy's Clopper-Pearson of 80 / 100.
    assert metric["lower"] == pytest.approx(beta.ppf(0.025, 80, 21), abs=1e-9), metric
    failures = oloproof("inspect", "latest", "--failures", cwd=root)
    assert "c7" in failures.out and "no_context_recorded" in failures.out, failures.out


def test_a_cited_passage_recorded_without_its_text_is_missing(tmp_path: Path) -> None:
    cases = _cases(fallback=0, count=10)
    for case in cases[:2]:
        case["input"]["textless"] = True  # type: ignore[index]
    with ScriptedJudgeServer(default=verdict(True)) as server:
        root = _project(tmp_path / "p", server.openai_base_url, CONFIG, cases)
        done = oloproof("run", "--json", cwd=root, env=ENV)
        asked = len(server.requests)
    metric = metric_of(json.loads(done.out), "citations_supported")
    # Was: 8 observed, 2 excluded (no_context_text), the unchecked citations out of sight.
    assert (metric["observed"], metric["missing"], metric["excluded"]) == (8, 2, 0), metric
    assert metric["missing_reasons"] == {"no_context_text": 2}, metric
    assert asked == 8


def test_an_upgrade_asks_the_citation_judge_again_and_no_other(tmp_path: Path) -> None:
    with ScriptedJudgeServer(default=verdict(True)) as server:
        root = _project(tmp_path / "p", server.openai_base_url, BOTH, _cases(0, count=6))
        before = oloproof("run", cwd=root, env=ENV, command=("-c", CITATION_JUDGE_5))
        assert before.code == 3, before.out + before.err  # the judge is not calibrated
        asked = len(server.requests)
        again = oloproof("run", cwd=root, env=ENV)
        asked = len(server.requests) - asked
    assert again.code == 3, again.out + again.err
    # The groundedness judgments are reused; the citation judge, at another version, is asked.
    assert "Cache: execution 6 hit/0 miss; judgment 6 hit/6 miss" in again.lines, again.out
    assert asked == 6


def test_a_run_the_release_before_left_is_refused_naming_both_versions(tmp_path: Path) -> None:
    cases = _cases(0, count=3)
    cases[0]["input"]["hold"] = True  # type: ignore[index]
    with ScriptedJudgeServer(default=verdict(True)) as server:
        root = _project(tmp_path / "p", server.openai_base_url, BOTH, cases)
        proc = start_run(root, "holding\n", env=ENV, command=("-c", CITATION_JUDGE_5))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        run_id = oloproof("runs", cwd=root).lines[0].split()[0]
        resumed = oloproof("run", "--resume", run_id, cwd=root, env=ENV)
    assert (resumed.code, resumed.out) == (2, "")
    # Was: the evaluators changed since the run started (the user changed none).
    assert resumed.err == (
        f"error: {run_id} was started by an earlier release of oloproof, whose judges' code "
        f"(version 5) read the judges' replies otherwise than this one's (version {CitationSupportJudge.VERSION}), so its "
        "cases left cannot be judged alike with those it finished; start a new run instead: "
        "oloproof run\n"
    )


def test_a_labels_example_citing_without_a_context_is_refused_at_its_line(
    tmp_path: Path,
) -> None:
    examples = [
        {
            "id": f"e{n}",
            "input": {"question": f"How long? ({n})"},
            "output": {"answer": "14 days."},
            "context": [{"doc_id": "kb-1", "text": "Refunds take 14 days."}],
            "citations": ["kb-1"],
            "label": True,
        }
        for n in range(3)
    ]
    del examples[2]["context"]  # was skipped as an exclusion, the human's label unread
    with ScriptedJudgeServer(default=verdict(True)) as server:
        root = _project(tmp_path / "p", server.openai_base_url, CONFIG, _cases(0, count=2))
        labels = root / "labels.jsonl"
        labels.write_text("".join(json.dumps(example) + "\n" for example in examples))
        done = oloproof(
            "calibrate",
            "--evaluator",
            "citations_supported",
            "--labels",
            "labels.jsonl",
            cwd=root,
            env=ENV,
        )
        asked = len(server.requests)
    assert (done.code, done.out, asked) == (2, "", 0), done.out + done.err
    assert done.err.startswith(
        "error: labels.jsonl, line 3: the judge 'citations_supported' would "
        "give this example no verdict without asking its model (no_context_recorded), "
        "so it cannot measure the judge"
    ), done.err
    assert not (root / ".oloproof").exists()
