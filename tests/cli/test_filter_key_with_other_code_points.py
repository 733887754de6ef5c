"""A ``--filter`` on a metadata key that cases write with other code points (``réponse`` with
its accent composed on the command line and decomposed in the cases) is refused naming the
case, its line and both spellings, as a slice on it is (test_keys_written_with_other_code_
points); exit 2, nothing recorded.

(Before: when every case held the other spelling, the filter was refused as "no case has this
metadata key; did you mean 'metadata.réponse'?", suggesting what looked like the very key typed;
when some did, those cases were silently left out of the run, exit 0.)
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

NFC, NFD = unicodedata.normalize("NFC", "réponse"), unicodedata.normalize("NFD", "réponse")


def _project(root: Path, keys: list[str]) -> Path:
    toy_project(root)
    cases = (
        {"id": f"c{i}", "input": {"q": "x"}, "expected": {"answer": "x"}, "metadata": {k: "a"}}
        for i, k in enumerate(keys)
    )
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return root


@pytest.mark.parametrize("keys", [[NFD, NFD], [NFC, NFD]], ids=["every case", "one case"])
def test_a_filter_on_a_lookalike_key_is_refused(tmp_path: Path, keys: list[str]) -> None:
    root = _project(tmp_path / "p", keys)
    done = oloproof("run", "--filter", f"metadata.{NFC}=a", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    at = keys.index(NFD)
    assert done.err == (
        f"error: --filter metadata.{NFC}: case 'c{at}' (line {at + 1}) has the metadata key "
        "'re\\u0301ponse', the same text as 'r\\xe9ponse' that the filter reads, written with "
        "other Unicode code points (they look alike wherever they are shown), so it would read "
        "no value there; write both the same way\n"
    )
    assert not (root / ".oloproof").exists()
