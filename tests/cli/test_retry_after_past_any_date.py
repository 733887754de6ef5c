"""A 429 whose Retry-After is an HTTP date too far off for Python's dates, through the real CLI.

``email.utils`` reads a year of eleven digits, then raises OverflowError making the date: that
escaped the provider's call, so the judgment was missing as ``evaluator_raised``
(``OverflowError: signed integer is greater than maximum``), the call never tried again though
the server answered the next one. A wait past any date is longer than the client waits for, so
the doubling backoff applies, as for any Retry-After beyond the cap.
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_judge_failures import case, run, write_project

from oloproof.testing import Reply, ScriptedJudgeServer, verdict

FAR_OFF = "Mon, 01 Jan 99999999999 00:00:00 GMT"


def test_a_retry_after_past_any_date_falls_back_to_the_backoff(tmp_path: Path) -> None:
    limited = Reply("rate_limit", text="slow down", status=429, headers=(("retry-after", FAR_OFF),))
    with ScriptedJudgeServer() as server:
        server.script(limited, verdict(True, "The passage says five minutes."))
        root = write_project(
            tmp_path / "p", server.openai_base_url, [case("c0", "Every five minutes.")]
        )
        result = run(root, "run")
        shown = run(root, "inspect", "latest", "--case", "c0")
        tries = len(server.requests)
    assert result.code == 0, result.out + result.err
    assert tries == 2
    assert "evaluator_raised" not in result.out + shown.out
    assert any(line.startswith("    groundedness: passed") for line in shown.lines), shown.out
