"""``ledger import`` of a file that is no archive is refused in one sentence, through the real
CLI: exit 2, nothing written, the file named. The sentence read `is not a oloproof archive`;
the article now agrees with the name."""

from __future__ import annotations

from pathlib import Path

from tests.support import oloproof


def test_a_file_that_is_no_archive_is_named(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    root = tmp_path / "p"
    root.mkdir()
    done = oloproof("ledger", "import", str(tmp_path / "notes.txt"), cwd=root)
    assert (done.code, done.out) == (2, "")
    assert done.err == f"error: {tmp_path / 'notes.txt'} is not an oloproof archive\n"
    assert not (root / ".oloproof").exists()
