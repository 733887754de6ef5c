"""The viewer's pages over real projects, fetched over HTTP from `oloproof view` (a subprocess).

What each page shows is checked against what the CLI prints for the same ledger (`inspect`,
`diagnose`, `compare`), an independent path through the library.
"""

from __future__ import annotations

import html
import json
import re
import signal
from pathlib import Path
from urllib.parse import quote, urljoin

from tests.cli.test_diagnose_fresh_generations import GOLD, REUSED, once_project
from tests.cli.test_inspect_diagnosis_excluded import MANY, diagnose, inspected, many_excluded
from tests.support import oloproof
from tests.view.support import (
    HOSTILE_CONFIG,
    ODD_IDS,
    OddIdsProject,
    SupportProject,
    fetch,
    page_text,
    serving,
)

FAILED = ["money_back", "refund_review", "seat_count", "security_review"]


def _case_ids(page: str, run_id: str) -> list[str]:
    return re.findall(rf'href="/runs/{run_id}/cases/([^"]+)"', page)


def test_runs_page_lists_newest_first_with_child_runs_under_their_diagnosis(
    support_project: SupportProject, support_url: str
) -> None:
    status, page = fetch(support_url + "/")
    assert status == 200
    text = page_text(page)
    p = support_project
    assert p.run_id in text and "support-rag" in text and "slice-b-example" in text
    assert "BLOCK (exit 3)" in text and "13 answered · 0 missing" in text
    # The parent row, then its diagnosis, then the two child runs.
    order = [text.index(x) for x in (p.run_id, "diagnosis gold context", p.gold_run, p.control_run)]
    assert order == sorted(order)
    assert f'href="/diagnoses/{p.diagnosis}"' in page


def test_runs_page_filters_by_system_state_and_gate(
    support_project: SupportProject, support_url: str
) -> None:
    p = support_project
    assert p.run_id in fetch(support_url + "/?gate=BLOCK")[1]
    assert p.run_id not in fetch(support_url + "/?gate=PASS")[1]
    assert p.run_id in fetch(support_url + "/?state=COMPLETE&system=support-rag")[1]
    assert p.run_id not in fetch(support_url + "/?state=STOPPED")[1]
    assert p.run_id not in fetch(support_url + "/?system=other")[1]


def test_run_page_shows_rules_metrics_slices_and_cache(
    support_project: SupportProject, support_url: str
) -> None:
    status, page = fetch(f"{support_url}/runs/{support_project.run_id}")
    assert status == 200
    text = page_text(page)
    for line in (
        "answer-floor answer_correct INSUFFICIENT_EVIDENCE interval_overlaps_threshold",
        "citations-valid citations_valid PASS observed_failures_within_limit",
        "answer_correct 69.2% [38.5%, 91.0%]",
        "ndcg_at_6 0.866 [0.506, 0.990]",
        "citations_valid 100.0% [75.2%, 100.0%]",
        "Execution 0 hit / 13 miss · judgment 0 hit / 65 miss · generate 0 hit / 13 miss",
    ):
        assert line in text, line
    assert "Slices exploratory" in text and "too few cases" in text
    assert page.count('class="bar"') >= 5 + 2  # every metric and the two interval rules drawn
    assert 'class="threshold"' in page


def test_failures_page_lists_what_inspect_lists_and_filters(
    support_project: SupportProject, support_url: str
) -> None:
    p = support_project
    cli = oloproof("inspect", p.run_id, "--failures", cwd=p.root)
    listed = [line for line in cli.lines if line and not line.startswith(" ")][1:]
    status, page = fetch(f"{support_url}/runs/{p.run_id}/failures")
    assert status == 200
    assert sorted(_case_ids(page, p.run_id)) == sorted(listed) == FAILED
    assert "4 case(s)." in page_text(page)
    hit = fetch(f"{support_url}/runs/{p.run_id}/failures?criterion=hit_rate_at_2")[1]
    assert _case_ids(hit, p.run_id) == ["money_back"]
    billing = fetch(f"{support_url}/runs/{p.run_id}/failures?slice=metadata.topic%3Dbilling")[1]
    assert sorted(_case_ids(billing, p.run_id)) == ["money_back", "refund_review", "seat_count"]
    errored = fetch(f"{support_url}/runs/{p.run_id}/failures?kind=errored")[1]
    assert _case_ids(errored, p.run_id) == []
    both = fetch(f"{support_url}/runs/{p.run_id}/failures?criterion=answer_correct&kind=failed")
    assert sorted(_case_ids(both[1], p.run_id)) == FAILED


