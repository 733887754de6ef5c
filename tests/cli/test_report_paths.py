"""Where `run --junit/--summary`, `compare --junit/--summary` and `export --format` write: never
over a file of the user's or the ledger's, never leaving an earlier run's report to be read as
this one's, and in XML a CI system can parse whatever the system's errors hold."""

from __future__ import annotations

import hashlib
import os
import signal
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from tests.support import answered_project, interrupt_run, oloproof
from tests.unchecked_ids import oloproof_unchecked_ids

# Passes every case; with BREAK set, stops the run on its third case (an output the ledger
# cannot hold), after the first two were recorded.
APP = """
import os

def answer(case):
    if os.environ.get("HOLD") and case["q"] == "q2":
        import sys, time

        sys.stderr.write("holding\\n")
        sys.stderr.flush()
        time.sleep(60)
    if os.environ.get("BREAK") and case["q"] == "q2":
        return {"answer": float("nan")}
    if os.environ.get("ANSI") and case["q"] == "q1":
        raise RuntimeError("\\x1b[31mupstream\\x1b[0m said \\x07 no \\ufffe")
    return {"answer": case["q"]}
"""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return answered_project(tmp_path / "p", APP, cases=6)


@pytest.mark.parametrize(
    ("option", "target"),
    [
        ("--junit", "cases.jsonl"),
        ("--summary", "oloproof.yaml"),
        ("--junit", "policy.yaml"),
        ("--summary", "app.py"),
    ],
)
def test_a_report_is_not_written_over_the_projects_files(
    project: Path, option: str, target: str
) -> None:
    before = _digest(project / target)
    done = oloproof("run", option, target, cwd=project)
    assert done.code == 2, done.err
    assert done.err.startswith("error: will not write the ") and target in done.err
    assert len(done.err.strip().splitlines()) == 1
    assert _digest(project / target) == before
    assert not (project / ".oloproof").exists()  # refused before the run: nothing recorded
    assert oloproof("run", cwd=project).code == 0  # the project still runs


def test_a_report_is_not_written_into_the_ledger(project: Path) -> None:
    assert oloproof("run", cwd=project).code == 0
    ledger = project / ".oloproof" / "ledger"
    before = {p.name: _digest(p) for p in ledger.iterdir() if p.name != "lock.mdb"}
    for name in ("data.mdb", "open.lock"):
        done = oloproof("run", "--summary", str(ledger / name), cwd=project)
        assert done.code == 2 and "will not write the Markdown summary" in done.err, done.err
    assert {p.name: _digest(p) for p in ledger.iterdir() if p.name != "lock.mdb"} == before
    assert oloproof("verify", cwd=project).code == 0
    assert len(oloproof("runs", cwd=project).lines) == 1


def test_one_file_named_for_both_reports_is_refused(project: Path) -> None:
    done = oloproof("run", "--junit", "report.out", "--summary", "./report.out", cwd=project)
    assert done.code == 2
    assert "--junit and --summary both name" in done.err
    assert not (project / "report.out").exists() and not (project / ".oloproof").exists()


def test_an_earlier_report_and_an_empty_file_are_replaced(project: Path) -> None:
    (project / "junit.xml").write_text("")
    first = oloproof("run", "--junit", "junit.xml", "--summary", "summary.md", cwd=project)
    assert first.code == 0, first.err
    second = oloproof("run", "--junit", "junit.xml", "--summary", "summary.md", cwd=project)
    assert second.code == 0, second.err
    run_id = second.lines[0].split()[1]
    props = {
        p.get("name"): p.get("value") for p in ET.parse(project / "junit.xml").iter("property")
    }
    assert props["run_id"] == run_id
    assert run_id in (project / "summary.md").read_text()


