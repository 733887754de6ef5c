"""`oloproof qrels-to-cases` reads a qid as a reader sees it (a leading byte-order mark is not
part of it, nor is how an accented letter is encoded), refuses a qrels file none of whose qids
is a case, and keeps a judgment of "not relevant" so that the retrieval metrics tell a query
judged to have nothing relevant from one never judged. Real CLI in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, write_project

CASES = [
    {"id": "1", "input": {"q": "a"}},
    {"id": "2", "input": {"q": "b"}},
    {"id": "caf\u00e9", "input": {"q": "c"}},
]


def _cases(root: Path) -> Path:
    root.mkdir(exist_ok=True)
    path = root / "cases.jsonl"
    path.write_text("".join(json.dumps(case) + "\n" for case in CASES), encoding="utf-8")
    return path


def _relevant(path: Path) -> dict[str, object]:
    return {
        case["id"]: case.get("expected", {}).get("relevant")
        # Lines end at "\n" alone, as the dataset reads them: a label may hold U+2028.
        for case in map(json.loads, path.read_text(encoding="utf-8").strip("\n").split("\n"))
    }


def test_a_leading_byte_order_mark_is_not_part_of_the_first_qid(tmp_path: Path) -> None:
    # The mark made the first qid "\ufeff1": "Labelled 0 cases", case 1 said to have no qrels.
    cases = _cases(tmp_path)
    (tmp_path / "q.txt").write_bytes(b"\xef\xbb\xbf1 0 d1 1\n2 0 d2 2\n")
    done = oloproof("qrels-to-cases", "q.txt", cwd=tmp_path)
    assert done.code == 0, done.err
    assert done.lines == ["Labelled 2 cases in cases.jsonl; 1 have no qrels"]
    assert _relevant(cases) == {
        "1": [{"doc_id": "d1", "grade": 1}],
        "2": [{"doc_id": "d2", "grade": 2}],
        "caf\u00e9": None,
    }


def test_a_qid_matches_the_case_id_it_reads_as(tmp_path: Path) -> None:
    # "cafe" and a combining accent is the case "café" to anyone reading either.
    cases = _cases(tmp_path)
    (tmp_path / "q.txt").write_text("cafe\u0301 0 d3 1\n", encoding="utf-8")
    done = oloproof("qrels-to-cases", "q.txt", cwd=tmp_path)
    assert done.code == 0, done.err
    assert done.lines == ["Labelled 1 cases in cases.jsonl; 2 have no qrels"]
    assert _relevant(cases)["caf\u00e9"] == [{"doc_id": "d3", "grade": 1}]
    # The case keeps the id it was written with.
    assert '"id":"caf\u00e9"' in cases.read_text(encoding="utf-8")


def test_qrels_of_which_no_qid_is_a_case_are_refused(tmp_path: Path) -> None:
    cases = _cases(tmp_path)
    before = cases.read_bytes()
    (tmp_path / "q.txt").write_text("9 0 d1 1\n10 0 d1 1\n11 0 d1 1\n12 0 d2 0\n")
    done = oloproof("qrels-to-cases", "q.txt", "--output", "out.jsonl", cwd=tmp_path)
    assert (done.code, done.out, done.err) == (
        2,
        "",
        "error: q.txt: none of its 4 qids is a case id in cases.jsonl (qids '10', '11', '12' "
        "and 1 more; case ids '1', '2', 'caf\u00e9'): is it the qrels file of these cases?\n",
    )
    assert cases.read_bytes() == before
    assert not (tmp_path / "out.jsonl").exists()


APP = """
from oloproof import Passage, Retrieval, current_case, system

@system(name="ranker", version="1", records=("retrieval/v1",))
def run(case):
    current_case().retrieval(Retrieval(candidates=(Passage(doc_id="d1"), Passage(doc_id="d2"))))
    return {"answer": "x"}
