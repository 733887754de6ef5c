"""An imported calibration does not displace a newer one of the project's own, through the real CLI.

Two copies of the judge_gate example share one judge. The first calibrates on the example's
labels (the judge clears the policy), runs, and exports the run with its judge's calibration.
The second calibrates later on labels it reads the other way round: its judge is below the
policy's minimums and its gate blocks. Before the fix, importing the first project's run made
the older, imported calibration the one in use, because it was the last one filed: the
second project's next run passed its gate on a calibration older than its own, without a word.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from tests.support import Result, calibrate_judge_gate, oloproof, serving_judge_gate

ENV = {"JUDGE_GATE_KEY": "sk-test"}
ADDRESS = re.compile(r"^Calibration event: (sha256:[0-9a-f]{64})$", re.MULTILINE)


def ok(root: Path, *args: str, code: int = 0) -> Result:
    done = oloproof(*args, cwd=root, env=ENV)
    assert done.code == code, done.out + done.err
    return done


def flipped_labels(root: Path) -> str:
    """The example's labels with every human verdict turned round, as a file in ``root``."""
    lines = []
    for line in (root / "labels.jsonl").read_text(encoding="utf-8").splitlines():
        example = json.loads(line)
        example["label"] = not example["label"]
        lines.append(json.dumps(example))
    (root / "flipped.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return "flipped.jsonl"


def test_an_imported_older_calibration_is_not_the_one_in_use(tmp_path: Path) -> None:
    with serving_judge_gate(tmp_path / "theirs") as (theirs, _server):
        ours = tmp_path / "ours"
        shutil.copytree(theirs, ours)  # the same judge, at the same server
        calibrate_judge_gate(theirs, ENV)
        run = ok(theirs, "run").lines[0].split()[1]
        archive = tmp_path / "theirs.oloarchive"
        ok(theirs, "ledger", "export", run, "--to", str(archive))

        labels = flipped_labels(ours)
        calibrated = ok(ours, "calibrate", "--evaluator", "groundedness", "--labels", labels)
        match = ADDRESS.search(calibrated.out)
        assert match is not None, calibrated.out
        our_calibration = match.group(1)
        assert ok(ours, "run", code=3).lines[1] == "Gate: BLOCK (exit 3)"

        imported = ok(ours, "ledger", "import", str(archive))
        assert imported.out.startswith("imported ")
        after = ok(ours, "run", code=3)  # was exit 0: "Gate: PASS (exit 0)"
    assert after.lines[1] == "Gate: BLOCK (exit 3)"
    assert "│ grounded │ groundedness │ MANUAL_REVIEW │ judge_below_requirement │" in after.lines
    assert f"Judge of grounded: calibration {our_calibration[:19]}: " in after.out