def test_case_page_shows_retrieval_context_citations_and_judgments(
    support_project: SupportProject, support_url: str
) -> None:
    p = support_project
    status, page = fetch(f"{support_url}/runs/{p.run_id}/cases/refund_review")
    assert status == 200
    text = page_text(page)
    assert "How soon is a refund request on an annual plan reviewed" in text
    assert "two business days" in text
    assert "answer_correct failed (not_contained)" not in text  # the reason is its own column
    assert "answer_correct failed not_contained" in text
    # The ranked retrieval: kb-01 is relevant, at rank 2, dropped by the token budget.
    assert "2 kb-01 4.0 yes token_budget" in text
    assert "top-k 2" in page and 'class="cut"' in page and "token budget 40" in text
    assert "kb-01 (rank 2, 56 tokens): token_budget" in text
    assert "kb-09: in the context" in text
    assert re.search(r'href="/a/sha256:[0-9a-f]{64}"', page)


def test_diagnosis_page_shows_labels_child_runs_and_control_beside_intervention(
    support_project: SupportProject, support_url: str
) -> None:
    p = support_project
    status, page = fetch(f"{support_url}/diagnoses/{p.diagnosis}")
    assert status == 200
    text = page_text(page)
    assert "Control: 0 of 4 passed when re-executed without the intervention" in text
    assert "Recovered under gold context: 3 of 4" in text
    assert (
        "CONTEXT_ASSEMBLY_LOSS: 2 of 4, recovered; relevant evidence within top-k was left out "
        "of the context" in text
    )
    assert "refund_review CONTEXT_ASSEMBLY_LOSS relevant_dropped_from_context" in text
    assert "seat_count GENERATION_FAILURE fails_with_gold_context" in text
    assert f'href="/runs/{p.gold_run}/cases/refund_review"' in page
    assert f'href="/runs/{p.control_run}/cases/refund_review"' in page
    # Per case: the intervention's verdict, then the control's.
    assert re.search(r"refund_review .*? 2 pass fail", text)


def test_diagnosis_page_shows_the_selected_and_excluded_lines_as_the_cli_prints_them(
    tmp_path: Path,
) -> None:
    root = many_excluded(tmp_path)
    address = diagnose(root)
    lines, _ = inspected(root, address)
    first = next(n for n, line in enumerate(lines) if line.startswith("Excluded:"))
    with serving(root) as url:
        status, page = fetch(f"{url}/diagnoses/{address}")
    assert status == 200
    assert (
        "Selected: 0 failed cases with gold context (observed; no population claim)"
        in page_text(page)
    )
    # Each Excluded line, then the ids of its cases on a line of their own, as inspect has them.
    shown = [
        html.unescape(re.sub(r"<[^>]+>", "", part))
        for item in re.findall(r'<li class="excluded">(.*?)</li>', page, re.S)
        for part in item.split("<br>")
    ]
    assert shown == [line.strip() for line in lines[first:]]
    assert " and 5 more (oloproof inspect " in shown[1] and MANY[20] not in page
    run_id = lines[first + 2].split("oloproof inspect ")[1].split()[0]
    assert f'href="/runs/{run_id}/cases/boom"' in page
    assert f'href="/runs/{run_id}/cases/{MANY[0]}"' in page


def test_diagnosis_page_says_which_generations_were_reused_as_the_cli_does(
    tmp_path: Path,
) -> None:
    root, run_id = once_project(tmp_path / "once")
    addresses = []
    for reuse in ((), ("--reuse-generations",)):
        done = oloproof("diagnose", run_id, *GOLD, *reuse, cwd=root)
        assert done.code == 0, done.out + done.err
        addresses.append(re.findall(r"^Diagnosis (sha256:[0-9a-f]{64})$", done.out, re.M)[0])
    fresh, reused = addresses
    assert REUSED in oloproof("inspect", reused, cwd=root).lines
    with serving(root) as url:
        fresh_page = fetch(f"{url}/diagnoses/{fresh}")[1]
        reused_page = fetch(f"{url}/diagnoses/{reused}")[1]
    assert "Reused:" not in fresh_page
    shown = [
        html.unescape(line) for line in re.findall(r'<li class="reused">(.*?)</li>', reused_page)
    ]
    assert shown == [REUSED]


