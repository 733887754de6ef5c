"""The conventions people expect of a command line: --version, -h, suggestions for typos,
messages that name the kind of file expected, project discovery from a subfolder, a quiet
exit when the reader of a pipe stops early, and ids that say where to look."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support import oloproof

import oloproof as package


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def test_version_and_short_help(tmp_path: Path) -> None:
    version = oloproof("--version", cwd=tmp_path)
    assert (version.code, version.out) == (0, f"oloproof {package.__version__}\n")
    short = oloproof("-h", cwd=tmp_path)
    assert short.code == 0 and "Usage: " in short.out and "--version" in short.out
    sub = oloproof("run", "-h", cwd=tmp_path)
    assert sub.code == 0 and "--repeats" in sub.out


def test_mistyped_commands_and_options_are_suggested(tmp_path: Path) -> None:
    command = oloproof("runz", cwd=tmp_path)
    assert command.code == 2 and "Did you mean 'run'" in command.err
    option = oloproof("run", "--limt", "3", cwd=tmp_path)
    assert option.code == 2 and "No such option: --limt (Possible options:" in option.err
    assert "--limit" in option.err.split("Possible options:")[1]


def test_a_mistyped_config_key_names_the_key_it_resembles(blackbox: Path) -> None:
    config = blackbox / "oloproof.yaml"
    _replace(config, "min_slice_support: 4", "min_slice_suport: 4")
    done = oloproof("run", cwd=blackbox)
    assert done.code == 2
    assert done.err == (
        f"error: {config}, line 13: min_slice_suport: unknown key; did you mean "
        "'min_slice_support'?\n"
    )
    assert not (blackbox / ".oloproof").exists()


def test_a_mistyped_nested_key_is_matched_against_its_own_model(blackbox: Path) -> None:
    config = blackbox / "oloproof.yaml"
    _replace(config, "require_citations: true", "require_citation: true")
    done = oloproof("run", cwd=blackbox)
    assert done.code == 2
    assert "evaluators.3.require_citation: unknown key; did you mean 'require_citations'?" in (
        done.err
    )
    _replace(config, "require_citation: true", "require_citations: true")
    _replace(config, "callable: app:run", "calable: app:run")
    done = oloproof("run", cwd=blackbox)
    assert "system.calable: unknown key; did you mean 'callable'?" in done.err


def test_an_unknown_evaluator_type_is_named_without_pydantic_words(blackbox: Path) -> None:
    config = blackbox / "oloproof.yaml"
    _replace(config, "{type: hit_rate, k: 2}", "{type: ndgc, k: 2}")
    done = oloproof("run", cwd=blackbox)
    assert done.code == 2
    assert (
        f"error: {config}, line 9: evaluators.1: unknown evaluator type 'ndgc'; did you mean "
        in done.err
    )
    assert "'ndcg'?" in done.err and "(known: contains, equals" in done.err
    assert "Input tag" not in done.err and "expected tags" not in done.err


def test_a_mistyped_case_field_is_suggested(blackbox: Path) -> None:
    cases = blackbox / "cases.jsonl"
    first, *rest = cases.read_text().splitlines()
    record = json.loads(first)
    record["metdata"] = record.pop("metadata")
    cases.write_text("\n".join([json.dumps(record), *rest]) + "\n")
    done = oloproof("run", cwd=blackbox)
    assert done.code == 2
    assert f"{cases}, line 1: unknown field 'metdata'; did you mean 'metadata'?" in done.err


@pytest.mark.parametrize(
    ("args", "named", "reader"),
    [
        (
            ["run", "--policy", "compare.yaml"],
            "compare.yaml",
            "this is a comparison policy; "
            "`oloproof compare --policy` reads it (expected a release policy here)",
        ),
        (
            ["run", "--config", "policy.yaml"],
            "policy.yaml",
            "this is a release policy; "
            "`oloproof run --policy` (or `policy:` in oloproof.yaml) reads it (expected a project "
            "file here)",
        ),
        (
            ["run", "--policy", "oloproof.yaml"],
            "oloproof.yaml",
            "this is a project file "
            "(oloproof.yaml); `oloproof run --config` reads it (expected a release policy here)",
        ),
    ],
)
def test_a_file_of_the_wrong_kind_is_named_for_what_it_is(
    blackbox: Path, args: list[str], named: str, reader: str
) -> None:
    done = oloproof(*args, cwd=blackbox)
    assert done.code == 2
    assert done.err == f"error: {blackbox / named}: {reader}\n"


def test_compare_with_a_release_policy_says_which_command_reads_it(blackbox: Path) -> None:
    assert oloproof("run", cwd=blackbox).code == 1
    done = oloproof("compare", "latest", "latest", "--policy", "policy.yaml", cwd=blackbox)
    assert done.code == 2
    assert done.err == (
        f"error: {blackbox / 'policy.yaml'}: this is a release policy; `oloproof run --policy` "
        "(or `policy:` in oloproof.yaml) reads it (expected a comparison policy here)\n"
    )


def test_unknown_ids_point_to_oloproof_runs_and_short_prefixes_say_how_long(
    blackbox: Path,
) -> None:
    assert oloproof("run", cwd=blackbox).code == 1
    cases = {
        ("inspect", "run_NOSUCHRUN"): "error: no run run_NOSUCHRUN in this ledger; "
        "`oloproof runs` lists this project's runs\n",
        ("compare", "run_NOSUCHRUN", "latest"): "error: no run run_NOSUCHRUN in this ledger; "
        "`oloproof runs` lists this project's runs\n",
        ("inspect", "sha256:ab"): "error: 'sha256:ab' is too short to look up: an address "
        "prefix needs at least 8 hex digits (this has 2 digits); or name a run by its id "
        "(`oloproof runs` lists this project's runs)\n",
        ("inspect", "abc1"): "error: 'abc1' is too short to look up: an address prefix needs at "
        "least 8 hex digits (this has 4 digits); or name a run by its id (`oloproof runs` lists "
        "this project's runs)\n",
    }
    for args, message in cases.items():
        done = oloproof(*args, cwd=blackbox)
        assert (done.code, done.err) == (2, message), args


def test_commands_find_the_project_from_a_subfolder(blackbox: Path) -> None:
    deeper = blackbox / "notes" / "deeper"
    deeper.mkdir(parents=True)
    ran = oloproof("run", cwd=deeper)  # finds ../../oloproof.yaml, writes ../../.oloproof
    assert ran.code == 1, ran.err
    assert (blackbox / ".oloproof").is_dir() and not (deeper / ".oloproof").exists()
    run_id = ran.lines[0].split()[1]
    listed = oloproof("runs", cwd=deeper)
    assert listed.code == 0 and listed.out.startswith(run_id)
    inspected = oloproof("inspect", run_id, "--failures", cwd=deeper)
    assert (
        inspected.code == 0
        and inspected.lines[0] == "4 of 15 cases failed, errored or did not finish"
    )
    exported = oloproof("export", run_id, cwd=deeper)
    assert exported.code == 0
    assert (blackbox / ".oloproof" / "bundles" / run_id / "cases.jsonl").is_file()
    verified = oloproof("verify", cwd=deeper)  # said "no ledger in …/deeper"
    assert verified.code == 0, verified.err
    assert verified.out == oloproof("verify", cwd=blackbox).out
    assert ran.err == listed.err == verified.err == ""  # one project, one level: nothing to note
    compacted = oloproof("ledger", "compact", "--keep-last", "1", cwd=deeper)
    assert compacted.code == 0, compacted.err
    assert not (deeper / ".oloproof").exists()
    kept = oloproof("inspect", run_id, cwd=blackbox)  # in the project's ledger
    assert kept.code == 0 and kept.lines[0] == f"Run {run_id} [DECIDED/COMPLETE]", kept.err


def test_the_nearer_project_wins_and_the_choice_is_noted(blackbox: Path) -> None:
    assert oloproof("run", cwd=blackbox).code == 1
    inner = blackbox / "inner"
    inner.mkdir()
    (inner / "oloproof.yaml").write_text((blackbox / "oloproof.yaml").read_text())
    done = oloproof("runs", cwd=inner)
    assert done.code == 2
    assert done.err.splitlines() == [
        f"note: using the project in {inner} (it holds oloproof.yaml); {blackbox} holds "
        f".oloproof too, and is not used (run from {blackbox} to use it)",
        f"error: no ledger in {inner} or any folder above it (a project keeps its ledger in "
        ".oloproof/ beside its oloproof.yaml); run `oloproof run` in the project first",
    ]


def test_no_project_anywhere_says_so(tmp_path: Path) -> None:
    done = oloproof("runs", cwd=tmp_path)
    assert done.code == 2
    assert done.err.startswith(f"error: no ledger in {tmp_path} or any folder above it")


def _first_line_then_close(args: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    """What `oloproof ARGS | head -1` does: read one line, close the pipe, wait."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "oloproof", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    return proc.wait(timeout=120), first, err


