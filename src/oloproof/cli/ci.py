"""Files for a CI system: JUnit XML (``--junit``) and a Markdown summary (``--summary``).

Requirements (``docs/ci.md``):

1. JUnit XML in the shape Jenkins, GitLab, GitHub's test reporters and Azure read: one
   ``<testsuites>`` holding a ``<testsuite>`` of the rules (one ``<testcase>`` per rule) and,
   with ``--junit-cases``, a ``<testsuite>`` of the cases (one per case). Counts on every suite.
2. A rule that FAILed is a ``<failure>``; a rule whose outcome the gate blocks on
   (INSUFFICIENT_EVIDENCE, MANUAL_REVIEW in ``block_on``) is a ``<failure>`` too, typed with its
   outcome, so a blocked gate is never a green test report; an outcome the gate lets through is
   ``<skipped>``. A case that errored is an ``<error>``, and so is a case one of whose repeats
   errored (``--repeats``): an execution raised, as when a case errors, and a CI system lists
   errors apart from wrong answers. One with a failed or missing verdict (or, repeated, a
   repeat without one) is a ``<failure>`` naming the criteria; one every metric excluded is
   ``<skipped>``, as it was judged on nothing.
3. The Markdown summary holds the gate, the rules and metrics tables and the lines that say what
   is missing, for a pull request comment or ``$GITHUB_STEP_SUMMARY`` (appended to when it is
   that file, which a job's steps share). Text that comes from the cases, the system or the
   user's files (ids, error messages, names) is inert there: on one line, with everything
   Markdown or HTML could read as syntax escaped, so a case id cannot forge a gate line or hide
   the real one (``md_text``).
4. Files are written as ``oloproof.outfiles`` writes them: never over a file of the user's,
   whole. Their paths are checked before any work, and a command that ends without deciding
   writes reports that say so and why (``reports_if_stopped``), so an earlier run's are never
   left to be read as its own. Characters XML cannot hold are written as escapes.
"""

from __future__ import annotations

import re
import shlex
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ledger import LedgerError
from oloproof import outfiles
from oloproof.cli.guard import command_of
from oloproof.cli.interrupted import interrupted_status
from oloproof.cli.render import (
    metric_cells,
    problem_word,
    subset_text,
)
from oloproof.display import unreordered
from oloproof.errors import ConfigError, OloproofError
from oloproof.redaction import redact_text
from oloproof.report import evidence_line, level_line, repeated_cases_line, rule_note

if TYPE_CHECKING:
    from ledger import Ledger
    from oloproof.report import RunReport

BLOCKED_DEFAULT = ("FAIL", "INSUFFICIENT_EVIDENCE", "MANUAL_REVIEW")
# What the reports say while the command that writes them has not ended (``reports_if_stopped``).
NOT_ENDED = (
    "the command has not ended: it is still running, or it was killed before it could decide"
)


def check_paths(junit: Path | None, summary: Path | None) -> None:
    """Refuse, before any work, report paths that cannot or must not be written
    (``oloproof.outfiles``), and one file named for both reports. When one of the two paths
    is refused, the other gets the report of a command stopped by that (``reports_if_stopped``):
    an earlier command's report left there would be read as this one's, a green one too."""
    if junit is not None and summary is not None and junit.resolve() == summary.resolve():
        both = ConfigError(f"--junit and --summary both name {junit}: give each its own file")
        was = _earlier_kind(junit)
        with reports_if_stopped(
            junit if was is outfiles.JUNIT else None,
            summary if was is outfiles.SUMMARY else None,
            command_of(sys.argv[1:]) or "oloproof",
        ):
            raise both
    refused: list[ConfigError] = []

    def checked(path: Path | None, kind: outfiles.Kind) -> Path | None:
        """``path`` if it may be written, else None (and why, in ``refused``)."""
        try:
            if path is not None:
                outfiles.check(path, kind)
            return path
        except ConfigError as exc:
            refused.append(exc)
            return None

    writable = checked(junit, outfiles.JUNIT), checked(summary, outfiles.SUMMARY)
    if refused:
        # Named as the stopped reports of the command on the command line (run, compare).
        with reports_if_stopped(*writable, command_of(sys.argv[1:]) or "oloproof"):
            raise refused[0]


