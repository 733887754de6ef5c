"""oloproof.yaml and policy files: every mistake is one sentence naming file, key and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from oloproof.config import load_compare_policy, load_config, load_policy
from oloproof.errors import ConfigError

GOOD = """\
system:
  name: demo
  version: "1"
  callable: app:run
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
  - {type: hit_rate, k: 2}
slices: [metadata.topic]
min_slice_support: 4
policy: policy.yaml
"""


def write(tmp_path: Path, text: str, name: str = "oloproof.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path, loader: object = load_config) -> str:
    with pytest.raises(ConfigError) as info:
        loader(path)  # type: ignore[operator]
    return str(info.value)


def test_good_config_loads(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, GOOD))
    assert config.system.callable == "app:run"
    assert [e.type for e in config.evaluators] == ["contains", "hit_rate"]
    assert config.min_slice_support == 4


def test_unknown_top_level_key_names_key_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + "colour: blue\n")
    assert error_of(path) == f"{path}, line 12: colour: unknown key"


def test_wrong_type_names_key_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("min_slice_support: 4", "min_slice_support: lots"))
    message = error_of(path)
    assert message.startswith(f"{path}, line 10: min_slice_support: ")
    assert "integer" in message


def test_unknown_evaluator_setting_points_at_its_line(tmp_path: Path) -> None:
    path = write(
        tmp_path, GOOD.replace("{type: hit_rate, k: 2}", "{type: hit_rate, k: 2, depth: 3}")
    )
    assert error_of(path) == f"{path}, line 8: evaluators.1.depth: unknown key"


def test_missing_required_key(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace('  version: "1"\n', ""))
    assert error_of(path) == f"{path}, line 1: system.version: required key is missing"


def test_two_system_kinds_are_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        GOOD.replace("  callable: app:run\n", "  callable: app:run\n  rag: {object: app:Rag}\n"),
    )
    message = error_of(path)
    assert message.startswith(f"{path}, line 1: system: ")
    assert "exactly one of callable, http, rag or model (found callable, rag)" in message


def test_bad_yaml_names_line(tmp_path: Path) -> None:
    path = write(tmp_path, "system: [unclosed\n")
    message = error_of(path)
    assert message.startswith(f"{path}, line 2: not valid YAML")


def test_missing_file(tmp_path: Path) -> None:
    assert error_of(tmp_path / "nope.yaml") == f"{tmp_path / 'nope.yaml'}: no such file"


POLICY = """\
version: 1
confidence_level: 0.95
block_on: [FAIL, INSUFFICIENT_EVIDENCE, MANUAL_REVIEW]
rules:
  - id: answer-floor
    metric: answer_correct
    min: 0.70
  - id: citations-valid
    metric: citations_valid
    kind: observed_count
    max_failures: 0
"""


def test_policy_loads_and_rejects_bad_rules(tmp_path: Path) -> None:
    policy = load_policy(write(tmp_path, POLICY, "policy.yaml"))
    assert [r.id for r in policy.rules] == ["answer-floor", "citations-valid"]
    bad = write(tmp_path, POLICY.replace("    max_failures: 0\n", ""), "bad.yaml")
    message = error_of(bad, load_policy)
    assert message.startswith(f"{bad}, line 8: rules.1: ")
    assert "an observed_count rule needs max_failures" in message
    twice = write(tmp_path, POLICY.replace("citations-valid", "answer-floor"), "twice.yaml")
    assert "rule id 'answer-floor' is also rule 0's" in error_of(twice, load_policy)


def test_numbers_that_cannot_be_recorded_are_refused_at_their_line(tmp_path: Path) -> None:
    config = write(tmp_path, GOOD + "timeout_s: .inf\n")
    assert error_of(config) == f"{config}, line 12: timeout_s: Input should be a finite number"
    assert POLICY.count("min: 0.70") == 1
    policy = write(tmp_path, POLICY.replace("min: 0.70", "min: .nan"), "nan.yaml")
    assert error_of(policy, load_policy) == (
        f"{policy}, line 7: rules.0.min: Input should be a finite number"
    )


def test_compare_policy_margin_in_points(tmp_path: Path) -> None:
    text = (
        "version: 1\nrules:\n  - id: answers-not-worse\n    metric: answer_correct\n"
        "    non_inferiority: {margin: 5}\n"
    )
    policy = load_compare_policy(write(tmp_path, text, "compare.yaml"))
    assert policy.rules[0].test == ("non_inferiority", 0.05)
    both = text + "    superiority: {margin: 1}\n"
    message = error_of(write(tmp_path, both, "both.yaml"), load_compare_policy)
    assert "exactly one of non_inferiority, superiority or equivalence" in message