def test_comparison_page_matrix_agrees_with_the_comparison_counts(
    support_project: SupportProject, support_url: str
) -> None:
    p = support_project
    status, page = fetch(f"{support_url}/comparisons/{p.comparison}")
    assert status == 200
    text = page_text(page)
    assert "answer_correct +75.0 points [-51.7, +99.9]" in text
    assert "3 fail→pass, 0 pass→fail" in text  # the comparison's own b and c
    flipped = re.findall(rf'href="/comparisons/{p.comparison}/cases/([^"]+)"', page)
    # In the candidate's line order, as `compare --cases` lists them.
    assert flipped == ["refund_review", "money_back", "security_review"]
    assert 'class="forest"' in page and 'class="margin"' in page
    assert "about 5 more paired cases would decide it" in text
    status, pair = fetch(f"{support_url}/comparisons/{p.comparison}/cases/refund_review")
    assert status == 200
    assert f"Baseline: {p.control_run}" in page_text(
        pair
    ) and f"Candidate: {p.gold_run}" in page_text(pair)


def test_address_page_by_prefix_shows_links_both_ways_and_verifies(
    support_project: SupportProject, support_url: str
) -> None:
    p = support_project
    status, page = fetch(f"{support_url}/a/{p.diagnosis[:15]}")
    assert status == 200
    text = page_text(page)
    assert p.diagnosis in text and "oloproof.diagnosis" in text
    assert "Its bytes hash to its address." in text
    assert "Every event it links to is stored." in text
    rederived = page_text(fetch(f"{support_url}/a/{p.diagnosis}?rederive=1")[1])
    assert "Derived again from its inputs, it is the same." in rederived
    # What a browser sends when the link is followed on the viewer's page, and when another
    # site's page makes the request (an <img> pointing at it, say).
    own = {"Sec-Fetch-Site": "same-origin"}
    assert "it is the same." in fetch(f"{support_url}/a/{p.diagnosis}?rederive=1", headers=own)[1]
    for elsewhere in ("cross-site", "same-site"):
        status, page = fetch(
            f"{support_url}/a/{p.diagnosis}?rederive=1", headers={"Sec-Fetch-Site": elsewhere}
        )
        assert status == 403 and "Derived again" not in page
        assert "another site's page asked the viewer to derive an event again" in page_text(page)
    run_event = re.search(
        r'href="/a/(sha256:[0-9a-f]{64})">sha256', fetch(f"{support_url}/runs/{p.run_id}")[1]
    )
    assert run_event
    linked = page_text(fetch(f"{support_url}/a/{run_event.group(1)}")[1])
    assert "Linked from" in linked and p.diagnosis in linked and "13 case result(s)" in linked


def test_unknown_pages_are_404_and_writes_are_refused(support_url: str) -> None:
    assert fetch(support_url + "/runs/run_00000000000000000000000000")[0] == 404
    assert fetch(support_url + "/a/sha256:" + "0" * 64)[0] == 404
    assert fetch(support_url + "/nothing/here")[0] == 404
    assert fetch(support_url + "/", method="POST")[0] == 405


def test_hostile_output_is_shown_as_text(hostile_project: tuple) -> None:
    root, run_id = hostile_project
    with serving(root) as url:
        for path in (f"/runs/{run_id}/cases/xss", f"/runs/{run_id}/failures"):
            status, page = fetch(url + path)
            assert status == 200
            assert "<script>document.title" not in page and "<img src=x" not in page
            assert "&lt;script&gt;document.title" in page or "\\u003cscript" in page
        case = fetch(url + f"/runs/{run_id}/cases/{quote('xss')}")[1]
        assert "&lt;img src=x onerror=alert(1)&gt;" in case


def _links(page: str, prefix: str) -> dict[str, str]:
    """The links of ``page`` whose address starts with ``prefix``: {text: address}."""
    found = re.findall(rf'<a href="({re.escape(prefix)}[^"]*)">([^<]*)</a>', page)
    return {html.unescape(text): html.unescape(href) for href, text in found}


