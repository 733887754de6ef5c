"""Judge settings that validate but could never be sent, through the real CLI.

A port past 65535, an ``extra_body`` value JSON cannot carry (bytes, NaN, a date, a set) or a
key no HTTP header can carry passed validation: ``run --dry-run`` exited 0, ``run`` marked every
judgment ``evaluator_raised`` without a word on what was wrong, and ``calibrate`` printed a
traceback (exit 1). Each is bad input: one sentence naming the file, line and field (or the
key's variable, never its value), exit 2, before any call, under every command alike.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import copy_example, oloproof, serving_judge_gate

ENV = {"JUDGE_GATE_KEY": "sk-judge-gate-0123456789"}
COMMANDS = {
    "dry_run": ("run", "--dry-run"),
    "run": ("run",),
    "calibrate": ("calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl"),
}

RETRIES = "    max_retries: 1\n"

# (a line of the judge's entry, what it becomes, and the sentence that refuses it)
SETTINGS = {
    "port_out_of_range": (
        "127.0.0.1:8767/v1",
        "127.0.0.1:99999/v1",
        "line 11: evaluators.0.base_url: no request can be sent there: the port 99999 is "
        "outside 1..65535",
    ),
    "bytes": (
        RETRIES,
        RETRIES + "    extra_body: {tag: !!binary aGVsbG8=}\n",
        "line 14: evaluators.0.extra_body.tag: bytes (YAML's !!binary), which a JSON request "
        "cannot carry",
    ),
    "nan": (
        RETRIES,
        RETRIES + "    extra_body: {seed: .nan}\n",
        "line 14: evaluators.0.extra_body.seed: nan is not a number a JSON request can carry",
    ),
    "infinity_in_a_list": (
        RETRIES,
        RETRIES + "    extra_body: {stop: [1, -.inf]}\n",
        "line 14: evaluators.0.extra_body.stop.1: -inf is not a number a JSON request can carry",
    ),
    # A bare date is refused as YAML 1.1 alone reads it as one (yamlfile); a tagged one is a date.
    "date": (
        RETRIES,
        RETRIES + "    extra_body: {since: !!timestamp 2024-01-01}\n",
        "line 14: evaluators.0.extra_body.since: a date, which a JSON request cannot carry",
    ),
    "set": (
        RETRIES,
        RETRIES + "    extra_body: {tags: !!set {a, b}}\n",
        "line 14: evaluators.0.extra_body.tags: a set (YAML's !!set), which a JSON request "
        "cannot carry",
    ),
    "half_a_character": (
        RETRIES,
        RETRIES + '    extra_body: {stop: "end \\ud83d"}\n',
        "line 14: evaluators.0.extra_body.stop: the text holds a lone surrogate escape",
    ),
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("setting", list(SETTINGS))
def test_settings_that_cannot_be_sent_are_refused_when_loaded(
    tmp_path: Path, setting: str, command: str
) -> None:
    root = copy_example("judge_gate", tmp_path)
    config = root / "oloproof.yaml"
    old, new, sentence = SETTINGS[setting]
    text = config.read_text(encoding="utf-8")
    assert old in text
    config.write_text(text.replace(old, new), encoding="utf-8")
    result = oloproof(*COMMANDS[command], cwd=root, env=ENV)
    # Before: dry run exit 0; run exit 1 with every judgment evaluator_raised; calibrate a
    # traceback and exit 1 (for .nan, .inf, a date or a set, a sentence naming no file).
    assert result.code == 2, result.out + result.err
    assert result.err.startswith(f"error: {config}, {sentence}"), result.err
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err
    assert not (root / ".oloproof").exists()  # refused before any ledger is made


# A key whose text no header can carry, and what the refusal says of it. A key ending in white
# space (a line of a .env file, say) failed every call before it was sent, as
# `judge_request_failed` naming no cause.
UNSENDABLE_KEYS = {
    "non_ascii": ("sk-ключ-0123456789abcdef", "a character outside ASCII"),
    "trailing_space": ("sk-key-0123456789abcdef ", "white space at its end"),
    "trailing_tab": ("sk-key-0123456789abcdef\t", "white space at its end"),
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("name", list(UNSENDABLE_KEYS))
def test_a_key_no_header_can_carry_is_refused_before_any_call(
    tmp_path: Path, command: str, name: str
) -> None:
    key, fault = UNSENDABLE_KEYS[name]
    with serving_judge_gate(tmp_path) as (root, server):
        result = oloproof(*COMMANDS[command], cwd=root, env={"JUDGE_GATE_KEY": key})
        calls = len(server.requests)
    # Before: run exit 1 with every judgment evaluator_raised; calibrate a traceback, exit 1.
    assert result.code == 2, result.out + result.err
    assert calls == 0
    assert "Traceback" not in result.err and len(result.err.strip().splitlines()) == 1
    assert result.err.startswith(
        f"error: {root / 'oloproof.yaml'}, line 8: evaluators.0: openai model word-overlap-judge "
        "at "
    ), result.err
    assert result.err.rstrip().endswith(
        f"the environment variable JUDGE_GATE_KEY, which should hold the key, holds {fault}, "
        "which an HTTP header cannot carry"
    ), result.err
    assert "ключ" not in result.err and "0123456789abcdef" not in result.err
    assert not (root / ".oloproof").exists()  # refused before any ledger is made
