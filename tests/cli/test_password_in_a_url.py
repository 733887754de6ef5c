"""A password written in an HTTP system's URL, or in a judge's base_url, is refused at its key
and line, through the real CLI, without the password in the sentence and before anything is
recorded; the HTTP system's URL is checked as a judge's base_url is (a port past 65535).

Before the fix ``url: http://alice:PASSWORD@host/`` ran: the password was stored in the ledger
with the run's config and printed in every case's error (``POST http://alice:PASSWORD@...
failed``) by ``run`` and ``inspect``; ``url: http://127.0.0.1:99999/`` ran too, every case
errored on a URL no request can be sent to.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, oloproof, serving_judge_gate, toy_project

PASSWORD = "hunter2-not-for-the-ledger"
REFUSAL = (
    "the URL holds a password (user:password@host), which would be stored with every run and "
    "printed in its errors: give it through an environment variable instead (a judge's "
    "api_key_env, an http system's headers with ${NAME})"
)


@pytest.mark.parametrize(
    ("url", "sentence"),
    [
        (f"http://alice:{PASSWORD}@127.0.0.1:9/", REFUSAL),
        (
            "http://127.0.0.1:99999/",
            "no request can be sent there: the port 99999 is outside 1..65535",
        ),
    ],
)
def test_an_http_url_that_cannot_be_sent_as_written_is_refused(
    tmp_path: Path, url: str, sentence: str
) -> None:
    config = TOY_CONFIG.replace("  callable: app:run\n", f"  http: {{url: '{url}'}}\n")
    root = toy_project(tmp_path, config=config)
    for args in (("run",), ("run", "--dry-run")):
        result = oloproof(*args, cwd=root)
        expected = f"error: {root}/oloproof.yaml, line 4: system.http.url: {sentence}\n"
        assert (result.code, result.out, result.err) == (2, "", expected), args
    assert not (root / ".oloproof").exists()


def test_a_judge_base_url_holding_a_password_is_refused(tmp_path: Path) -> None:
    with serving_judge_gate(tmp_path) as (root, server):
        config = root / "oloproof.yaml"
        text = config.read_text(encoding="utf-8").replace("http://", f"http://judge:{PASSWORD}@")
        config.write_text(text, encoding="utf-8")
        result = oloproof("run", cwd=root, env={"JUDGE_GATE_KEY": "sk-test"})
        line = next(n for n, row in enumerate(text.splitlines(), 1) if PASSWORD in row)
        expected = f"error: {config}, line {line}: evaluators.0.base_url: {REFUSAL}\n"
        assert (result.code, result.out, result.err) == (2, "", expected)
        assert server.requests == []
        assert not (root / ".oloproof").exists()
