"""The case page stars a retrieved passage exactly when the run's retrieval metrics count it
relevant: in their ``relevance_unit``, with a grade above 0.

A staged system returns the passages each case lists, and the runs are made through the real
CLI, then the case pages are fetched from `oloproof view` over HTTP. Under ``relevance_unit:
chunk``, another chunk of the relevant chunk's document stands first: the metrics count only
the labelled chunk, where reading by document would star both. A passage labelled with grade
0 was judged not relevant, and is not starred. The positions starred are checked against the
metrics' own verdicts for the case (precision and reciprocal rank at 3, read back with
``inspect --json``). Retrieval metrics that read relevance in different units leave no one
answer, and the page says so rather than star by one of them.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.support import INPUT_RETRIEVE, oloproof, write_project
from tests.view.support import RUN_ID, fetch, serving

APP = (
    """
from oloproof import Passage, Retrieval, rag_system


@rag_system(name="listed", version="1", depth=3, top_k=2, index_version="l")
class Listed:"""
    + INPUT_RETRIEVE
    + """
    def generate(self, input, context):
        return {"answer": context.items[0].text if context.items else "none"}
"""
)

CONFIG = """\
system:
  name: listed
  version: "1"
  rag: {{object: app:Listed, depth: 3, top_k: 2, index_version: l}}
dataset: cases.jsonl
evaluators:
  - {{type: contains, criterion: answer_correct, field: answer, expected_field: answer}}
  - {{type: precision, k: 3, relevance_unit: {unit}}}
  - {{type: mrr, k: 3, relevance_unit: {unit}}}
{more}"""

NEIGHBOUR = {"doc_id": "kb-01", "chunk_id": "c1", "text": "Refunds are paid to the card."}
THE_CHUNK = {"doc_id": "kb-01", "chunk_id": "c2", "text": "Reviewed in two business days."}
OTHER = {"doc_id": "kb-09", "chunk_id": "c1", "text": "Audit trail."}


def case(case_id: str, candidates: list[dict[str, str]], relevant: list[Any]) -> dict[str, Any]:
    return {
        "id": case_id,
        "input": {"question": case_id, "candidates": candidates},
        "expected": {"answer": "two business days", "relevant": relevant},
    }


CASES = [
    # The relevant chunk is third, behind another chunk of its document.
    case("neighbour", [NEIGHBOUR, OTHER, THE_CHUNK], [{"doc_id": "kb-01", "chunk_id": "c2"}]),
    # kb-09 was judged and found not relevant (grade 0); the chunk of kb-01 is (grade 2).
    case(
        "judged_not_relevant",
        [OTHER, THE_CHUNK],
        [
            {"doc_id": "kb-09", "chunk_id": "c1", "grade": 0},
            {"doc_id": "kb-01", "chunk_id": "c2", "grade": 2},
        ],
    ),
]


def project(root: Path, unit: str, more: str = "") -> tuple[Path, str]:
    """The project written and run: (its folder, the run id)."""
    write_project(
        root,
        app=APP,
        config=CONFIG.format(unit=unit, more=more),
        policy="version: 1\nrules: []\n",
        cases=CASES,
    )
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    return root, RUN_ID.findall(done.lines[0])[0]


def ranking_rows(page: str) -> list[tuple[int, str, str]]:
    """(rank, passage, relevant) of each row of the case page's ranking table."""
    table = re.search(r'<table class="ranking-table">(.*?)</table>', page, re.S)
    assert table, page
    rows = []
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(1), re.S):
        cells = [html.unescape(c).strip() for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
        if cells:
            rows.append((int(cells[0]), cells[1], cells[3]))
    return rows


def starred(page: str) -> list[int]:
    """The positions the ranking picture stars."""
    return [int(n) for n in re.findall(r'<text class="label relevant"[^>]*>(\d+)\. ★', page)]


def metric_positions(root: Path, run_id: str, case_id: str) -> tuple[float, float]:
    """(relevant passages within the top 3, the first one's position) by the case's own
    verdicts on precision_at_3 and mrr_at_3."""
    done = oloproof("inspect", run_id, "--case", case_id, "--json", cwd=root)
    assert done.code == 0, done.err
    verdicts = json.loads(done.out)["verdicts"]
    return verdicts["precision_at_3"]["v"] * 3, 1 / verdicts["mrr_at_3"]["v"]


@pytest.fixture(scope="module")
def by_chunk(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return project(tmp_path_factory.mktemp("chunk") / "p", "chunk")


@pytest.mark.parametrize(
    ("case_id", "rows"),
    [
        (
            "neighbour",
            [
                (1, "kb-01 chunk c1", "no"),
                (2, "kb-09 chunk c1", "no"),
                (3, "kb-01 chunk c2", "yes"),
            ],
        ),
        ("judged_not_relevant", [(1, "kb-09 chunk c1", "no"), (2, "kb-01 chunk c2", "yes")]),
    ],
)
def test_a_passage_is_starred_when_the_metrics_count_it_relevant(
    by_chunk: tuple[Path, str], case_id: str, rows: list[tuple[int, str, str]]
) -> None:
    root, run_id = by_chunk
    with serving(root) as url:
        status, page = fetch(f"{url}/runs/{run_id}/cases/{case_id}")
    assert status == 200
    assert ranking_rows(page) == rows
    relevant = [n for n, _, shown in rows if shown == "yes"]
    assert starred(page) == relevant
    assert metric_positions(root, run_id, case_id) == (len(relevant), relevant[0])
    assert "★ marks a passage the retrieval metrics count as relevant (by chunk)" in page


def test_by_document_every_chunk_of_a_relevant_document_is_starred(tmp_path: Path) -> None:
    root, run_id = project(tmp_path / "p", "document")
    with serving(root) as url:
        page = fetch(f"{url}/runs/{run_id}/cases/neighbour")[1]
        graded = fetch(f"{url}/runs/{run_id}/cases/judged_not_relevant")[1]
    # kb-01 is one unit by document, which the metrics count once, at its first position.
    assert ranking_rows(page) == [
        (1, "kb-01 chunk c1", "yes"),
        (2, "kb-09 chunk c1", "no"),
        (3, "kb-01 chunk c2", "yes, counted at 1"),
    ]
    assert starred(page) == [1, 3]
    assert metric_positions(root, run_id, "neighbour") == (1, 1)
    assert starred(graded) == [2]
    assert metric_positions(root, run_id, "judged_not_relevant") == (1, 2)
    assert "★ marks a passage the retrieval metrics count as relevant (by document)" in page


def test_metrics_in_two_units_star_nothing_and_say_why(tmp_path: Path) -> None:
    more = "  - {type: hit_rate, k: 3, relevance_unit: document}\n"
    root, run_id = project(tmp_path / "p", "chunk", more=more)
    with serving(root) as url:
        page = fetch(f"{url}/runs/{run_id}/cases/neighbour")[1]
    assert starred(page) == []
    assert [shown for _, _, shown in ranking_rows(page)] == ["—", "—", "—"]
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))
    assert (
        "No passage is starred: the retrieval metrics read relevance in different units "
        "(precision_at_3: chunk, mrr_at_3: chunk, hit_rate_at_3: document), so whether a "
        "passage is relevant has no one answer." in text
    )