"""


def test_a_query_judged_to_have_nothing_relevant_keeps_its_judgments(tmp_path: Path) -> None:
    # Judged only with grade 0 (or below), a query got "relevant": [], which the metrics read as
    # never labelled (no_relevance_labels) rather than judged to hold nothing relevant.
    root = write_project(
        tmp_path / "p",
        app=APP,
        config="system: {name: ranker, version: '1', callable: app:run}\n"
        "evaluators:\n  - {type: recall, k: 2}\n",
        policy="version: 1\nrules:\n  - {id: r, metric: recall_at_2, min: 0.5}\n",
        cases=CASES,
    )
    (root / "q.txt").write_text("1 0 d1 0\n1 0 d9 -1\n2 0 d2 2\n2 0 d1 0\n")
    done = oloproof("qrels-to-cases", "q.txt", cwd=root)
    assert done.code == 0, done.err
    assert done.lines == [
        "Labelled 2 cases in cases.jsonl; 1 have no qrels",
        "1 of them judge no document relevant (none graded above 0): the retrieval metrics "
        "exclude such a case as all_labels_non_relevant",
    ]
    assert _relevant(root / "cases.jsonl") == {
        "1": [{"doc_id": "d1", "grade": 0}, {"doc_id": "d9", "grade": -1}],
        "2": [{"doc_id": "d2", "grade": 2}, {"doc_id": "d1", "grade": 0}],
        "caf\u00e9": None,
    }
    assert oloproof("run", cwd=root).code in (0, 1, 3)
    exported = oloproof("export", "latest", "--format", "jsonl", "--output", "t", cwd=root)
    assert exported.code == 0, exported.err
    rows = [json.loads(line) for line in (root / "t" / "verdicts.jsonl").read_text().splitlines()]
    assert {row["case_id"]: (row["status"], row["reason"]) for row in rows} == {
        "1": ("excluded", "all_labels_non_relevant"),
        "2": ("value", None),
        "caf\u00e9": ("excluded", "no_relevance_labels"),
    }


def test_fields_and_lines_are_split_as_trec_eval_splits_them(tmp_path: Path) -> None:
    # trec_eval splits on ASCII white space: a docno holding a no-break space, or a line
    # separator of Unicode's, is one field, where Python's split() made it two (the line was
    # refused as having 5 fields, or cut in two).
    cases = _cases(tmp_path)
    (tmp_path / "q.txt").write_text(
        "1 0 d\u00a0one 1\n1 0 d\u2028two 2\r\n2\t0\td3\t1\n", encoding="utf-8"
    )
    done = oloproof("qrels-to-cases", "q.txt", cwd=tmp_path)
    assert done.code == 0, done.err
    assert _relevant(cases)["1"] == [
        {"doc_id": "d\u00a0one", "grade": 1},
        {"doc_id": "d\u2028two", "grade": 2},
    ]
    assert _relevant(cases)["2"] == [{"doc_id": "d3", "grade": 1}]


def test_a_byte_order_mark_inside_the_file_is_refused(tmp_path: Path) -> None:
    # Two files joined with cat: the second one's mark opened a line, and its qid "\ufeff2"
    # matched no case, reported as `1 qids in q.txt match no case: 2`; case 2 lost its label.
    cases = _cases(tmp_path)
    before = cases.read_bytes()
    (tmp_path / "q.txt").write_bytes(b"1 0 d1 1\n\xef\xbb\xbf2 0 d2 1\n")
    done = oloproof("qrels-to-cases", "q.txt", cwd=tmp_path)
    assert done.code == 2
    assert done.err == (
        "error: q.txt, line 2: a byte-order mark (U+FEFF) inside the file, left there by "
        "joining files: remove it\n"
    )
    assert cases.read_bytes() == before


def test_qids_that_match_no_case_are_shown_as_written(tmp_path: Path) -> None:
    _cases(tmp_path)
    (tmp_path / "q.txt").write_text("1 0 d1 1\n2\u200b 0 d2 1\n", encoding="utf-8")
    done = oloproof("qrels-to-cases", "q.txt", cwd=tmp_path)
    assert done.code == 0, done.err
    assert "1 qids in q.txt match no case: '2\\u200b'" in done.out