def test_a_device_is_written_into_not_replaced(project: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    device = project / "null"
    os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # what /dev/null is
    done = oloproof("run", "--junit", "null", cwd=project)
    assert done.code == 0, done.err
    assert stat.S_ISCHR(device.stat().st_mode)  # still the device, not a file in its place


def test_a_stopped_run_replaces_the_green_reports_an_earlier_run_left(project: Path) -> None:
    paths = ("--junit", "junit.xml", "--summary", "summary.md")
    assert oloproof("run", *paths, cwd=project).code == 0
    assert "**Gate: PASS (exit 0)**" in (project / "summary.md").read_text()

    stopped = oloproof("run", "--no-cache", *paths, cwd=project, env={"BREAK": "1"})
    assert stopped.code == 2, stopped.err
    _assert_no_gate(project, 2, "case 'q2': the output cannot be recorded")

    # Bad input, refused before anything runs, says so in the reports too.
    (project / "policy.yaml").write_text(
        "version: 1\nrules:\n  - {id: answers, metric: answerd, min: 0.5}\n"
    )
    refused = oloproof("run", *paths, cwd=project)
    assert refused.code == 2, refused.err
    assert "policy.yaml, line 3: rule 'answers' reads metric 'answerd'" in refused.err
    _assert_no_gate(project, 2, "reads metric 'answerd'")


def test_an_interrupted_run_says_so_in_its_reports_with_its_exit_code(project: Path) -> None:
    # Ctrl-C: the process exits 130, and its reports said "no gate (exit 1): stopped by an
    # internal error (Exit)", the code of a FAILed rule.
    paths = ("--junit", "junit.xml", "--summary", "summary.md")
    code, _, err = interrupt_run(project, "holding\n", signal.SIGINT, env={"HOLD": "1"}, args=paths)
    assert code == 130, err
    _assert_no_gate(project, 130, "interrupted")


def test_a_comparison_checks_its_report_paths_before_it_is_recorded(project: Path) -> None:
    for _ in range(2):
        assert oloproof("run", "--no-cache", cwd=project).code == 0
    (project / "compare.yaml").write_text(
        "version: 1\nrules:\n  - {id: keep, metric: answered, non_inferiority: {margin: 5}}\n"
    )
    runs = [line.split()[0] for line in oloproof("runs", cwd=project).lines]
    (project / "folder").mkdir()
    done = oloproof("compare", *runs, "--policy", "compare.yaml", "--junit", "folder", cwd=project)
    assert done.code == 2 and "it is a folder" in done.err, done.err
    assert _comparisons(project) == 0  # nothing was recorded
    assert oloproof("compare", *runs, "--policy", "compare.yaml", cwd=project).code in (0, 3)

    # An earlier comparison's green report is replaced when the next one stops.
    paths = ("--junit", "c.xml", "--summary", "c.md")
    assert oloproof("compare", *runs, "--policy", "compare.yaml", *paths, cwd=project).code in (
        0,
        3,
    )
    gone = oloproof(
        "compare", runs[0], "run_nothere", "--policy", "compare.yaml", *paths, cwd=project
    )
    assert gone.code == 2
    root = ET.parse(project / "c.xml").getroot()
    error = root.find(".//testcase[@name='gate']/error")
    assert error is not None and error.get("type") == "NO_GATE"
    assert "run_nothere" in (error.text or "")
    assert (project / "c.md").read_text().startswith("### Oloproof compare\n\n**No gate** (exit 2)")


def _comparisons(project: Path) -> int:
    from oloproof.store import open_project_ledger

    ledger = open_project_ledger(project, create=False, only_reads=True)
    try:
        return len(ledger.lookup("type", "oloproof.comparison"))
    finally:
        ledger.close()


def _assert_no_gate(project: Path, code: int, why: str) -> None:
    root = ET.parse(project / "junit.xml").getroot()
    (case,) = root.iter("testcase")
    error = case.find("error")
    assert case.get("name") == "gate" and error is not None
    assert error.get("type") == "NO_GATE" and error.get("message") == f"no gate (exit {code})"
    assert why in (error.text or "")
    assert {p.get("name"): p.get("value") for p in root.iter("property")} == {"gate": "none"}
    summary = (project / "summary.md").read_text()
    assert summary.startswith(f"### Oloproof run\n\n**No gate** (exit {code}): ")
    assert why.replace("'", "'") in summary and "PASS" not in summary


def test_junit_holds_what_xml_cannot_as_escapes(project: Path) -> None:
    cases = project / "cases.jsonl"
    cases.write_text(cases.read_text().replace('"id": "q3"', '"id": "q\\u00073"'))
    # Such an id is refused in a cases file now; a ledger written before still holds it.
    done = oloproof_unchecked_ids(
        "run", "--junit", "j.xml", "--junit-cases", cwd=project, env={"ANSI": "1"}
    )
    assert done.code == 3, done.err  # an errored case is missing: 5 of 6 cannot clear 0.5
    root = ET.parse(project / "j.xml").getroot()  # parses: nothing XML cannot hold is in it
    tests = {case.get("name"): case for case in root.iter("testcase")}
    error = tests["q1"].find("error")
    assert error is not None
    assert error.get("message") == "\\x1b[31mupstream\\x1b[0m said \\x07 no \\ufffe"
    assert "q\\x073" in tests


def test_export_tables_are_not_written_over_the_cases_file(project: Path) -> None:
    assert oloproof("run", cwd=project).code == 0
    run_id = oloproof("runs", cwd=project).lines[0].split()[0]
    before = _digest(project / "cases.jsonl")
    done = oloproof("export", run_id, "--format", "jsonl", "--output", ".", cwd=project)
    assert done.code == 2 and "will not write the JSON Lines export over" in done.err, done.err
    assert _digest(project / "cases.jsonl") == before
    assert not (project / "verdicts.jsonl").exists()  # all of the tables, or none

    for fmt in ("jsonl", "csv"):  # an earlier export is replaced
        for _ in range(2):
            again = oloproof("export", run_id, "--format", fmt, "--output", "out", cwd=project)
            assert again.code == 0, again.err


def test_export_trec_keeps_a_qrels_file_of_the_users(project: Path) -> None:
    assert oloproof("run", cwd=project).code == 0
    run_id = oloproof("runs", cwd=project).lines[0].split()[0]
    (project / "qrels.trec").write_text("q0 0 d1 1\n")
    done = oloproof("export", run_id, "--format", "trec", "--output", ".", cwd=project)
    assert done.code == 2 and "TREC qrels file over" in done.err, done.err
    assert (project / "qrels.trec").read_text() == "q0 0 d1 1\n"
    assert not (project / "run.trec").exists()


def test_the_summary_makes_no_mention_or_link_of_the_systems_text(tmp_path: Path) -> None:
    app = APP.replace(
        'raise RuntimeError("\\x1b[31mupstream\\x1b[0m said \\x07 no \\ufffe")',
        'raise RuntimeError("#12 @acme/security-team https://evil.example www.evil.example")',
    )
    project = answered_project(tmp_path / "p", app, cases=6)
    done = oloproof("run", "--summary", "s.md", cwd=project, env={"ANSI": "1"})
    assert done.code == 3, done.err
    (line,) = [line for line in (project / "s.md").read_text().splitlines() if "errored" in line]
    joiner = "\u2060"
    assert f"@{joiner}acme/security-team" in line and f"https://{joiner}evil.example" in line
    assert f"www{joiner}.evil" in line and f"#{joiner}12" in line
    assert line.replace(joiner, "").count("@acme") == 1  # the text reads as it was


def test_labelled_cases_are_not_written_over_another_file(project: Path) -> None:
    (project / "qrels.txt").write_text("q0 0 d1 1\n")
    for target, why in (
        ("oloproof.yaml", "will not write the cases file over oloproof.yaml"),
        ("qrels.txt", "--output qrels.txt is the qrels file"),
    ):
        before = _digest(project / target)
        done = oloproof("qrels-to-cases", "qrels.txt", "--output", target, cwd=project)
        assert done.code == 2 and why in done.err, done.err
        assert _digest(project / target) == before
    for _ in range(2):  # a cases file, even labelled before, is written again
        again = oloproof(
            "qrels-to-cases", "qrels.txt", "--output", "l.jsonl", "--replace", cwd=project
        )
        assert again.code == 0, again.err
    assert '"relevant":[{"doc_id":"d1","grade":1}]' in (project / "l.jsonl").read_text()
