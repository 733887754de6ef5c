"""A first wait before a retry above the longest wait between tries (``MAX_BACKOFF_S``, 30 s) is
refused at its line, naming the cap, exit 2, nothing written: an http system's ``backoff_s``, a
judge's or a model system's ``retry_backoff_s``. Real CLI.

(Before: ``backoff_s: 31`` was accepted, and every wait was cut to 30 s without a word: the
file said 31, the run waited 30.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

from oloproof.providers import MAX_BACKOFF_S

HTTP = """\
system:
  name: echo
  version: "1"
  http:
    url: http://127.0.0.1:9/answer
    backoff_s: %s
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
"""
JUDGE = """\
system: {name: toy, version: "1", callable: app:run}
evaluators:
  - type: answer_judge
    provider: openai
    model: m
    base_url: http://127.0.0.1:9/v1
    api_key_env: null
    retry_backoff_s: %s
"""
MODEL = """\
system:
  name: m
  version: "1"
  model:
    provider: openai
    model: m
    prompt: "{{ q }}"
    retry_backoff_s: %s
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
"""


@pytest.mark.parametrize(
    ("config", "at"),
    [
        (HTTP, "line 6: system.http.backoff_s"),
        (JUDGE, "line 8: evaluators.0.retry_backoff_s"),
        (MODEL, "line 8: system.model.retry_backoff_s"),
    ],
)
def test_a_first_wait_above_the_cap_is_refused(tmp_path: Path, config: str, at: str) -> None:
    assert MAX_BACKOFF_S == 30
    root = toy_project(tmp_path / "p", config=config % "31")
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == (
        f"error: {root}/oloproof.yaml, {at}: 31 s is longer than the longest wait between "
        "tries, 30 s, at which every wait stops: the retries would wait 30 s, not 31; give "
        "at most 30\n"
    )
    assert not (root / ".oloproof").exists()


@pytest.mark.parametrize("config", [HTTP, JUDGE, MODEL])
def test_the_cap_itself_is_taken(tmp_path: Path, config: str) -> None:
    root = toy_project(tmp_path / "p", config=config % "30")
    done = oloproof("run", "--dry-run", cwd=root)
    assert done.code == 0, done.out + done.err
