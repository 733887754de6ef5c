"""A project in a folder whose path Python cannot decode (bytes that are not UTF-8, such as
`proj\\xff` on Linux) is refused in one sentence naming the ledger, through the real CLI.

The probe: `oloproof run` in `proj\\xff` ended in Python's traceback (`UnicodeEncodeError:
'utf-8' codec can't encode character '\\udcff' ... surrogates not allowed`, from LMDB's open),
exit 1 as if a rule had failed, leaving an empty `.oloproof` behind. LMDB takes its folder as
UTF-8 text and the ledger records paths as text, so such a folder cannot hold a ledger: the
command now says so, exit 2, naming the folder with its escape, and writes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.support import oloproof, toy_project


def test_a_project_folder_of_undecodable_name_is_refused(tmp_path: Path) -> None:
    root = toy_project(tmp_path / os.fsdecode(b"proj\xff"))
    done = oloproof("run", cwd=root)
    assert "Traceback" not in done.err  # was UnicodeEncodeError's traceback, exit 1
    assert done.code == 2, done.out + done.err
    assert done.err == (
        f"error: the ledger at {tmp_path}/proj\\udcff/.oloproof cannot be opened: its path "
        "holds bytes that are not UTF-8 text (written here as \\udcXX); rename the folder\n"
    )
    assert not (root / ".oloproof").exists()
