"""A judge's or a model system's price per token of 0.01 or more (10,000 a million tokens) is
refused at its key and line, saying the unit: it is the per-million figure providers quote.
Real CLI run.

(Before: `price_per_input_token: 3` and `price_per_output_token: 15`, Claude's prices per
million tokens in dollars, were taken per token, and every judgment's cost, the run's and
`oloproof runs`' totals read a million times too high, with exit 0.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

JUDGE = """\
system: {name: toy, version: "1", callable: app:run}
evaluators:
  - type: answer_judge
    provider: anthropic
    model: claude-sonnet
    base_url: http://127.0.0.1:9
    price_per_input_token: %s
    price_per_output_token: %s
"""

MODEL = """\
system:
  name: toy
  version: "1"
  model:
    provider: openai
    model: gpt
    base_url: http://127.0.0.1:9/v1
    prompt: "{{ q }}"
    price_per_input_token: %s
    price_per_output_token: %s
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
"""


@pytest.mark.parametrize(
    ("config", "at", "prices", "said"),
    [
        (
            JUDGE,
            "line 7: evaluators.0.price_per_input_token",
            ("3", "15"),
            "3 a token is 3,000,000 a million tokens, most likely a price per million tokens as "
            "providers quote them: give the price of one token (3e-06 for 3 a million)",
        ),
        (
            MODEL,
            "line 10: system.model.price_per_output_token",
            ("0.000003", "0.01"),
            "0.01 a token is 10,000 a million tokens, most likely a price per million tokens as "
            "providers quote them: give the price of one token (1e-08 for 0.01 a million)",
        ),
    ],
)
def test_a_price_per_million_tokens_is_refused(
    tmp_path: Path, config: str, at: str, prices: tuple[str, str], said: str
) -> None:
    root = toy_project(tmp_path / "p", config=config % prices)
    for command in (("run",), ("run", "--dry-run")):
        result = oloproof(*command, cwd=root)
        assert (result.code, result.out) == (2, ""), result.out + result.err
        assert result.err == (
            f"error: {root}/oloproof.yaml, {at}: {said}; in a currency whose unit is that "
            "small, give prices in thousands of it (the cost then reads in thousands too)\n"
        )
    assert not (root / ".oloproof").exists()


def test_a_price_per_token_is_taken(tmp_path: Path) -> None:
    # $600 a million output tokens, the dearest model's price, is 0.0006 a token.
    root = toy_project(tmp_path / "p", config=JUDGE % ("0.00015", "0.0006"))
    result = oloproof("run", "--dry-run", cwd=root)
    assert result.code == 0, result.out + result.err
