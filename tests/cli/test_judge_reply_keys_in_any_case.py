"""A judge's reply is read by its keys as a model reads them, in any case.

The probe: the citation judge's reply ``{"verdict": "pass", "Unsupported": ["kb-1"], ...}``
names a citation the model found unsupported, under a capitalised key. Only the exact key
``unsupported`` was read, so the reply read as a plain pass (20 / 20 passed), where the same
reply in lower case is no verdict (it says both that the citations hold and that one does not).
Keys are now read as a model reads them (any case, full-width, invisible characters left out):
the reply is ``unparseable_reply``, and ``{"Verdict": "fail", ...}`` reads as the fail it gives
(judge code version 8).
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_citation_judge_contradicting_reply import _judged


def test_unsupported_ids_under_a_capitalised_key_are_read(tmp_path: Path) -> None:
    reply = {"verdict": "pass", "Unsupported": ["kb-1"], "reason": "all supported"}
    metric, code = _judged(tmp_path, reply)
    # Was: 20 / 20 observed and passed, the flagged citation unread.
    assert (metric["observed"], metric["missing"]) == (0, 20), metric
    assert metric["missing_reasons"] == {"unparseable_reply": 20}, metric
    assert code == 3


def test_a_capitalised_verdict_reads_as_given(tmp_path: Path) -> None:
    reply = {"Verdict": "fail", "UNSUPPORTED": ["kb-1"], "Reason": "not said there"}
    metric, _ = _judged(tmp_path, reply)
    assert (metric["observed"], metric["successes"], metric["missing"]) == (20, 0, 0), metric
