"""A module's logger (``LOG = logging.getLogger(__name__)``) and its locks (``threading.Lock()``,
``RLock``, ``Condition``, ``Semaphore``, ``Event``) are not listed as state the code fingerprint
cannot see, through the real CLI, while state it cannot read still is.

Every run that reused a result of such code said ``Not seen by the code fingerprint ...:
app.LOG: a logging.Logger object`` (and ``app.LOCK: a _thread.lock object``), a warning to
change ``system.version`` for state no answer is computed from: the line that should name a
seeded ``random.Random`` was noise in almost every project. A logger counts by its name (its
level and handlers are the process's logging setup); a lock by its type.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import answered_project, oloproof

APP = """
import logging
import random
import threading

from oloproof import system

LOG = logging.getLogger("NAME")
ROOT = logging.getLogger()
LOCK = threading.Lock()
LOCKS = (threading.RLock(), threading.Condition(), threading.Semaphore(2), threading.Event())
RNG = random.Random(1)


@system(name="s", version="1")
def answer(case):
    with LOCK, LOCKS[0]:
        LOG.info("answering %s", case["q"])
        ROOT.debug("%s", LOCKS)
        return {"answer": case["q"] + " " * (RNG.random() > 2)}
"""

NOT_SEEN = "Not seen by the code fingerprint (change system.version when they change): "


def test_loggers_and_locks_are_not_listed_and_a_new_logger_name_executes_again(
    tmp_path: Path,
) -> None:
    root = answered_project(tmp_path / "p", APP.replace("NAME", "app"), cases=2)
    first = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in first.lines, first.err

    dry = oloproof("run", "--dry-run", cwd=root)
    again = oloproof("run", cwd=root)
    assert "Cache: execution 2 hit/0 miss; judgment 2 hit/0 miss" in again.lines, again.out
    for result in (dry, again):
        unseen = [line for line in result.lines if line.startswith(NOT_SEEN)]
        assert unseen == [f"{NOT_SEEN}app.RNG: a random.Random object"], result.out

    app = root / "app.py"
    app.write_text(app.read_text().replace('getLogger("app")', 'getLogger("other")'))
    renamed = oloproof("run", "--dry-run", cwd=root)
    assert "  2 executions: constant LOG in app.py changed" in renamed.lines, renamed.out