@pytest.mark.parametrize("args", [["inspect", "latest"], ["inspect", "latest", "--json"], ["runs"]])
def test_a_reader_that_stops_early_ends_the_command_quietly(
    blackbox: Path, args: list[str]
) -> None:
    assert oloproof("run", cwd=blackbox).code == 1
    code, first, err = _first_line_then_close(args, blackbox)
    assert first.strip()
    assert (code, err) == (0, b"")


def test_a_closed_pipe_does_not_hide_a_failed_gate(blackbox: Path) -> None:
    # `run | head -1` still ran and decided: its exit code is the gate's, not the pipe's, and
    # the CI files it was asked for are written.
    code, first, err = _first_line_then_close(["run", "--junit", "j.xml"], blackbox)
    assert first.startswith(b"Run run_") and err == b""
    assert code == 1
    assert (blackbox / "j.xml").is_file()


LONG_ANSWER_APP = """
from oloproof import system


@system(name="long", version="1")
def answer(case):
    return {"answer": "word " * 100_000}
"""


@pytest.mark.parametrize("view", [[], ["--json"]])
def test_a_reader_that_stops_before_a_long_output_ends_it_quietly(
    tmp_path: Path, view: list[str]
) -> None:
    # 500 KB of output, far more than a pipe holds: the command is still writing when the
    # reader goes, so its next write meets the closed pipe.
    root = tmp_path / "p"
    root.mkdir()
    (root / "app.py").write_text(LONG_ANSWER_APP)
    (root / "cases.jsonl").write_text(
        json.dumps({"id": "q1", "input": {"question": "q"}, "expected": {"answer": "word"}}) + "\n"
    )
    (root / "oloproof.yaml").write_text(
        'system: {name: long, version: "1", callable: "app:answer"}\n'
        "dataset: cases.jsonl\n"
        "evaluators:\n"
        "  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}\n"
    )
    assert oloproof("run", cwd=root).code == 0
    code, first, err = _first_line_then_close(["inspect", "latest", "--case", "q1", *view], root)
    assert first.strip()
    assert (code, err) == (0, b"")