# The commands that write reports, and the options naming their paths (``refused_command_line``).
_REPORTING = frozenset({"run", "compare"})
_REPORT_OPTIONS = {"--junit": outfiles.JUNIT, "--summary": outfiles.SUMMARY}


def refused_command_line(argv: Sequence[str], why: str) -> None:
    """The reports of a command line refused before its command ran (a usage error, a closed
    standard output): each path it names for a report gets the report of a command stopped by
    ``why``, as a refusal inside the command gives it (``reports_if_stopped``), so that an
    earlier run's report, a green one too, is not left there to be read as this one's.

    The words are read as given, since they did not parse. A path the command would refuse
    (``check_paths``: a cases file) is left as it is, and one named for both reports gets the
    report of the kind it holds, as there."""
    command = command_of(list(argv))
    if command not in _REPORTING:
        return
    named = _named_reports(argv[argv.index(command) + 1 :])
    for path, kind in named:
        if any(other == path and other_kind != kind for other, other_kind in named):
            if _earlier_kind(path) is not kind:
                continue
        elif not _is_ours(path, kind):
            continue
        junit = path if kind is outfiles.JUNIT else None
        _warn(write_stopped(junit, None if junit else path, command, why, 2))


def _named_reports(args: Sequence[str]) -> list[tuple[Path, outfiles.Kind]]:
    """The report paths ``args`` name (``--junit FILE``, ``--summary=FILE``), up to ``--``."""
    named = []
    words = iter(args)
    for word in words:
        if word == "--":
            break
        option, equals, value = word.partition("=")
        kind = _REPORT_OPTIONS.get(option)
        given = (value if equals else next(words, "")) if kind is not None else ""
        if kind is not None and given not in ("", "-"):  # paths refused as no file's name
            named.append((Path(given), kind))
    return named


def _earlier_kind(path: Path) -> outfiles.Kind | None:
    """The kind of report an earlier command left at ``path``, named for both reports: the
    report saying there is no gate is written there as that kind; None when there is none."""
    if not _holds_a_report(path):
        return None
    return next((k for k in (outfiles.JUNIT, outfiles.SUMMARY) if _is_ours(path, k)), None)


def _is_ours(path: Path, kind: outfiles.Kind) -> bool:
    """Whether ``path`` may be written as ``kind`` (``oloproof.outfiles.check``)."""
    try:
        outfiles.check(path, kind)
    except (ConfigError, OSError, RuntimeError):  # RuntimeError: a loop, before Python 3.13
        return False
    return True


def write_file(path: Path, text: str) -> None:
    """Write a report to ``path`` (``oloproof.outfiles.write``)."""
    # A run recorded before a secret was declared holds it (``keep_out_declared``).
    outfiles.write(path, redact_text(text).encode("utf-8"))


@contextmanager
def reports_if_stopped(junit: Path | None, summary: Path | None, command: str) -> Iterator[None]:
    """Around a command's work up to its reports: if it ends without them (bad input, a run
    stopped, an interruption, a fault), reports that say so and why take the place of any an
    earlier command left at the same paths, which would be read as this one's (a green one
    too). The error itself goes on as it would.

    A command killed outright (SIGKILL: an out-of-memory kill, a CI job's timeout), or ended by
    its system's code from C (``_exit(0)``: exit 0, and no Python code runs after it), runs no
    handler, so each path that is a file of its own, or no file yet, first gets a report saying
    the command has not ended, in place of an earlier report or of none (a missing file some
    test reporters let pass); this command's own reports replace it in turn. A pipe, a device
    and the step summary (appended to) hold no earlier report to replace, and get nothing
    more."""
    first_junit, first_summary = (
        p if p is not None and _written_whole(p) else None for p in (junit, summary)
    )
    if first_junit is not None or first_summary is not None:
        unwritten = write_stopped(first_junit, first_summary, command, NOT_ENDED, None)
        if unwritten:
            # A report that cannot take the earlier one's place now could not at the end
            # either: refused before any work, as a bad path is, and the other report says why.
            failed = unwritten[0][1]
            left = [p for p, _ in unwritten]
            _warn(
                write_stopped(
                    None if junit in left else junit,
                    None if summary in left else summary,
                    command,
                    str(failed),
                    2,
                )
            )
            raise failed
    try:
        yield
    except BaseException as exc:
        if junit is not None or summary is not None:
            code, why = _stopped(exc)
            _warn(write_stopped(junit, summary, command, why, code))
        raise


