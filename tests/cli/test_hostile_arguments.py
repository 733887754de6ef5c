"""Hostile and awkward command lines, through the real CLI: each is refused with one sentence
that says what is wrong and where, exit 2, before anything is written; never a traceback, a
hang, a signal or an exit code that means something else (1: a rule FAILed, or damage found)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.support import Result, copy_example, oloproof

from ledger.codec import INT_MAX

LOOP = "loop"  # a symbolic link that points at itself, made in each test's folder


@dataclass(frozen=True)
class Project:
    root: Path
    run_id: str
    judgment: str  # the address of one of the run's judgments: an event that is no run


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    root = copy_example("support_rag", tmp_path_factory.mktemp("hostile"))
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.err
    run_id = done.lines[0].split()[1]
    case = json.loads(
        oloproof("inspect", run_id, "--case", "refund_review", "--json", cwd=root).out
    )
    judgment = re.findall(r"sha256:[0-9a-f]{64}", json.dumps(case["judgments"]))[0]
    (root / LOOP).symlink_to(LOOP)
    return Project(root, run_id, judgment)


@pytest.fixture
def fresh(tmp_path: Path) -> Path:
    """A project that has never run: a refusal must leave it without a ledger."""
    root = copy_example("support_rag", tmp_path)
    (root / LOOP).symlink_to(LOOP)
    return root


def refused(done: Result, *parts: str) -> None:
    """Exit 2 with an error on stderr holding each of ``parts``, and no traceback."""
    assert done.code == 2, done.err
    assert "Traceback" not in done.err, done.err
    for part in parts:
        assert part in done.err, done.err


# ------------------------------------------------------------------------------- ids and refs


def test_a_run_id_with_a_newline_after_it_is_not_called_damage(project: Project) -> None:
    done = oloproof("inspect", project.run_id + "\n", cwd=project.root)
    refused(done, "white space at its start or end", f"give '{project.run_id}'")
    assert "damaged" not in done.err


@pytest.mark.parametrize("text", ["latest ", "\tlatest"])
@pytest.mark.parametrize(
    "command",
    [
        ("inspect", "{}"),
        ("export", "{}"),
        ("diagnose", "{}", "--intervention", "gold-context", "--criterion", "answer_correct"),
        ("compare", "latest", "{}"),
    ],
)
def test_an_id_with_white_space_around_it_is_not_taken_for_another(
    project: Project, command: tuple[str, ...], text: str
) -> None:
    # Stripped, ' latest' read the raw ref, which `latest` itself never does (oloproof.latest).
    done = oloproof(*(text if a == "{}" else a for a in command), cwd=project.root)
    refused(done, "white space at its start or end", "give 'latest'")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", "an empty id names nothing"),
        ("  ", "an empty id names nothing"),
        ("sha256:zz", "'sha256:zz' is not an address: 'z' is not a hex digit"),
        ("sha256:" + "g" * 64, "is not an address: 'g' is not a hex digit"),
        ("sha256:" + "0" * 65, "is not an address: it has 65 hex digits; an address has 64"),
        ("x" * 100_000, "(100000 characters) is no address, prefix or ref name: a ref name has "),
    ],
)
def test_malformed_ids_say_what_is_wrong_with_them(project: Project, text: str, said: str) -> None:
    for command in (("inspect", text), ("compare", text, "latest")):
        done = oloproof(*command, cwd=project.root)
        refused(done, said, "`oloproof runs` lists this project's runs")
        assert len(done.err) < 500 and "cannot be a ref name" not in done.err


@pytest.mark.parametrize(
    "args",
    [
        ("ledger", "export", "{}", "--to", "x.oloarchive"),
        ("ledger", "compact", "--keep", "{}"),
        ("view", "--export", "site", "{}"),
    ],
)
def test_ledger_and_view_commands_refuse_ids_that_name_nothing(
    project: Project, args: tuple[str, ...]
) -> None:
    # These resolve through the ledger, which strips white space and called 'sha256:zz' a
    # ref name that "reads as an address prefix".
    for text, said in (
        ("latest ", "'latest ' has white space at its start or end"),
        ("sha256:zz", "'sha256:zz' is not an address: 'z' is not a hex digit"),
    ):
        refused(oloproof(*(text if a == "{}" else a for a in args), cwd=project.root), said)
    assert not (project.root / "x.oloarchive").exists() and not (project.root / "site").exists()


# ----------------------------------------------------------------------------- numeric options


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ("--repeats", "1001"),
            "Invalid value for '--repeats': 1001 is not in the range 1<=x<=1000",
        ),
        (("--repeats", str(10**12)), "is not in the range 1<=x<=1000"),
        (("--sample", "2", "--seed", "-1"), "--seed -1: a seed is 0 or more"),
        (("--sample", "2", "--seed", str(INT_MAX + 1)), f"--seed {INT_MAX + 1} is larger than "),
        (("--limit", "1" + "0" * 30), f"--limit 1{'0' * 30} is larger than a run records "),
        (("--sample", str(10**40)), "asks for more cases than the 13 in the cases file"),
    ],
)
def test_numbers_past_what_a_run_can_do_or_record_are_refused_first(
    fresh: Path, args: tuple[str, ...], said: str
) -> None:
    refused(oloproof("run", *args, cwd=fresh, timeout=60), said)
    assert not (fresh / ".oloproof").exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ("--intervention", "gold-context", "--repeats", str(10**9)),
            "--repeats 1000000000: at most 1000",
        ),
        (
            ("--intervention", "token-budget", "--token-budget", "1" + "0" * 30),
            f"--token-budget 1{'0' * 30} is larger than a run records",
        ),
    ],
)
def test_diagnose_refuses_numbers_past_what_it_can_do(
    project: Project, args: tuple[str, ...], said: str
) -> None:
    done = oloproof(
        "diagnose", "latest", "--criterion", "answer_correct", *args, cwd=project.root, timeout=60
    )
    refused(done, said)


@pytest.mark.parametrize("port", ["-1", "65536", str(10**20)])
def test_a_port_outside_0_to_65535_is_refused(project: Project, port: str) -> None:
    refused(oloproof("view", "--port", port, cwd=project.root), "'--port'", "0<=x<=65535")


@pytest.mark.parametrize("level", ["nan", "NaN", "-nan"])
def test_a_confidence_level_that_is_not_a_number_is_refused(fresh: Path, level: str) -> None:
    done = oloproof("calibrate", "--evaluator", "x", "--labels", "x", "--level", level, cwd=fresh)
    refused(done, "'--level'", "0.5<=x<=0.999")


# --------------------------------------------------------------------- options and combinations


@pytest.mark.parametrize(
    ("option", "args"),
    [
        ("--format", ("export", "latest", "--format", "csv", "--format", "jsonl", "--output", "o")),
        ("--example", ("init", "--example", "support_rag", "--example", "judge_gate", "elsewhere")),
        ("--case", ("inspect", "latest", "--case", "refund_review", "--case", "other")),
        ("--intervention", ("diagnose", "latest", "--intervention", "x", "--intervention", "y")),
        ("--limit", ("run", "--dry-run", "--limit", "2", "--limit=3")),
        ("--policy", ("compare", "latest", "latest", "--policy", "a.yaml", "--policy", "b.yaml")),
        ("--to", ("--debug", "ledger", "export", "latest", "--to", "a", "--to", "b")),
    ],
)
def test_an_option_that_takes_one_value_given_twice_is_refused(
    project: Project, option: str, args: tuple[str, ...]
) -> None:
    # Which one would count (click keeps the last) is not something to guess.
    done = oloproof(*args, cwd=project.root)
    refused(done, f"{option} is given twice; it takes one value")
    assert done.out == "" and not (project.root / "elsewhere").exists()


def test_repeatable_options_and_repeated_flags_are_still_taken(project: Project) -> None:
    assert oloproof("runs", "--all", "--all", cwd=project.root).code == 0
    done = oloproof(
        "inspect", "latest", "--failures", "--criterion", "answer_correct", "--criterion",
        "hit_rate_at_2", cwd=project.root,
    )  # fmt: skip
    assert done.code == 0, done.err


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--case", "refund_review", "--failures"), "--case shows one case and --failures lists"),
        (("--slices", "--failures"), "--slices lists a run's report slices; it cannot go with"),
        (("--slices", "--case", "refund_review"), "--slices lists a run's report slices"),
    ],
)
def test_inspect_refuses_views_that_cannot_be_shown_together(
    project: Project, args: tuple[str, ...], said: str
) -> None:
    refused(oloproof("inspect", "latest", *args, cwd=project.root), said)


def test_inspect_slices_of_an_event_that_is_no_run_is_refused(project: Project) -> None:
    done = oloproof("inspect", project.judgment, "--slices", cwd=project.root)
    refused(done, "is an oloproof.judgment event; --slices, --case and --failures need a run")


@pytest.mark.parametrize(
    "args",
    [
        ("run", "--config", ""),
        ("run", "--policy", ""),
        ("run", "--junit", ""),
        ("export", "latest", "--format", "csv", "--output", ""),
        ("init", ""),
        ("qrels-to-cases", ""),
        ("ledger", "import", ""),
        ("ledger", "export", "latest", "--to", ""),
        ("calibrate", "--evaluator", "x", "--labels", ""),
        ("view", "--export", "", "latest"),
    ],
)
def test_an_empty_path_or_a_dash_is_refused_not_taken_for_a_file(
    project: Project, args: tuple[str, ...]
) -> None:
    # `--output "$OUT"` with OUT unset: '' would otherwise be the current folder; '-' would be
    # a file named '-', where many programs mean standard input or output.
    done = oloproof(*args, cwd=project.root)
    refused(done, "an empty path names no file or folder")
    assert done.out == ""
    dashed = oloproof(*("-" if a == "" else a for a in args), cwd=project.root)
    refused(dashed, "'-' is no standard input or output here: give a path (./- names a file '-')")
    assert not (project.root / "-").exists()


def test_an_archive_written_into_a_device_claims_no_size(project: Project) -> None:
    done = oloproof("ledger", "export", "latest", "--to", "/dev/null", cwd=project.root)
    assert done.code == 0 and done.out.endswith(" events to /dev/null\n"), done.out


# --------------------------------------------------------------------------- files to be read


def _sparse(folder: Path) -> Path:
    big = folder / "huge.yaml"
    with big.open("wb") as handle:
        handle.truncate(1 << 30)  # 1 GB of holes: no disk is used
    return big


@pytest.mark.parametrize("kind", ["fifo", "zero", "huge", "loop", "nul"])
@pytest.mark.parametrize("option", ["--config", "--policy"])
def test_a_settings_file_that_is_no_regular_small_file_is_refused_at_once(
    fresh: Path, option: str, kind: str
) -> None:
    target = {
        "fifo": fresh / "pipe",
        "zero": Path("/dev/zero"),
        "huge": _sparse(fresh),
        "loop": fresh / LOOP,
        "nul": fresh / "nul.yaml",
    }[kind]
    if kind == "fifo":
        os.mkfifo(target)  # no writer: opened for reading, it would wait for ever
    if kind == "nul":
        target.write_bytes(b"version: 1\nrules: \x00\n")
    said = {
        "fifo": f"{target}: cannot read it (a named pipe, not a regular file)",
        "zero": "/dev/zero: cannot read it (a character device, not a regular file)",
        "huge": f"{target}: 1073741824 bytes, more than a settings file may hold (16777216)",
        "loop": f"{target}: cannot read it (a loop of symbolic links)",
        "nul": f"{target}, line 2: not valid YAML (unacceptable character #x0000",
    }[kind]
    refused(oloproof("run", option, str(target), cwd=fresh, timeout=30), said)
    assert not (fresh / ".oloproof").exists()


@pytest.mark.parametrize("kind", ["fifo", "zero", "loop"])
def test_compare_refuses_a_policy_that_is_no_regular_file(
    project: Project, tmp_path: Path, kind: str
) -> None:
    target = {"fifo": tmp_path / "pipe", "zero": Path("/dev/zero"), "loop": project.root / LOOP}
    if kind == "fifo":
        os.mkfifo(target[kind])
    done = oloproof("compare", "latest", "latest", "--policy", str(target[kind]), cwd=project.root)
    refused(done, str(target[kind]))


@pytest.mark.parametrize(
    "args",
    [
        ("qrels-to-cases", "{pipe}"),
        ("qrels-to-cases", "/dev/zero"),
        ("qrels-to-cases", "{loop}"),
        ("qrels-to-cases", "qrels.txt", "--cases", "{loop}"),
        ("qrels-to-cases", "qrels.txt", "--output", "{loop}"),
        ("calibrate", "--evaluator", "x", "--labels", "{pipe}"),
        ("calibrate", "--evaluator", "x", "--labels", "/dev/zero"),
        ("calibrate", "--evaluator", "x", "--labels", "x", "--config", "{loop}"),
        ("ledger", "import", "{pipe}"),
        ("ledger", "import", "{loop}"),
    ],
)
def test_files_to_read_that_are_pipes_devices_or_loops_are_refused(
    fresh: Path, args: tuple[str, ...]
) -> None:
    os.mkfifo(fresh / "pipe")
    (fresh / "qrels.txt").write_text("refund_review 0 kb-01 1\n")
    given = [a.format(pipe=fresh / "pipe", loop=fresh / LOOP) for a in args]
    done = oloproof(*given, cwd=fresh, timeout=30)
    refused(done, "cannot read it (" if "--output" not in args else "cannot write it (")
    assert not (fresh / ".oloproof").exists()


# --------------------------------------------------------------------------- paths to write


@pytest.mark.parametrize("kind", ["loop", "long"])
@pytest.mark.parametrize(
    "args",
    [
        ("run", "--junit", "{path}"),
        ("run", "--summary", "{path}"),
        ("export", "latest", "--format", "csv", "--output", "{path}"),
        ("ledger", "export", "latest", "--to", "{path}"),
        ("init", "{path}"),
    ],
)
def test_paths_to_write_that_cannot_be_looked_up_are_refused(
    project: Project, args: tuple[str, ...], kind: str
) -> None:
    path = {"loop": f"{LOOP}/x", "long": "x" * 300}[kind]
    said = {"loop": "(a loop of symbolic links)", "long": "(its name is too long)"}[kind]
    done = oloproof(*(a.format(path=path) for a in args), cwd=project.root)
    refused(done, said)


def test_a_step_summary_variable_naming_a_loop_is_not_a_traceback(fresh: Path) -> None:
    # The variable is the CI's, not an argument: a loop there is simply not the --summary file.
    done = oloproof("run", "--summary", "s.md", cwd=fresh, env={"GITHUB_STEP_SUMMARY": LOOP})
    assert done.code == 3 and "Traceback" not in done.err, done.err
    assert (fresh / "s.md").read_text().startswith("### Oloproof ")


def test_init_under_a_file_says_it_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    refused(oloproof("init", "notes.txt/x", cwd=tmp_path), "notes.txt is a file, not a folder")


@pytest.mark.parametrize(
    "start", [("-m", "oloproof"), ("-c", "from oloproof.cli.main import command; command()")]
)
@pytest.mark.parametrize("args", ["runs", "run", "init x", "inspect latest", "--help"])
def test_a_working_folder_deleted_under_the_shell_is_said(
    tmp_path: Path, start: tuple[str, str], args: str
) -> None:
    # The shell's folder is removed while the shell is in it; the command starts there.
    gone = tmp_path / "gone"
    gone.mkdir()
    script = f'cd "{gone}" && rmdir "{gone}" && exec "{sys.executable}" "$@" {args}'
    done = subprocess.run(
        ["sh", "-c", script, "sh", *start], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr == (
        "error: the working folder no longer exists (it was deleted or moved after this shell "
        "entered it); change to an existing folder and run the command again\n"
    )


# ----------------------------------------------------------------------- the standard streams


def _shell(project: Project, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", "-c", f'exec "{sys.executable}" -m oloproof {command}'],
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("command", ["runs", "--version", "inspect latest --json"])
def test_a_closed_standard_output_is_refused_in_one_sentence(
    project: Project, command: str
) -> None:
    done = _shell(project, f"{command} >&-")
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "error: standard output is closed, so nothing this command prints could be read; "
        "redirect it instead (> /dev/null discards it)\n"
    )


def test_a_closed_standard_error_or_input_leaves_the_command_working(project: Project) -> None:
    done = _shell(project, "runs 2>&-")
    assert (done.returncode, done.stdout.split()[0]) == (0, project.run_id)
    failed = _shell(project, "inspect nothing-named-so 2>&-")
    assert (failed.returncode, failed.stdout) == (2, "")
    read = _shell(project, "inspect latest <&-")
    assert read.returncode == 0 and read.stdout.startswith(f"Run {project.run_id}")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
@pytest.mark.parametrize("command", ["runs", "inspect latest --json", "--help"])
def test_a_standard_output_that_cannot_be_written_is_said_not_a_traceback(
    project: Project, command: str
) -> None:
    done = _shell(project, f"{command} > /dev/full")
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "error: cannot write to standard output (No space left on device); what was printed "
        "is incomplete\n"
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_a_standard_error_that_cannot_be_written_keeps_each_exit_code(project: Project) -> None:
    # Python's own 1 (a traceback it could not print either) would read as a FAILed rule.
    assert _shell(project, "runs 2> /dev/full").returncode == 0
    assert _shell(project, "inspect nothing-named-so 2> /dev/full").returncode == 2
    assert _shell(project, "run --limit 0 2> /dev/full").returncode == 2


def test_an_output_encoding_that_cannot_hold_the_report_is_said(project: Project) -> None:
    done = oloproof("runs", cwd=project.root, env={"PYTHONIOENCODING": "ascii"})
    assert done.code == 2, done.err
    assert done.err == (
        "error: cannot write to standard output (its encoding, ascii, cannot hold '\\xb7'; use "
        "a UTF-8 locale or set PYTHONIOENCODING=utf-8); what was printed is incomplete\n"
    )
