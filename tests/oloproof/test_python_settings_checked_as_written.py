"""Settings given through the Python API are checked as oloproof.yaml's are: ``ModelClient``'s
keys and ``plan_run``'s ``overrides`` refuse one token price without the other (and a price per
million, a backoff past the cap, a base_url reading a variable) in one ``ConfigError`` naming
the field. Each call runs in a Python process of its own, as a user's script would.

(Before: both skipped the checks made only on the file the user wrote: ``ModelClient(...,
price_per_input_token=3e-06)`` and ``plan_run(..., overrides={"system.model.
price_per_input_token": 3e-06})`` were taken, and no cost was ever recorded or shown;
``retry_backoff_s=31`` waited 30; and a refusal of ``overrides`` printed pydantic's whole
report, its 'For further information visit' line included.)
"""

from __future__ import annotations

from pathlib import Path

from tests.support import SAID, api_said

CONFIG = """\
system:
  name: m
  version: "1"
  model:
    provider: openai
    model: m
    base_url: http://127.0.0.1:9/v1
    api_key_env: null
    prompt: "{{ q }}"
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
"""
SCRIPT = (
    """
import json, oloproof
"""
    + SAID
    + """
KEYS = {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
for extra in (
    {"price_per_input_token": 3e-06},
    {"price_per_input_token": 3, "price_per_output_token": 15},
    {"retry_backoff_s": 31},
    {"base_url": "http://127.0.0.1:9/${VER}"},
):
    print(json.dumps(said(lambda: oloproof.ModelClient(**{**KEYS, **extra}))))
for overrides in (
    {"system.model.price_per_output_token": 3e-06},
    {"evaluators": [{"type": "answer_judge", "provider": "openai", "model": "m",
                     "price_per_input_token": 3e-06}]},
    {"concurrency": "2"},
    {"system.model.price_per_input_token": 3e-06, "system.model.price_per_output_token": 0},
):
    print(json.dumps(said(lambda: oloproof.plan_run("oloproof.yaml", overrides=overrides))))
"""
)
ONE_PRICE = (
    "given without {other}, and a cost needs both: none would be recorded or shown; give "
    "{other} too (0 for a side that costs nothing)"
)


def test_python_settings_are_checked_as_the_file_is(tmp_path: Path) -> None:
    (tmp_path / "oloproof.yaml").write_text(CONFIG)
    (tmp_path / "cases.jsonl").write_text(
        '{"id": "c1", "input": {"q": "x"}, "expected": {"answer": "x"}}\n'
    )
    said = api_said(SCRIPT, tmp_path)
    input_alone = ONE_PRICE.format(other="price_per_output_token")
    output_alone = ONE_PRICE.format(other="price_per_input_token")
    assert said == [
        ["ConfigError", f"ModelClient: price_per_input_token: {input_alone}"],
        [
            "ConfigError",
            "ModelClient: price_per_input_token: 3 a token is 3,000,000 a million tokens, most "
            "likely a price per million tokens as providers quote them: give the price of one "
            "token (3e-06 for 3 a million); in a currency whose unit is that small, give prices "
            "in thousands of it (the cost then reads in thousands too)",
        ],
        [
            "ConfigError",
            "ModelClient: retry_backoff_s: 31 s is longer than the longest wait between tries, "
            "30 s, at which every wait stops: the retries would wait 30 s, not 31; give at most "
            "30",
        ],
        [
            "ConfigError",
            "ModelClient: base_url: ${VER} is sent as written: only an http system's header "
            "values read ${NAME} from the environment; give the URL itself, and the name of the "
            "key's variable in api_key_env",
        ],
        [
            "ConfigError",
            "plan_run(): overrides: system.model.price_per_output_token: " + output_alone,
        ],
        [
            "ConfigError",
            "plan_run(): overrides: evaluators.0.price_per_input_token: " + input_alone,
        ],
        ["ConfigError", "plan_run(): overrides: concurrency: Input should be a valid integer"],
        ["returned", "RunPlan"],
    ]
    assert not (tmp_path / ".oloproof").exists()
