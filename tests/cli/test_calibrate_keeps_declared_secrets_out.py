"""``oloproof calibrate`` keeps out the secrets the project declares, as a run does.

A labels file is often made of a system's past answers, and an answer may hold a value the
project lists under ``secrets:`` (a key a tool call echoed); a judge may repeat it. ``calibrate``
registered only the judge's own key: with ``secrets: [SVC]``, an example whose id held SVC's
value had it stored in the calibration's ``disagreements`` and printed on its
``disagreements:`` line, and a judge that answered none printed
``first, on ex-svc-Q7x9-hidden: …`` and the reply repeating the answer, the value in it.

``calibrate`` now registers the values a run of the project keeps out before it reads the
labels, and refuses a declared value too short to be kept out, as a run does.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, serving_judge_gate, stored_bytes

from oloproof.testing import RecordedRequest, Reply, answer

SECRET = "svc-Q7x9-hidden"
ENV = {"SVC": SECRET, "JUDGE_GATE_KEY": "judge-gate-key-123456"}


def _declared_and_labelled(root: Path) -> None:
    """``secrets: [SVC]`` in ``root``'s project; its labels' ids and answers hold SVC's value
    (the example's judge then fails every answer, the human passes among them disagreeing)."""
    with (root / "oloproof.yaml").open("a") as config:
        config.write("secrets: [SVC]\n")
    labels = [json.loads(line) for line in (root / "labels.jsonl").read_text().splitlines()]
    for example in labels:
        example["id"] = f"{example['id']}-{SECRET}"
        example["output"]["answer"] += f" (ticket {SECRET})"
    (root / "labels.jsonl").write_text("".join(json.dumps(e) + "\n" for e in labels))


def test_a_calibration_keeps_the_declared_value_out(tmp_path: Path) -> None:
    with serving_judge_gate(tmp_path) as (root, _):
        _declared_and_labelled(root)
        done = oloproof(
            "calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl",
            cwd=root, env=ENV,
        )  # fmt: skip
    assert done.code == 0, done.out + done.err
    (line,) = (line for line in done.lines if line.startswith("  disagreements: "))
    assert line.startswith("  disagreements: grounded-01-[redacted], "), done.out
    assert SECRET not in done.out + done.err
    assert SECRET.encode() not in stored_bytes(root)


def test_a_judge_that_answers_none_is_reported_without_it(tmp_path: Path) -> None:
    def repeating(request: RecordedRequest) -> Reply:
        return answer("I read: " + request.user_message)  # not a verdict

    with serving_judge_gate(tmp_path) as (root, server):
        _declared_and_labelled(root)
        server.default = repeating
        done = oloproof(
            "calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl",
            cwd=root, env=ENV,
        )  # fmt: skip
    assert done.code == 2, done.out + done.err
    assert "first, on grounded-01-[redacted]: the reply is not one JSON object" in done.err
    assert SECRET not in done.out + done.err


def test_a_declared_value_too_short_is_refused(tmp_path: Path) -> None:
    with serving_judge_gate(tmp_path) as (root, server):
        _declared_and_labelled(root)
        done = oloproof(
            "calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl",
            cwd=root, env={**ENV, "SVC": "abc"},
        )  # fmt: skip
        asked = len(server.requests)
    assert done.code == 2, done.out + done.err
    assert "secrets: the value of SVC is shorter than 6 characters" in done.err, done.err
    assert asked == 0