def _written_whole(path: Path) -> bool:
    """Whether ``path`` is a regular file, or none yet, and not the step summary: a report
    written there replaces what is there whole (``oloproof.outfiles``)."""
    return (path.is_file() or not path.exists()) and not outfiles.is_step_summary(path)


def _holds_a_report(path: Path) -> bool:
    """Whether ``path`` is a regular file, not empty, written whole (not the step summary):
    one ``check_paths`` let through then holds an earlier command's report."""
    return path.is_file() and path.stat().st_size > 0 and not outfiles.is_step_summary(path)


def _stopped(exc: BaseException) -> tuple[int, str]:
    """The exit code a command ends with for ``exc``, and what its reports say."""
    from oloproof.cli.main import error_sentence  # here: main registers this module's users

    if isinstance(exc, OloproofError | LedgerError):
        return 2, error_sentence(exc)
    if isinstance(exc, KeyboardInterrupt):
        return interrupted_status(exc), "interrupted"
    # typer raises its own Exit (a copy of click's, not a subclass): told by its exit_code.
    exit_code = getattr(exc, "exit_code", None)
    if isinstance(exc, click.exceptions.Exit | SystemExit) or isinstance(exit_code, int):
        code = exc.code if isinstance(exc, SystemExit) else exit_code
        status = code if isinstance(code, int) else 1
        return status, "interrupted" if status in (130, 143) else f"stopped (exit {status})"
    return 1, f"stopped by an internal error ({type(exc).__name__})"


def write_stopped(
    junit: Path | None, summary: Path | None, command: str, why: str, exit_code: int | None
) -> list[tuple[Path, ConfigError]]:
    """The reports of a command that decided nothing, saying why; ``exit_code`` None for one
    that has not ended. Each is written on its own: one that cannot be written (a full device)
    takes the earlier report at its path away where it can (removing a file needs no room),
    which would otherwise be read as this command's. Returns the paths not written, with why
    (saying when the earlier report was removed)."""
    reason = redact_text(why)
    status = "not ended" if exit_code is None else f"exit {exit_code}"
    reports: list[tuple[Path, str]] = []
    if junit is not None:
        case = ET.Element("testcase", classname="oloproof.gate", name="gate")
        ET.SubElement(case, "error", message=f"no gate ({status})", type="NO_GATE").text = reason
        document = junit_document([junit_suite(f"{command}: rules", [case])], {"gate": "none"})
        reports.append((junit, document))
    if summary is not None:
        text = f"### Oloproof {command}\n\n**No gate** ({status}): {md_text(reason)}\n"
        reports.append((summary, text))
    unwritten = []
    for path, report in reports:
        try:
            write_file(path, report)
        except ConfigError as failed:
            removed = _holds_a_report(path) and outfiles.remove(path)
            gone = "; the earlier report there is removed" if removed else ""
            unwritten.append((path, ConfigError(f"{failed}{gone}")))
    return unwritten


def _warn(unwritten: Sequence[tuple[Path, ConfigError]]) -> None:
    """Say which reports ``write_stopped`` could not write, and why."""
    for _, failed in unwritten:
        sys.stderr.write(f"warning: {failed}\n")


