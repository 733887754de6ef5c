"""A repeated case that passed the repeats judged, with a repeat left without a verdict, is not
exported as passed.

The probe: a run with `--repeats 3` whose case c1 errored in its second repeat and passed the
other two (c4 errored in its first). The gate counts such a case as a missing one, JUnit gives it
an `<error>`, `inspect --failures` lists it, and `inspect --case` says `1.000 (2 of 3 repeats
observed, 1 missing)`; but `export --format jsonl|csv|parquet` wrote its verdict row with
`passed: true`, so counting the `passed` column counted an errored repeat as a pass. Now
`passed` is empty there, as for a missing verdict: the repeat without one might have failed.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from tests.support import flaky_repeats_project, oloproof


def test_a_case_with_a_repeat_without_a_verdict_is_not_exported_as_passed(
    tmp_path: Path,
) -> None:
    root = flaky_repeats_project(tmp_path)
    done = oloproof("run", "--repeats", "3", cwd=root)
    assert done.code == 0, done.out + done.err
    run_id = done.lines[0].split()[1]
    read = {
        "csv": pd.read_csv,
        "jsonl": lambda p: pd.read_json(p, lines=True),
        "parquet": pd.read_parquet,
    }
    for fmt, reader in read.items():
        exported = oloproof("export", run_id, "--format", fmt, "--output", fmt, cwd=root)
        assert exported.code == 0, exported.err
        verdicts = reader(root / fmt / f"verdicts.{fmt}")
        rows = verdicts[verdicts.criterion == "answer_correct"].set_index("case_id")
        # c1 and c4 passed both repeats judged and errored in the third; c3 errored in all;
        # c5 passed two and answered a number in one (no answer text: no verdict there);
        # c6 failed one repeat, which fails the case.
        assert list(rows["missing_repeats"]) == [1, 0, 3, 1, 1, 0], fmt
        passed = [None if pd.isna(p) else bool(p) for p in rows["passed"]]
        assert passed == [None, True, None, None, None, False], fmt
        # c5's number has no verdict on `shaped` in one repeat; its others were judged shaped.
        shaped = verdicts[verdicts.criterion == "shaped"].set_index("case_id")
        assert pd.isna(shaped.loc["c5", "passed"]), fmt
        assert bool(shaped.loc["c2", "passed"]), fmt
