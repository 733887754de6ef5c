"""Configured secrets are never stored or printed, whoever repeats them.

Two real setups, each through the real CLI:

- an HTTP system whose header value comes from the environment (``Bearer ${ECHO_TOKEN}``),
  served on 127.0.0.1 by an endpoint that echoes what it was sent: the token comes back in a
  400 body (the case errors, and the error keeps the body's excerpt) and inside a 200 output;
- the judge_gate example, whose judge server repeats the API key it was sent in the reason
  of a valid verdict.

Afterwards the secret is nowhere in the ledger's file, in any command's output or in an
archive; ``[redacted]`` stands in its place, and the run report says how many occurrences were
replaced.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support import (
    QuietHandler,
    Result,
    echo_http_config,
    oloproof,
    served_project,
    serving_judge_gate,
)

from oloproof.testing import RecordedRequest, Reply, raw, verdict

TOKEN = "tok-ECHO-4c1b9e77d2"
JUDGE_KEY = "sk-judge-gate-SECRET-5f3a9c"
REDACTED = re.compile(r"^Redacted: (\d+) occurrences of configured secrets$")

CASES = [
    {"id": "echo_ok", "input": {"question": "echo"}, "expected": {"answer": "ok"}},
    {"id": "echo_refused", "input": {"question": "refuse"}, "expected": {"answer": "ok"}},
    {"id": "plain", "input": {"question": "plain"}, "expected": {"answer": "ok"}},
]
CONFIG = echo_http_config('Authorization: "Bearer ${{ECHO_TOKEN}}"')


class Echo(QuietHandler):
    """Repeats the Authorization header it was sent: in a 400 for "refuse", in a 200 answer
    for "echo", not at all for anything else."""

    def do_POST(self) -> None:
        question = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["question"]
        seen = self.headers.get("Authorization", "")
        if question == "refuse":
            self._send(400, {"error": f"token not accepted: {seen}"})
        elif question == "echo":
            self._send(200, {"result": {"answer": f"ok, you sent {seen} (again: {seen})"}})
        else:
            self._send(200, {"result": {"answer": "ok"}})

    def _send(self, status: int, body: dict[str, Any]) -> None:
        self.reply(status, json.dumps(body).encode())


@pytest.fixture
def echo_project(tmp_path: Path) -> Iterator[Path]:
    with served_project(tmp_path / "echo", Echo, CONFIG, CASES) as root:
        yield root


def everything_printed(*results: Result) -> str:
    return "".join(r.out + r.err for r in results)


def assert_nowhere(secret: str, root: Path, printed: str, archive: Path) -> None:
    assert secret not in printed
    data = (root / ".oloproof" / "ledger" / "data.mdb").read_bytes()
    assert secret.encode() not in data
    assert secret.encode() not in archive.read_bytes()


def redacted_count(result: Result) -> int:
    found = [int(m.group(1)) for line in result.lines if (m := REDACTED.match(line))]
    assert len(found) == 1, result.out
    return found[0]


def test_an_endpoint_echoing_the_header_secret(echo_project: Path, tmp_path: Path) -> None:
    env = {"ECHO_TOKEN": TOKEN}
    run = oloproof("run", "--json", cwd=echo_project, env=env)
    run_id = json.loads(run.out)["run_id"]
    assert json.loads(run.out)["redacted"] == 4  # twice in the 200 answer, twice in the 400
    report = oloproof("inspect", run_id, cwd=echo_project, env=env)
    assert redacted_count(report) == 4

    refused = oloproof("inspect", run_id, "--case", "echo_refused", cwd=echo_project)
    answered = oloproof("inspect", run_id, "--case", "echo_ok", cwd=echo_project)
    assert "token not accepted: Bearer [redacted]" in refused.out, refused.out
    assert "ok, you sent Bearer [redacted] (again: Bearer [redacted])" in answered.out
    failures = oloproof("inspect", run_id, "--failures", cwd=echo_project)
    archive = tmp_path / "echo.oloarchive"
    exported = oloproof("ledger", "export", "--all", "--to", str(archive), cwd=echo_project)
    assert exported.code == 0, exported.err
    printed = everything_printed(run, report, refused, answered, failures, exported)
    assert_nowhere(TOKEN, echo_project, printed, archive)


def test_a_judge_repeating_its_key_in_a_valid_verdict(tmp_path: Path) -> None:
    def repeating(request: RecordedRequest) -> Reply:
        return verdict(True, reason=f"judged with {request.headers['authorization']}")

    with serving_judge_gate(tmp_path) as (root, server):
        server.default = repeating
        env = {"JUDGE_GATE_KEY": JUDGE_KEY}
        run = oloproof("run", cwd=root, env=env)
        assert run.code in (0, 3), run.err
        assert redacted_count(run) == 12  # one reason per case, each repeating the key
        assert all(r.headers["authorization"] == f"Bearer {JUDGE_KEY}" for r in server.requests)
        run_id = re.search(r"run_[0-9A-Z]{26}", run.lines[0]).group(0)  # type: ignore[union-attr]
        case = oloproof("inspect", run_id, "--case", "sync_interval", cwd=root)
        judgment = re.search(r"groundedness: passed  (sha256:[0-9a-f]{64})", case.out)
        assert judgment is not None, (case.out, case.err)
        shown = oloproof("inspect", judgment.group(1), cwd=root)
        assert '"explanation": "judged with Bearer [redacted]"' in shown.out, shown.out
        archive = tmp_path / "judge.oloarchive"
        exported = oloproof("ledger", "export", run_id, "--to", str(archive), cwd=root)
        printed = everything_printed(run, case, shown, exported)
        assert_nowhere(JUDGE_KEY, root, printed, archive)


def test_a_judge_repeating_its_key_in_a_malformed_reply(tmp_path: Path) -> None:
    def malformed(request: RecordedRequest) -> Reply:
        content = json.dumps({"verdict": "pass", "reason": "stated"})
        body = {
            "id": f"reply to {request.headers['authorization']}",
            "choices": [{"message": {"role": "assistant", "content": content}}],
            "usage": [1, 2],
        }
        return raw(json.dumps(body), content_type="application/json")

    with serving_judge_gate(tmp_path) as (root, server):
        server.default = malformed
        run = oloproof("run", cwd=root, env={"JUDGE_GATE_KEY": JUDGE_KEY})
        assert run.code in (0, 3), run.err
        # Before, no body was kept (the judgment held a traceback): nothing was redacted.
        assert redacted_count(run) == 12, run.out
        run_id = re.search(r"run_[0-9A-Z]{26}", run.lines[0]).group(0)  # type: ignore[union-attr]
        case = oloproof("inspect", run_id, "--case", "sync_interval", cwd=root)
        found = re.search(
            r"groundedness: missing \(judge_malformed_response\)  (sha256:\S+)", case.out
        )
        assert found is not None, (case.out, case.err)
        shown = oloproof("inspect", found.group(1), cwd=root)
        assert '\\"id\\": \\"reply to Bearer [redacted]\\"' in shown.out, shown.out
        archive = tmp_path / "judge.oloarchive"
        exported = oloproof("ledger", "export", run_id, "--to", str(archive), cwd=root)
        assert_nowhere(JUDGE_KEY, root, everything_printed(run, case, shown, exported), archive)


def test_ci_files_and_table_exports_hold_the_redacted_values(echo_project: Path) -> None:
    env = {"ECHO_TOKEN": TOKEN}
    ci = ["--junit", "j.xml", "--junit-cases", "--summary", "s.md"]
    run = oloproof("run", *ci, "--json", cwd=echo_project, env=env)
    run_id = json.loads(run.out)["run_id"]
    written = [echo_project / "j.xml", echo_project / "s.md"]
    for fmt in ("csv", "jsonl", "parquet", "trec"):
        done = oloproof("export", run_id, "--format", fmt, "--output", fmt, cwd=echo_project)
        assert done.code == 0, done.err
        written += sorted((echo_project / fmt).iterdir())
    assert TOKEN not in run.out + run.err
    for path in written:
        assert TOKEN.encode() not in path.read_bytes(), path.name
    # The errored case is in the JUnit file with its (redacted) error, and the 200 answer is
    # in the cases table as stored.
    assert "token not accepted: Bearer [redacted]" in (echo_project / "j.xml").read_text()
    assert "ok, you sent Bearer [redacted]" in (echo_project / "jsonl" / "cases.jsonl").read_text()


@pytest.mark.parametrize(
    ("status", "before"),
    [
        # The reply kept with a malformed response: its first 4,000 characters.
        (200, 4000 - len('{"pad": "') - 10),
        # The server's own message quoted in the error: its first 300.
        (400, 300 - 1 - 10),
    ],
    ids=["kept reply", "quoted message"],
)
def test_a_judge_reply_cut_short_never_keeps_the_start_of_its_key(
    tmp_path: Path, status: int, before: int
) -> None:
    # Each cut falls ten characters into the key: redaction, which knows the key whole, would
    # not recognise what was left of it.
    def cut_inside(request: RecordedRequest) -> Reply:
        key = request.headers["authorization"].removeprefix("Bearer ")
        if status == 200:
            return raw(json.dumps({"pad": "p" * before + key}), content_type="application/json")
        body = {"error": {"message": "m" * before + key + " was refused"}}
        return raw(json.dumps(body), status=status, content_type="application/json")

    with serving_judge_gate(tmp_path) as (root, server):
        server.default = cut_inside
        run = oloproof("run", cwd=root, env={"JUDGE_GATE_KEY": JUDGE_KEY})
        assert run.code in (0, 3), run.err
        run_id = re.search(r"run_[0-9A-Z]{26}", run.lines[0]).group(0)  # type: ignore[union-attr]
        case = oloproof("inspect", run_id, "--case", "sync_interval", cwd=root)
        found = re.search(r"groundedness: missing \((\w+)\)  (sha256:\S+)", case.out)
        assert found is not None, (case.out, case.err)
        shown = oloproof("inspect", found.group(2), cwd=root)
        assert "p" * 100 in shown.out or "m" * 100 in shown.out, shown.out  # the text was kept
        archive = tmp_path / "judge.oloarchive"
        exported = oloproof("ledger", "export", run_id, "--to", str(archive), cwd=root)
        printed = everything_printed(run, case, shown, exported)
        assert_nowhere(JUDGE_KEY[:10], root, printed, archive)
