"""On GitHub Actions, nothing a command prints is acted on as a workflow command, through the
real CLI and a model of GitHub's runner.

The probe: GitHub's runner (actions/runner) acts on `::name::` at the start of a line (after
spaces) and on `##[name]` anywhere in one, on standard output and standard error alike. `run`
printed a system's error in its "errored" line, `inspect --failures` a case id at the start of
a line, `compare --cases` the ids of changed cases: a case named `::add-mask::x` or an error
saying `##[error]` was a command. With GITHUB_ACTIONS=true each command now prints
`::stop-commands::TOKEN` on both streams before anything else, and `::TOKEN::` on standard
output after everything (GitHub's documented way to print untrusted text).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support import Result, oloproof, patterns_project

GITHUB = {"GITHUB_ACTIONS": "true"}
IDS = ("::add-mask::x", "##[error]in an id", "::warning::w", "plain")
RAISES = """
from oloproof import system

@system(name="cand", version="1")
def cand(case):
    raise RuntimeError("##[add-mask]secret ::error::pwn")
"""
# The commands the runner registers (ActionCommandManager, its command extensions).
REGISTERED = frozenset(
    [
        "stop-commands",
        "add-mask",
        "add-path",
        "set-env",
        "set-output",
        "save-state",
        "error",
        "warning",
        "notice",
        "debug",
        "group",
        "endgroup",
        "echo",
        "add-matcher",
        "remove-matcher",
    ]
)


class Runner:
    """What actions/runner does with the lines of a step's output: one stop state, shared by
    both streams; ``acted`` lists the commands it acted on, stop and resume apart."""

    def __init__(self) -> None:
        self.token: str | None = None
        self.acted: list[str] = []

    def read(self, text: str) -> None:
        for line in re.split(r"\r\n|\r|\n", text):  # .NET's ReadLine ends a line at each
            name = _command(line, REGISTERED | ({self.token} if self.token else set()))
            if name is None:
                continue
            if self.token is not None:  # stopped: only the token resumes
                if name.lower() == self.token.lower():
                    self.token = None
            elif name.lower() == "stop-commands":
                self.token = _data(line)
            else:
                self.acted.append(line)


def _command(line: str, registered: frozenset[str] | set[str]) -> str | None:
    """The command ``line`` is to the runner (ActionCommand.TryParseV2, then TryParse)."""
    trimmed = line.lstrip()
    if trimmed.startswith("::"):
        end = trimmed.find("::", 2)
        if end >= 0:
            name = trimmed[2:end].split(" ", 1)[0]
            if name.lower() in {r.lower() for r in registered}:
                return name
    start = line.find("##[")
    if start >= 0:
        end = line.find("]", start)
        if end >= 0:
            name = line[start + 3 : end].split(" ", 1)[0]
            if name.lower() in {r.lower() for r in registered}:
                return name
    return None


def _data(line: str) -> str:
    trimmed = line.lstrip()
    if trimmed.startswith("::"):
        return trimmed[trimmed.find("::", 2) + 2 :]
    return line[line.find("]", line.find("##[")) + 1 :]


def _acted_on(result: Result) -> list[str]:
    """The commands the runner acts on in what ``result`` printed, whichever of its two streams
    it reads first; it handles standard error first in each batch, so that order must end
    with commands working again."""
    usual, other = Runner(), Runner()
    for runner, streams in ((usual, (result.err, result.out)), (other, (result.out, result.err))):
        for text in streams:
            runner.read(text)
    assert usual.token is None, result.out + result.err  # resumed: later commands work
    return usual.acted + other.acted


def _compared(tmp_path: Path) -> tuple[Path, str, str]:
    """A project whose cases are named ``IDS``, and its candidate and baseline runs, each case
    flipped between them."""
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
    return root, cand, base


def test_nothing_printed_is_a_workflow_command(tmp_path: Path) -> None:
    root, cand, base = _compared(tmp_path)

    plain = Runner()  # off GitHub Actions the output is as it was, ids and all
    plain.read(oloproof("compare", cand, base, "--cases", cwd=root).out)
    assert plain.acted
    assert _acted_on(oloproof("compare", cand, base, "--cases", env=GITHUB, cwd=root)) == []

    (root / "app.py").write_text(RAISES)
    errored = oloproof("run", env=GITHUB, cwd=root)
    assert errored.code in (1, 3) and "##[add-mask]secret" in errored.out, errored.out
    assert _acted_on(errored) == []
    failures = oloproof("inspect", "latest", "--failures", env=GITHUB, cwd=root)
    assert "\n::add-mask::x\n" in failures.out
    assert _acted_on(failures) == []
    refused = oloproof("inspect", "latest", "--case", "##[error]nothing", env=GITHUB, cwd=root)
    assert refused.code == 2 and "##[error]nothing" in refused.err
    assert _acted_on(refused) == []


def test_json_output_stays_json_and_is_no_command(tmp_path: Path) -> None:
    # `--json` is read by a parser (`| jq`): standard output is not wrapped, and its `##[`,
    # which only a string holds, is written as the same JSON the runner does not act on.
    root, cand, base = _compared(tmp_path)
    args = ("compare", cand, base, "--cases", "--json")
    done = oloproof(*args, env=GITHUB, cwd=root)
    assert json.loads(done.out) == json.loads(oloproof(*args, cwd=root).out)
    assert {f["case_id"] for f in json.loads(done.out)["flipped"]} == set(IDS)
    assert "##[" not in done.out and "#\\u0023[error]in an id" in done.out
    assert not any(line.lstrip().startswith("::") for line in done.out.splitlines())
    assert done.err.startswith("::stop-commands::")
    assert _acted_on(done) == []
