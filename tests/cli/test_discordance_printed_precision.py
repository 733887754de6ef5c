"""The planning line's discordance never reads 0% or 100% for a share that is neither.

The probe: 251 paired cases, one of them pass -> fail, under a 2-point non-inferiority margin,
printed "(486 in total at 0% discordance)" beside the one discordant pair; 199 discordant pairs
of 200 printed "100%". The comparison stores the share as a whole percent (and ``verify``
re-derives it so); the line now prints it from the rule's b, c and paired count, as a whole
percent where that is neither 0 nor 100 (the guides' "7%") and with the decimals it needs where
it would be.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import non_inferiority_compared, oloproof, patterns_project

POLICY = "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.05}\n"


@pytest.mark.parametrize(
    ("patterns", "margin", "line", "stored"),
    [
        (
            [("p", "f")] + [("p", "p")] * 250,
            2,
            "about 235 more paired cases would decide it, if the difference holds "
            "(486 in total at 0.4% discordance)",
            0,
        ),
        (
            [("f", "p")] * 100 + [("p", "f")] * 99 + [("p", "p")],
            20,
            "about 57 more paired cases would decide it, if the difference holds "
            "(257 in total at 99.5% discordance)",
            100,
        ),
    ],
    ids=["1 of 251", "199 of 200"],
)
def test_the_discordance_printed_is_neither_none_nor_all(
    tmp_path: Path, patterns: list[tuple[str, str]], margin: int, line: str, stored: int
) -> None:
    root = patterns_project(tmp_path / "p", patterns, policy=POLICY)
    lines, cand, base = non_inferiority_compared(root, margin)
    assert f"    {line}" in lines, lines
    # What is stored is unchanged: the whole percent, which verify re-derives.
    address = lines[0].split()[1]
    recorded = oloproof("inspect", address, "--json", cwd=root)
    assert recorded.code == 0, recorded.err
    (decision,) = json.loads(recorded.out)["decisions"]
    assert decision["detail"]["planning"]["discordance_percent"] == stored
    site = tmp_path / "site"
    exported = oloproof("view", "--export", str(site), cand, base, cwd=root)
    assert exported.code == 0, exported.out + exported.err
    (page,) = (site / "comparisons").glob("*/index.html")
    assert line in page.read_text()
