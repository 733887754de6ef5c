"""The command a changed case names runs as printed, whatever its case id holds.

``compare --cases``, ``--json`` and ``--summary`` name, for each changed case, the command that
shows it in each run. A case id may hold a space, a quote or a ``$``: printed bare, the command
split such an id into two arguments (``inspect`` refused it, exit 2), and pasted into a shell,
an id such as ``$(touch PWNED)`` ran. The id is quoted for a POSIX shell where it needs it, and
an id that does not need it is printed as it always was.
"""

from __future__ import annotations

import json
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support import oloproof, patterns_project

IDS = ("a b", "$(touch PWNED)", "it's", "plain-id")


def test_each_changed_case_command_runs_as_printed(tmp_path: Path) -> None:
    root = patterns_project(
        tmp_path / "p",
        [("p", "f"), ("f", "p"), ("p", "f"), ("f", "p")],
        policy="version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.05}\n",
    )
    cases = root / "cases.jsonl"
    rows = [json.loads(line) for line in cases.read_text().splitlines()]
    cases.write_text(
        "".join(json.dumps({**r, "id": i}) + "\n" for r, i in zip(rows, IDS, strict=True))
    )
    assert oloproof("run", "--config", "baseline.yaml", cwd=root).code == 0
    assert oloproof("run", cwd=root).code == 0
    cand, base = (r["run_id"] for r in json.loads(oloproof("runs", "--json", cwd=root).out))

    data = json.loads(oloproof("compare", cand, base, "--json", cwd=root).out)
    commands = {f["case_id"]: (f["candidate_case"], f["baseline_case"]) for f in data["flipped"]}
    assert set(commands) == set(IDS)
    assert commands["plain-id"] == (
        f"oloproof inspect {cand} --case plain-id",
        f"oloproof inspect {base} --case plain-id",
    )
    for case_id, pair in commands.items():
        for command, run_id in zip(pair, (cand, base), strict=True):
            args = shlex.split(command)
            assert args == ["oloproof", "inspect", run_id, "--case", case_id], command
            shown = oloproof(*args[1:], cwd=root)
            assert shown.code == 0 and shown.lines[0].startswith(f"case {case_id} "), shown.err

    listed = oloproof("compare", cand, base, "--cases", "--summary", "s.md", cwd=root)
    assert (
        f"  answer_correct  a b  pass → fail  regressed  oloproof inspect {cand} --case 'a b' · "
        f"oloproof inspect {base} --case 'a b'"
    ) in listed.lines
    assert f"`oloproof inspect {cand} --case '$(touch PWNED)'`" in (root / "s.md").read_text()
    assert not (root / "PWNED").exists()

    # A run's JUnit file names the same command for each case: quoted alike (it was not).
    done = oloproof("run", "--junit", "j.xml", "--junit-cases", cwd=root)
    latest = done.lines[0].split()[1]
    links = [case.findtext("failure") for case in ET.parse(root / "j.xml").iter("testcase")]
    assert f"oloproof inspect {latest} --case 'a b'" in links, links