# ---------------------------------------------------------------------------------- JUnit


def junit_suite(name: str, cases: Sequence[ET.Element]) -> ET.Element:
    suite = ET.Element("testsuite", name=name)
    for case in cases:
        suite.append(case)
    failures = sum(1 for c in cases if c.find("failure") is not None)
    errors = sum(1 for c in cases if c.find("error") is not None)
    skipped = sum(1 for c in cases if c.find("skipped") is not None)
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    return suite


def junit_document(suites: Sequence[ET.Element], properties: Mapping[str, str]) -> str:
    root = ET.Element("testsuites", name="oloproof")
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(sum(int(s.get(key, "0")) for s in suites)))
    for suite in suites:
        props = ET.Element("properties")
        for name, value in properties.items():
            ET.SubElement(props, "property", name=name, value=value)
        suite.insert(0, props)
        root.append(suite)
    for element in root.iter():
        element.text = _xml_chars(element.text)
        for name, value in element.attrib.items():
            element.set(name, _xml_chars(value) or "")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


# Characters XML 1.0 cannot hold, escaped or not (control characters such as the ESC of a
# coloured exception message, U+FFFE, U+FFFF, lone surrogates): one of them makes the whole
# file unreadable to a CI system, which then shows none of its failures.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_chars(text: str | None) -> str | None:
    """``text`` with each character XML cannot hold written as its escape (``\\x1b``)."""
    if not text:
        return text
    return _NOT_XML.sub(lambda m: m[0].encode("unicode_escape").decode("ascii"), text)


def rule_testcase(
    classname: str,
    rule_id: str,
    metric: str,
    outcome: str,
    reason: str,
    blocks: Iterable[str],
    note: str | None = None,
) -> ET.Element:
    """One rule as a testcase: PASS passes, a blocking outcome fails, any other is skipped.
    ``note``: the line the report prints under the rules for it, added to the test's text."""
    case = ET.Element("testcase", classname=classname, name=f"{rule_id} ({metric})")
    message = f"{outcome}: {reason}"
    if outcome == "PASS":
        return case
    if outcome in blocks:
        text = f"rule {rule_id} on {metric}: {outcome} ({reason}); the gate blocks on {outcome}"
        ET.SubElement(case, "failure", message=message, type=outcome).text = (
            text if note is None else f"{text}\n{note}"
        )
    else:
        ET.SubElement(case, "skipped", message=message).text = note
    return case


def gate_testcase(
    classname: str, label: str | None, exit_code: int, note: str | None = None
) -> ET.Element:
    """The gate itself as a testcase, so a report is never green while the exit code is not:
    PASS passes, BLOCK fails, no gate (a run stopped or not decided) with exit code 2 or 3
    is an error. No gate with exit code 0 (no policy) is skipped: a passing test would read
    as a gate decided and passed. ``note``: the line the report prints under the gate
    (``evidence_line``), the failure's text when the gate blocks, else the passing test's
    output."""
    case = ET.Element("testcase", classname=classname, name="gate")
    if label == "BLOCK":
        ET.SubElement(
            case, "failure", message=f"BLOCK (exit {exit_code})", type="BLOCK"
        ).text = note
    elif label is None and exit_code != 0:
        ET.SubElement(case, "error", message=f"no gate (exit {exit_code})", type="NO_GATE")
    elif label is None:
        ET.SubElement(case, "skipped", message="no policy: no gate was decided (exit 0)")
    elif note is not None:
        ET.SubElement(case, "system-out").text = note
    return case


