"""A judge's or a model system's ``price_per_input_token`` given without
``price_per_output_token`` (or the other way round) is refused at its line, exit 2: a cost is
reckoned from both, so one alone would be recorded nowhere. Real CLI, judge on 127.0.0.1.

(Before: it was accepted, and every judgment and the report's Judges table showed no cost,
'—', without a word about the price given.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

JUDGE = """\
system: {name: toy, version: "1", callable: app:run}
evaluators:
  - type: answer_judge
    provider: openai
    model: m
    base_url: http://127.0.0.1:9/v1
    api_key_env: null
    %s: 0.000003
"""
MODEL = """\
system:
  name: m
  version: "1"
  model:
    provider: openai
    model: m
    prompt: hi
    %s: 0.000003
"""
BOTH = ("price_per_input_token", "price_per_output_token")


@pytest.mark.parametrize(
    ("config", "at"), [(JUDGE, "line 8: evaluators.0"), (MODEL, "line 8: system.model")]
)
@pytest.mark.parametrize(("given", "missing"), [BOTH, BOTH[::-1]])
def test_one_price_alone_is_refused(
    tmp_path: Path, config: str, at: str, given: str, missing: str
) -> None:
    root = toy_project(tmp_path / "p", config=config % given)
    done = oloproof("run", "--dry-run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == (
        f"error: {root}/oloproof.yaml, {at}.{given}: given without {missing}, and a cost needs "
        f"both: none would be recorded or shown; give {missing} too (0 for a side that costs "
        "nothing)\n"
    )
    assert not (root / ".oloproof").exists()


def test_both_prices_are_taken(tmp_path: Path) -> None:
    config = JUDGE % BOTH[0] + "    price_per_output_token: 0.000015\n"
    root = toy_project(tmp_path / "p", config=config)
    done = oloproof("run", "--dry-run", cwd=root)
    assert done.code == 0, done.out + done.err
