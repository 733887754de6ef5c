"""A cases file starting with a byte-order mark (as some editors save UTF-8) is refused at line 1
in Oloproof's words, saying what to do; exit 2, nothing recorded. Real CLI.

(Before: ``not valid JSON (Unexpected UTF-8 BOM (decode using utf-8-sig) at column 1)``,
Python's hint to a programmer.)
"""

from __future__ import annotations

from pathlib import Path

from tests.support import oloproof, toy_project


def test_a_byte_order_mark_is_said_in_words(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=2)
    cases = root / "cases.jsonl"
    cases.write_bytes(b"\xef\xbb\xbf" + cases.read_bytes())
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == (
        f"error: {cases}, line 1: not valid JSON: the line starts with a byte-order mark "
        "(U+FEFF), which some editors write at the start of a file; save the file as UTF-8 "
        "without it\n"
    )
    assert not (root / ".oloproof").exists()
