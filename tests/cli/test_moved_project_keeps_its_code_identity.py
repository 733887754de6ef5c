"""A project whose code holds a path built from ``__file__`` (``HERE = Path(__file__).parent``,
``os.path.join(os.path.dirname(__file__), ...)``) keeps its code identity when the folder is
moved, through the real CLI: it resumes there and reuses its cache, as a moved project does.

The absolute path was part of the code fingerprint: ``run --resume`` in the moved folder said
``error: the system changed since run_… started (its code or settings differ)`` (exit 2), and a
new run there executed every case again. A path inside the project now counts relative to the
project folder; which file it names still counts, and a path outside the project counts whole.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import answered_project, oloproof

APP = """
import os
import signal
import time
from pathlib import Path

from oloproof import system

HERE = Path(__file__).parent
PROMPT = HERE / "prompt.txt"
TEXT = os.path.join(os.path.dirname(__file__), "prompt.txt")
SHARED = HERE.parent / "shared.txt"


@system(name="s", version="1")
def answer(case):
    if case["q"] == "q2" and (HERE / "armed").exists():
        (HERE / "armed").unlink()
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(3600)  # never finishes: the interrupted run leaves it behind
    with open(TEXT) as text:
        prompt = PROMPT.read_text() + text.read() + READ_SHARED
    return {"answer": case["q"] + " " * (len(prompt) - len(prompt))}
"""

NOT_SEEN = "Not seen by the code fingerprint (change system.version when they change): "


def _project(root: Path, shared: bool) -> Path:
    read = "SHARED.read_text()" if shared else '""'
    root = answered_project(root, APP.replace("READ_SHARED", read), cases=4)
    (root / "prompt.txt").write_text("Answer briefly.\n")
    (root / "other.txt").write_text("Answer at length.\n")
    (root.parent / "shared.txt").write_text("Shared.\n")
    return root


def test_a_moved_project_resumes_and_reuses_its_cache(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", shared=False)
    (root / "armed").touch()
    stopped = oloproof("run", cwd=root)
    assert stopped.code == 130, stopped.out + stopped.err
    run_id = stopped.err.split("--resume ")[1].split()[0]

    (tmp_path / "elsewhere").mkdir()
    moved = root.rename(tmp_path / "elsewhere" / "p")
    resumed = oloproof("run", "--resume", run_id, cwd=moved)
    assert resumed.code != 2, resumed.out + resumed.err
    assert resumed.lines[0].startswith(f"Run {run_id} [DECIDED/COMPLETE]"), resumed.out

    again = oloproof("run", cwd=moved)
    assert "Cache: execution 4 hit/0 miss; judgment 4 hit/0 miss" in again.lines, again.out
    # The files it reads are still said to be unseen, as the docs say, whatever names them.
    said = f"{NOT_SEEN}files it opens or reads while it runs (it uses open, read_text)"
    assert said in again.lines, again.out

    # Another file named: the path counts, relative to the project.
    app = moved / "app.py"
    app.write_text(app.read_text().replace('HERE / "prompt.txt"', 'HERE / "other.txt"'))
    dry = oloproof("run", "--dry-run", cwd=moved)
    assert "  4 executions: constant PROMPT in app.py changed" in dry.lines, dry.out


def test_a_path_outside_the_project_still_counts_whole(tmp_path: Path) -> None:
    (tmp_path / "here").mkdir()
    root = _project(tmp_path / "here" / "p", shared=True)
    first = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/4 miss; judgment 0 hit/4 miss" in first.lines, first.err

    (tmp_path / "there").mkdir()
    (tmp_path / "there" / "shared.txt").write_text("Other shared text.\n")
    moved = root.rename(tmp_path / "there" / "p")
    dry = oloproof("run", "--dry-run", cwd=moved)
    assert "  4 executions: constant SHARED in app.py changed" in dry.lines, dry.out