def run_junit(ledger: Ledger, report: RunReport, *, with_cases: bool = False) -> str:
    """The run's JUnit XML: its rules, and with ``with_cases`` every case."""
    blocks = _block_on(report.block_on)
    rules = [
        rule_testcase(
            "oloproof.rules",
            r.rule_id,
            r.metric,
            r.outcome,
            r.reason,
            blocks,
            rule_note(r.rule_id, r.reason, r.detail),
        )
        for r in report.rules
    ]
    rules.append(
        gate_testcase("oloproof.gate", report.gate_label, report.exit_code, evidence_line(report))
    )
    suites = [junit_suite(f"oloproof run {report.run_id}: rules", rules)]
    if with_cases:
        suites.append(
            junit_suite(f"oloproof run {report.run_id}: cases", _case_tests(ledger, report))
        )
    gate = "none" if report.gate_label is None else f"{report.gate_label} (exit {report.exit_code})"
    properties = {"run_id": report.run_id, "run": report.address, "gate": gate}
    return junit_document(suites, properties)


def _block_on(block_on: Sequence[str] | None) -> tuple[str, ...]:
    return tuple(block_on) if block_on is not None else BLOCKED_DEFAULT


def _case_tests(ledger: Ledger, report: RunReport) -> list[ET.Element]:
    from oloproof.events import failed_repeats
    from oloproof.metrics import case_results
    from oloproof.repeats import errored_repeats, repeat_counts
    from oloproof.report import repeats_text

    tests = []
    order = [m.criterion for m in report.metrics]
    for _, body in case_results(ledger, report.run_id):
        case_id = body["case_id"]
        case = ET.Element("testcase", classname="oloproof.cases", name=case_id)
        # Quoted for a shell where the id needs it, as compare's flips are (``oloproof.flips``).
        link = f"oloproof inspect {report.run_id} --case {shlex.quote(case_id)}"
        counts = repeat_counts(body.get("repeats"))
        if body["status"] == "errored":
            error = ledger.get(body["execution"]).body.get("error") or {}
            # Redacted before it is cut, as error lines are (``report.error_groups``).
            ET.SubElement(
                case,
                "error",
                message=redact_text(str(error.get("message", "the case errored")))[:500],
                type=str(error.get("type", "error")),
            ).text = link
        elif counts is not None and counts.errored:
            # Typed with the first errored repeat's exception; the message says how many.
            number, execution = errored_repeats(body.get("repeats"))[0]
            error = ledger.get(execution).body.get("error") or {}
            message = f"{repeats_text(counts)} (repeat {number}: {error.get('message', '')})"
            ET.SubElement(
                case,
                "error",
                message=redact_text(message)[:500],
                type=str(error.get("type", "error")),
            ).text = link
        else:
            verdicts, repeats = body["verdicts"], body.get("repeats") or []
            words = {
                c: problem_word(verdicts[c], failed_repeats(repeats, c), len(repeats))
                for c in order
                if c in verdicts
            }
            bad = [f"{criterion}: {word}" for criterion, word in words.items() if word]
            if bad:
                ET.SubElement(case, "failure", message="; ".join(bad), type="failed").text = link
            elif words and all(verdicts[c]["s"] == "excluded" for c in words):
                # Judged on nothing: a passing test would count it among the cases that passed.
                why = "; ".join(f"{c}: excluded ({verdicts[c].get('r', 'unknown')})" for c in words)
                ET.SubElement(case, "skipped", message=redact_text(why)[:500]).text = link
        tests.append(case)
    return tests


# ------------------------------------------------------------------------------- Markdown


class Md(str):
    """Markdown this module wrote itself (``**FAIL**``, a code span): put in as it is."""


