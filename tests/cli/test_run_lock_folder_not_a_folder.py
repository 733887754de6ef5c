"""With a file, or a link to nothing, where `.oloproof/locks/` (the folder of the runs' lock
files) should be, `run` was refused, rightly, but said `its lock file …/locks/run_….lock could
not be written (file exists)`: there was no such file, and nothing said what to remove. The
sentence now names what stands in the folder's place and what to do, exit 2, nothing recorded.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.support import oloproof, toy_project


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = toy_project(tmp_path_factory.mktemp("sound") / "p", cases=30)
    assert oloproof("run", cwd=root).code == 0
    return root


@pytest.mark.parametrize("stand_in", ["file", "dangling link"])
def test_a_locks_folder_that_is_no_folder_is_named(
    sound: Path, tmp_path: Path, stand_in: str
) -> None:
    root = tmp_path / "p"
    shutil.copytree(sound, root, ignore=shutil.ignore_patterns("lock.mdb"))
    locks = root / ".oloproof" / "locks"
    shutil.rmtree(locks)
    if stand_in == "file":
        locks.write_text("x")
        what = "not a folder"
    else:
        locks.symlink_to(tmp_path / "gone")
        what = f"a link to {tmp_path / 'gone'}, which does not exist"
    listed = oloproof("runs", cwd=root).out

    done = oloproof("run", cwd=root)

    assert (done.code, done.out) == (2, ""), done.out
    assert done.err.startswith("error: cannot write run run_"), done.err
    assert done.err.endswith(
        f"could not be written ({locks} is {what}: remove it, and it is made again); "
        "nothing was recorded\n"
    ), done.err
    assert "file exists" not in done.err
    assert oloproof("runs", cwd=root).out == listed