def test_every_case_id_links_to_its_own_page_served_and_exported(
    odd_ids_project: OddIdsProject, tmp_path: Path
) -> None:
    p = odd_ids_project
    with serving(p.root) as url:
        failures = f"{url}/runs/{p.run_id}/failures"
        cases = _links(fetch(failures)[1], f"/runs/{p.run_id}/cases")
        comparison = f"{url}/comparisons/{p.comparison}"
        pairs = _links(fetch(comparison)[1], f"/comparisons/{p.comparison}/cases")
        assert sorted(cases) == sorted(pairs) == sorted(ODD_IDS)
        for case_id in ODD_IDS:
            for base, href in ((failures, cases[case_id]), (comparison, pairs[case_id])):
                # Resolved as a browser resolves it: "." and ".." segments are dropped.
                status, page = fetch(urljoin(base, href))
                assert status == 200, (case_id, href)
                assert f"Case {case_id} " in page_text(page), (case_id, href)
                assert f"<<{case_id}>>" in page_text(page), (case_id, href)
    site = tmp_path / "site"
    done = oloproof("view", "--export", str(site), p.run_id, p.passing_run, cwd=p.root)
    assert done.code == 0, done.err
    listed = site / "runs" / p.run_id / "failures" / "all-1.html"
    (flips,) = site.glob("comparisons/*/index.html")
    for page, prefix in ((listed, "../cases/"), (flips, "cases/")):
        files = _links(page.read_text(), prefix)
        for case_id in ODD_IDS:
            assert f"<<{case_id}>>" in page_text((page.parent / files[case_id]).read_text())


def test_serving_another_address_needs_an_explicit_flag(support_project: SupportProject) -> None:
    refused = oloproof("view", "--host", "0.0.0.0", cwd=support_project.root)
    assert refused.code == 2
    assert "refusing to serve on 0.0.0.0" in refused.err and "--allow-remote" in refused.err
    assert "Traceback" not in refused.err


CRASHING_APP = """
import os, signal, time
from pathlib import Path
from oloproof import events, system
from oloproof.store import open_project_ledger

@system(name="crashing", version="1")
def run(case):
    if case["q"].startswith("error"):
        raise RuntimeError("boom")
    if case["q"] == "pause":
        time.sleep(2.5)  # past the writer's flush interval: the cases before are written
    if case["q"] == "crash":
        # Once the writer's thread has written them, the process dies with no run end written.
        with open_project_ledger(Path.cwd(), create=False) as ledger:
            deadline = time.monotonic() + 30
            while sum(1 for _ in ledger.events(events.CASE_RESULT)) < 3:
                assert time.monotonic() < deadline, "the cases before were never written"
                time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGKILL)
    return {"answer": case["q"]}
"""


def test_a_crashed_run_counts_its_errored_cases_as_runs_does(tmp_path: Path) -> None:
    root = tmp_path / "crashing"
    root.mkdir()
    (root / "app.py").write_text(CRASHING_APP)
    questions = ["error1", "error2", "pause", "crash"]
    (root / "cases.jsonl").write_text(
        "".join(json.dumps({"id": q, "input": {"q": q}, "expected": {"answer": q}}) + "\n"
                for q in questions)
    )  # fmt: skip
    (root / "oloproof.yaml").write_text(
        HOSTILE_CONFIG.replace("hostile", "crashing") + "concurrency: 1\n"
    )
    crashed = oloproof("run", cwd=root)
    assert crashed.code == -signal.SIGKILL, crashed.err
    (listed,) = json.loads(oloproof("runs", "--json", cwd=root).out)
    assert (listed["execution_state"], listed["errored"], listed["observed"]) == (
        "INTERRUPTED", 2, 1,
    )  # fmt: skip
    assert (listed["missing"], listed["planned"]) == (3, 4)
    with serving(root) as url:
        text = page_text(fetch(url + "/")[1])
        run_text = page_text(fetch(f"{url}/runs/{listed['run_id']}")[1])
    assert "1 answered · 3 missing of 4 planned" in text
    assert "INTERRUPTED" in run_text and "1 answered · 3 missing · 4 planned" in run_text