# What could make a link or an image (a "]" before "(" or "["), HTML, an entity, emphasis, a code
# span, strike-through or a table cell; "_" only where it could open or close emphasis, so ids
# keep their snake_case and intervals their brackets.
_MD_SYNTAX = re.compile(r"[\\`*<>|&~]|\](?=[(\[])|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


# What GitHub turns into a mention (which notifies the people it names when the summary is
# posted) or a link without any Markdown syntax: "@name", "@org/team", an e-mail address,
# "https://…", "www.…", "#12" and "GH-12" (an issue). A word joiner (U+2060, invisible) after
# "@", "://", "www", "#" and "GH" leaves the text as it reads and makes none of them.
_AUTOLINKED = re.compile(r"[@#](?=[0-9A-Za-z])|(?<=:)//(?=\S)|\b(?i:www)(?=\.)|\b(?i:gh)(?=-[0-9])")


# What starts a heading, a list item or a thematic break at the start of a line (up to three
# spaces in): the summary's lines under the rules start with a rule's id, which may be "# x".
# A backslash before the marker ("\\#", "12\\.") leaves the text as it reads.
_BLOCK_START = re.compile(
    r"^ {0,3}(?:\d{1,9}(?=[.)](?: |$))|(?=#{1,6}(?: |$)|[+-](?: |$)|-[- ]*$))"
)


def md_text(text: str) -> str:
    """``text`` (from a case, a system or a user's file) as inert Markdown on one line."""
    escaped = _MD_SYNTAX.sub(lambda m: "\\" + m[0], unreordered(_CONTROL.sub(" ", text)))
    linked = _AUTOLINKED.sub(lambda m: m[0] + "\u2060", escaped)
    return _BLOCK_START.sub(lambda m: m[0] + "\\", linked, count=1)


def md_code(text: str) -> Md:
    """``text`` as a code span on one line, fenced with more backticks than it holds in a row."""
    flat = unreordered(_CONTROL.sub(" ", text))
    fence = "`" * (max((len(run) for run in re.findall("`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return Md(f"{fence}{pad}{flat}{pad}{fence}")


def md_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A table; each cell is escaped (``md_text``) unless it is ``Md``, whose pipes are
    escaped all the same: GitHub ends a cell at any "|" not escaped, inside a code span too
    (a command quoting the case id ``a|b`` was cut there), and reads "\\|" there as "|"."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|") if isinstance(text, Md) else md_text(text)

    def row(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell(c) for c in cells) + " |"

    return [row(header), "|" + "---|" * len(header), *(row(r) for r in rows)]


def run_summary(report: RunReport) -> str:
    """The run as Markdown: gate, rules, metrics, and what is missing or errored."""
    from oloproof.cli.render import errored_line, repeats_errored_line

    gate = (
        f"**Gate: {report.gate_label} (exit {report.exit_code})**"
        if report.gate_label is not None
        else f"**No gate** ({report.decision_state})"
    )
    lines = [
        f"### Oloproof run `{report.run_id}`",
        "",
        f"{gate} · {report.decision_state}/{report.execution_state} · "
        f"{report.cases} of {report.planned_cases} cases",
        "",
    ]
    evidence = evidence_line(report)
    if evidence is not None:
        lines += [md_text(evidence), ""]
    if report.subset is not None:
        lines += [f"Subset: {md_text(subset_text(report.subset, report.planned_cases))}", ""]
    if report.repeats > 1:
        lines += [f"Each case executed {report.repeats} times; a case counts once.", ""]
    if report.errors:
        lines += [md_text(errored_line(report.run_id, report.planned_cases, report.errors)), ""]
    if report.repeat_errors:
        lines += [md_text(repeats_errored_line(report)), ""]
    if report.rules:
        lines += md_table(
            ["rule", "metric", "decision", "reason"],
            [[r.rule_id, r.metric, Md(f"**{r.outcome}**"), r.reason] for r in report.rules],
        )
        lines.append("")
        for rule in report.rules:
            note = rule_note(rule.rule_id, rule.reason, rule.detail)
            if note is not None:
                lines += [md_text(note), ""]
    level = level_line(report.level)
    if level is not None:
        lines += [md_text(level), ""]
    lines += md_table(
        ["metric", "estimate", "interval", "evidence"],
        [[m.criterion, *metric_cells(m, report.level)] for m in report.metrics],
    )
    repeated = repeated_cases_line(report)
    if repeated is not None:
        lines += ["", md_text(repeated)]
    lines += [
        "",
        f"Failures: `oloproof inspect {report.run_id} --failures`",
        "",
    ]
    return "\n".join(lines)
