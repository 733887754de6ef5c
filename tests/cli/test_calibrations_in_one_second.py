"""The calibration a judge's rule uses is the last one `calibrate` recorded, whatever the clock
says, through the real CLI.

The probe: three calibrations of one judge within one second (labels A, then B, then A again)
under a clock that reads the same second throughout. The calibration's time was kept to the
second, so the third was the first one's very event: storing it again was a no-op, `calibrate`
printed the first's address, and the run's rule went on using the second (labels B), the
middle one. Now each calibration is stamped to the microsecond and later than the judge's last
one in the ledger, so each `calibrate` records a new event, and the rule uses the third.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import oloproof, serving_judge_gate

# `oloproof` under a clock stopped at one instant: every calibration made in the same second
# (the same microsecond, even).
FROZEN_CLOCK = """
import datetime

from oloproof.cli.main import command

STOPPED = datetime.datetime(2026, 12, 6, 12, 0, 0, 250000, tzinfo=datetime.UTC)


class Stopped(datetime.datetime):
    @classmethod
    def now(cls, tz=None):
        return STOPPED if tz is not None else STOPPED.replace(tzinfo=None)


datetime.datetime = Stopped
command()
"""


def test_the_last_of_three_calibrations_in_one_second_is_used(tmp_path: Path) -> None:
    with serving_judge_gate(tmp_path / "p") as (root, _):
        lines = (root / "labels.jsonl").read_text().splitlines(keepends=True)
        (root / "a.jsonl").write_text("".join(lines[18:22]))
        (root / "b.jsonl").write_text("".join(lines[:30]))
        env = {"JUDGE_GATE_KEY": "test-key"}
        made = []
        for labels in ("a.jsonl", "b.jsonl", "a.jsonl"):
            done = oloproof(
                "calibrate", "--evaluator", "groundedness", "--labels", labels,
                cwd=root, env=env, command=("-c", FROZEN_CLOCK),
            )  # fmt: skip
            assert done.code == 0, done.err
            made.append(done.lines[-1].removeprefix("Calibration event: "))
        assert len(set(made)) == 3, made  # the third was the first's event
        ran = oloproof("run", cwd=root, env=env)
    assert f"Judge of grounded: calibration {made[2][:19]}:" in ran.out, ran.out + ran.err
