"""A judge key too short to be kept out is refused before a run, not stored. Real CLI runs in
a subprocess, the judge a real HTTP server on 127.0.0.1.

(Before: ``api_key_env: JUDGE_KEY`` with JUDGE_KEY=abc12 ran, exit 0, and the judge server's
refusal naming the key it was sent, ``Incorrect API key provided: abc12``, was stored in the
judgment as it was: values shorter than six characters are not searched for, and nothing said
that the key, which the guide says is never stored or printed, was not kept out.)
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_judge_failures import case, write_project
from tests.cli.test_judge_key_in_the_first_output import stored_bodies
from tests.support import Result, oloproof

from oloproof.testing import RecordedRequest, Reply, ScriptedJudgeServer, fail


def refusing(request: RecordedRequest) -> Reply:
    """A 401 naming the key the request carried, as hosted APIs word it."""
    sent = request.headers["authorization"].split()[-1]
    return fail(401, f"Incorrect API key provided: {sent}")


def _run_with_key(tmp_path: Path, key: str) -> tuple[Path, Result, int]:
    """A one-case project judged by a server that refuses every key, run with JUDGE_KEY=key:
    the project, the run and how many requests the server was sent."""
    with ScriptedJudgeServer(default=refusing) as server:
        root = write_project(
            tmp_path / "p",
            server.openai_base_url,
            [case("c0", "Every five minutes.")],
            api_key_env="JUDGE_KEY",
            max_retries=0,
        )
        done = oloproof("run", cwd=root, env={"JUDGE_KEY": key})
        return root, done, len(server.requests)


def test_a_short_judge_key_stops_the_run_before_anything_is_written(tmp_path: Path) -> None:
    root, done, asked = _run_with_key(tmp_path, "abc12")
    assert (done.code, done.out, asked) == (2, "", 0)
    assert "abc12" not in done.err
    assert done.err.startswith("error: "), done.err
    assert done.err.endswith(
        "the environment variable JUDGE_KEY, which should hold the key, holds fewer than 6 "
        "characters, too short to be kept out of what a run stores and prints (so short a text "
        "occurs in ordinary text); give it a longer value, or api_key_env: null for a server "
        "that takes no key\n"
    ), done.err
    assert not (root / ".oloproof").exists()


def test_a_judge_key_long_enough_is_kept_out_of_the_refusal_stored(tmp_path: Path) -> None:
    root, done, _ = _run_with_key(tmp_path, "abc123")
    assert done.code == 0, done.err
    stored = stored_bodies(root)
    assert "Incorrect API key provided: [redacted]" in stored
    assert "abc123" not in stored + done.out + done.err
