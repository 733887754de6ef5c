"""A count of failures is refused on a graded metric, through the real CLI.

The probe: the support_rag example with a ``kind: observed_count`` rule (``max_failures: 0``) on
``ndcg_at_6``. The rule counted every case below 1 as a failure and FAILed (exit 1, ``failures:
3``), while ``inspect RUN --failures``, the JUnit cases and the viewer listed one case for
ndcg_at_6, the one at 0: the two cases whose relevant passage ranked second (nDCG 0.631) were
counted and shown nowhere. A graded metric (a value from 0 to 1 per case: recall, precision,
MRR, nDCG, a rubric judge's score) has no "failed" case to count; whatever line the rule drew
would be one the user did not write. Such a rule is now refused before anything runs (exit 2,
the file and line, nothing written), saying what to write instead. A count on a pass/fail
metric is unchanged, and every case it counts is listed.

Which cases fail is read off the ranks the cases list, not from Oloproof.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support import oloproof, write_project

APP = """
from oloproof import Passage, Retrieval, current_case, system

@system(name="ranker", version="1", records=("retrieval/v1",))
def run(case):
    ranked = tuple(Passage(doc_id=d, text=d) for d in case["ranked"])
    current_case().retrieval(Retrieval(query="q", depth=3, candidates=ranked))
    return {"answer": "x"}
"""

CONFIG = """\
system: {name: ranker, version: "1", callable: app:run}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: hit_rate, k: 3}
  - {type: mrr, k: 3}
"""

# Where the one relevant passage (d1) ranks: first (MRR 1), second (MRR 0.5), nowhere (MRR 0).
RANKED = {"first": ["d1", "x", "y"], "second": ["x", "d1", "y"], "nowhere": ["x", "y", "z"]}


def project(root: Path, rule: str) -> Path:
    return write_project(
        root,
        app=APP,
        config=CONFIG,
        policy=f"version: 1\nrules:\n  - {rule}\n",
        cases=(
            {
                "id": case_id,
                "input": {"ranked": ranked},
                "expected": {"relevant": [{"doc_id": "d1"}]},
            }
            for case_id, ranked in RANKED.items()
        ),
    )


def test_a_count_on_a_graded_metric_is_refused(tmp_path: Path) -> None:
    # Was: exit 1, "never-late FAIL observed_failures_exceed_limit" on 2 failures (second,
    # nowhere), with only "nowhere" listed by --failures.
    root = project(
        tmp_path / "p", "{id: never-late, metric: mrr_at_3, kind: observed_count, max_failures: 0}"
    )
    done = oloproof("run", cwd=root)
    assert (done.code, done.err) == (
        2,
        f"error: {root}/policy.yaml, line 3: rule 'never-late' counts failures of mrr_at_3, but "
        "mrr_at_3 is graded (a value from 0 to 1 per case) and no case of it simply fails; give "
        "its mean a floor (min: 0.8 asks for at least 0.8), or count the failures of a "
        "pass/fail metric (hit_rate fails a case with no relevant passage in the top k; a "
        "rubric judge with scale: pass_fail fails a case it rejects)\n",
    ), done.out
    assert not (root / ".oloproof").exists()


def test_a_count_on_a_pass_fail_metric_lists_every_case_it_counts(tmp_path: Path) -> None:
    root = project(
        tmp_path / "p",
        "{id: always-found, metric: hit_rate_at_3, kind: observed_count, max_failures: 0}",
    )
    done = oloproof("run", "--junit", "junit.xml", "--junit-cases", cwd=root)
    assert done.code == 1, done.out + done.err
    run_id = done.lines[0].split()[1]
    assert "│ always-found │ hit_rate_at_3 │ FAIL     │ observed_failures_exceed_limit │" in (
        done.lines
    )
    # By hand: only "nowhere" has no relevant passage in the top 3.
    listed = oloproof("inspect", run_id, "--failures", cwd=root)
    assert listed.code == 0, listed.err
    assert listed.lines[0] == "1 of 3 cases failed, errored or did not finish"
    assert re.findall(r"^(\S+)$", listed.out, re.M) == ["nowhere"]
    assert "  hit_rate_at_3: failed" in listed.lines
    failing = [
        (case.get("name"), failure.get("message"))
        for case in ET.parse(root / "junit.xml").getroot().iter("testcase")
        if case.get("classname") == "oloproof.cases"
        and (failure := case.find("failure")) is not None
    ]
    assert failing == [("nowhere", "hit_rate_at_3: failed; mrr_at_3: failed")]
