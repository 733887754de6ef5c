"""A command line refused before the command runs does not leave an earlier run's reports.

The probe: `oloproof run --junit report.xml --summary summary.md` passed (exit 0), and then
the same command with its standard output closed (`>&-`) was refused, exit 2, before it read
its arguments, and so was one with a usage error (`--repeats 0`, an unknown option, `compare`
without its runs) and one started in a working folder since deleted: `report.xml` and `summary.md` were still the passing run's, `Gate: PASS (exit
0)` and a passing `gate` test, where docs/ci.md says an earlier run's reports are never left at
those paths to be read as this command's. Now the report paths such a command line names get
the reports of a command stopped by the refusal, saying why, as a refusal inside the command
gives them; a path the command would refuse to write (a cases file) is still left as it is.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.05}\n"
CLOSED = (
    "standard output is closed, so nothing this command prints could be read; "
    "redirect it instead (> /dev/null discards it)"
)


@pytest.fixture(scope="module")
def passed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A project whose run passed, with its reports (JUnit, summary)."""
    root = toy_project(tmp_path_factory.mktemp("p"), policy=POLICY, cases=3)
    done = oloproof("run", "--junit", "report.xml", "--summary", "summary.md", cwd=root)
    assert done.code == 0, done.out + done.err
    junit, summary = (root / "report.xml").read_text(), (root / "summary.md").read_text()
    assert "**Gate: PASS (exit 0)**" in summary
    return root, junit, summary


def _fresh(passed: tuple[Path, str, str]) -> Path:
    root, junit, summary = passed
    (root / "report.xml").write_text(junit)
    (root / "summary.md").write_text(summary)
    return root


def _shell(root: Path, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", "-c", f'exec "{sys.executable}" -m oloproof {command}'],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _says_no_gate(root: Path, command: str, why: str) -> None:
    summary = (root / "summary.md").read_text()
    assert summary.startswith(f"### Oloproof {command}\n"), summary
    assert "Gate: PASS" not in summary and "**No gate** (exit 2)" in summary, summary
    assert why.replace(">", "\\>") in summary, summary  # inert Markdown
    gate = ET.parse(root / "report.xml").getroot().find(".//testcase[@name='gate']")
    assert gate is not None
    error = gate.find("error")
    assert error is not None, ET.tostring(gate)
    assert (error.get("type"), error.get("message")) == ("NO_GATE", "no gate (exit 2)")
    assert why in (error.text or ""), error.text


def test_a_closed_standard_output_replaces_an_earlier_run_s_reports(
    passed: tuple[Path, str, str],
) -> None:
    root = _fresh(passed)
    done = _shell(root, "run --junit report.xml --summary=summary.md >&-")
    assert done.returncode == 2
    assert done.stderr == f"error: {CLOSED}\n"
    _says_no_gate(root, "run", CLOSED)


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (("run", "--repeats", "0"), "Invalid value for '--repeats': 0 is not in the range"),
        (("run", "--bogus"), "No such option: --bogus"),
        (("compare",), "Missing argument 'candidate'"),
    ],
)
def test_a_usage_error_replaces_an_earlier_run_s_reports(
    passed: tuple[Path, str, str], args: tuple[str, ...], why: str
) -> None:
    root = _fresh(passed)
    command, *rest = args
    done = oloproof(command, "--junit", "report.xml", "--summary", "summary.md", *rest, cwd=root)
    assert done.code == 2, done.out + done.err
    assert why in done.err
    _says_no_gate(root, command, why)


def test_a_path_the_command_would_refuse_is_left_as_it_is(passed: tuple[Path, str, str]) -> None:
    root = _fresh(passed)
    cases = (root / "cases.jsonl").read_text()
    done = _shell(root, "run --junit cases.jsonl --summary summary.md --bogus")
    assert done.returncode == 2
    assert (root / "cases.jsonl").read_text() == cases
    assert "**No gate** (exit 2)" in (root / "summary.md").read_text()


def test_a_deleted_working_folder_replaces_an_earlier_run_s_reports(
    passed: tuple[Path, str, str], tmp_path: Path
) -> None:
    """Refused as it starts too (exit 2), the command left the reports it named by their full
    paths as the passing run wrote them; those paths now say why there is no gate."""
    root = _fresh(passed)
    gone = tmp_path / "gone"
    reports = f"--junit {root / 'report.xml'} --summary {root / 'summary.md'}"
    done = subprocess.run(
        [
            "sh",
            "-c",
            f'mkdir {gone} && cd {gone} && rmdir {gone} && exec "{sys.executable}" '
            f"-m oloproof run {reports}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: the working folder no longer exists")
    _says_no_gate(root, "run", "the working folder no longer exists")


def test_one_file_named_for_both_reports_says_so_as_the_kind_it_was(
    passed: tuple[Path, str, str],
) -> None:
    """Named for both reports on a refused command line, the file was left as the passing run
    wrote it; a JUnit report there now says there is no gate, as a JUnit report."""
    root = _fresh(passed)
    done = oloproof("run", "--junit", "report.xml", "--summary", "report.xml", "--bogus", cwd=root)
    assert done.code == 2
    gate = ET.parse(root / "report.xml").getroot().find(".//testcase[@name='gate']/error")
    assert gate is not None and gate.get("type") == "NO_GATE", (root / "report.xml").read_text()
