"""The progress line of ``oloproof run`` on a terminal (stderr): done, rate, time left, tally.

``cases ━━━━━━━━━━━━━━━━━━━━━ 120/300 · 41.3 cases/s · 0:00:04 left · 12 failed · 3 errored``

A case is *failed* when any criterion failed (a fail, or a graded value of 0) and *errored* when
its execution errored; the counts are of cases finished so far. The line is drawn only on a
terminal and is cleared when the run ends, so the report below it reads as it does in a pipe.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

# Imported only when a run draws its progress line (run_cmd imports this module late).
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from oloproof.events import is_failed


class LiveTally:
    """The ``Progress`` callback ``execute_cases`` calls, with the per-case hook it looks for."""

    def __init__(self, bar: Progress, task: TaskID) -> None:
        self._bar = bar
        self._task = task
        self.failed = 0
        self.errored = 0

    def case_done(self, body: Mapping[str, Any]) -> None:
        if body["status"] == "errored":
            self.errored += 1
        elif any(is_failed(v) for v in body["verdicts"].values()):
            self.failed += 1

    def __call__(self, done: int, total: int) -> None:
        self._bar.update(
            self._task, completed=done, total=total, failed=self.failed, errored=self.errored
        )


@contextmanager
def progress_line(total: int) -> Iterator[LiveTally]:
    """A transient progress line on stderr, yielding the callback that moves it."""
    columns = (
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("· {task.fields[rate]}", markup=False),
        TextColumn("· {task.fields[eta]}", markup=False),
        TextColumn("· {task.fields[failed]} failed · {task.fields[errored]} errored", markup=False),
    )
    with _RateProgress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("cases", total=total, failed=0, errored=0, rate="", eta="")
        yield LiveTally(bar, task)


def _rate_and_eta(speed: float | None, remaining: float | None) -> tuple[str, str]:
    if not speed:
        return "— cases/s", "— left"
    left = int((remaining or 0) / speed)
    hours, rest = divmod(left, 3600)
    return f"{speed:.1f} cases/s", f"{hours}:{rest // 60:02d}:{rest % 60:02d} left"


class _RateProgress(Progress):
    """rich's Progress with the rate and the time left worked out as each frame is drawn."""

    def get_renderables(self) -> Any:
        for task in self.tasks:
            task.fields["rate"], task.fields["eta"] = _rate_and_eta(task.speed, task.remaining)
        return super().get_renderables()
