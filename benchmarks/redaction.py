"""What redaction costs once a secret is registered, in one process.

    python -P benchmarks/redaction.py [N]

Prints: a run of N cases of a trivial system with one evaluator (execute, record, judge,
report), without a secret and with one registered, in turn, as a run whose HTTP header or
judge reads one from the environment has it (every string it stores is then searched); and
the time ``redact`` takes over bodies of each kind: small strings holding none of the
characters an escaped form needs (the common case), the same with a URL (``%`` and ``&``:
searched for every form), a reply of 4,000 characters of JSON text and one of 1 MiB, and
``cut`` of the 4,000-character one at 300; how long ``register`` takes (it compiles the
value's pattern); and the worst cases: 1 MiB of near misses of a value with twelve
backslashes, ampersands or percent signs in a row, each of which must be searched in one
pass (it fails, with the time, if one takes more than WORST_BOUND_S, a bound far above what
a search in one pass takes and far below what trying every way of splitting the text would).
Only public functions are called, so the same script measures any version.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from oloproof import aio, redaction
from oloproof.runner import execute_run, plan_run
from oloproof.store import open_project_ledger

SECRET = "sk-live/ABCDEF123456+xyz"
APP = """
from oloproof import system

@system(name="trivial", version="1")
def answer(case):
    return {"answer": case["q"]}
"""
CONFIG = """system: {name: b, version: '1', callable: 'app:answer'}
concurrency: 8
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
"""
# A model's reply as a provider keeps it: JSON text, with an escape in it.
REPLY = json.dumps({"choices": [{"message": {"content": "word " * 780}}], "id": "a\\/b"})
# Values with a run of characters escapes are made of, and a near miss of each, repeated to
# 1 MiB: the text a reply could hold to make a search slow.
WORST = {
    "backslashes": ("pw" + "\\" * 12 + "qq", "pw" + "\\" * 100 + "x"),
    "escaped backslashes": ("pw" + "\\" * 12 + "qq", "pw" + "\\u005c" * 40 + "%5C" * 40 + "x"),
    "ampersands": ("ab" + "&" * 12 + "yz", "ab" + "\\u0026amp;" * 14 + "x"),
    "percent signs": ("ab" + "%" * 12 + "yz", "ab" + "%255Cu0025" * 14 + "x"),
}
WORST_BOUND_S = 20.0


def run_seconds(n: int) -> float:
    """A cold run of ``n`` cases in a project of its own, from the plan on."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "app.py").write_text(APP)
        (root / "oloproof.yaml").write_text(CONFIG)
        with (root / "cases.jsonl").open("w") as f:
            for i in range(n):
                case = {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}}
                f.write(json.dumps(case) + "\n")
        sys.path.insert(0, str(root))
        sys.modules.pop("app", None)
        plan = plan_run(root / "oloproof.yaml")
        ledger = open_project_ledger(root)
        start = time.perf_counter()
        aio.run(execute_run(ledger, plan))
        elapsed = time.perf_counter() - start
        ledger.close()
        sys.path.remove(str(root))
    return elapsed


def per_call(work: Callable[[], Any], repeat: int) -> float:
    """The median time of one call of ``work``, in microseconds, over five batches."""
    batches = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            work()
        batches.append((time.perf_counter() - start) / repeat)
    return statistics.median(batches) * 1e6


def bodies() -> dict[str, tuple[Any, int]]:
    """Bodies to redact, each with how many times to redact it per batch."""
    plain = {
        "identity": "b3:" + "0123456789abcdef" * 4,
        "output": {"answer": "The sync interval is 15 minutes.", "citations": ["d1", "d2"]},
        "artifacts": {"retrieval/v1": [{"doc_id": f"d{i}", "score": 1.0} for i in range(5)]},
        "error": None,
    }
    with_url = {**plain, "source": "https://docs.example.com/a?b=1&c=x%20y"}
    return {
        "small body, no escape opener": (plain, 20_000),
        "small body with a URL (% and &)": (with_url, 20_000),
        f"JSON reply of {len(REPLY):,} characters": (REPLY, 2_000),
        "JSON reply of 1 MiB": ((REPLY * 300)[: 2**20], 5),
    }


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000
    run_seconds(min(n, 200))  # imports and first-call costs, outside the measurements
    # Runs without and with the secret in turn, so that a machine getting busier or quieter
    # weighs on both alike; the median of each.
    without, with_secret = [], []
    for _ in range(5):
        redaction.forget_all()
        without.append(run_seconds(n))
        redaction.register(SECRET)
        with_secret.append(run_seconds(n))
    bare, redacting = statistics.median(without) / n, statistics.median(with_secret) / n
    print(
        f"{n} cases, trivial system, one evaluator: {bare * 1e3:.3f} ms/case without a secret, "
        f"{redacting * 1e3:.3f} ms/case with one registered ({(redacting - bare) * 1e3:+.3f})"
    )
    for label, (body, repeat) in bodies().items():
        print(f"redact {label}: {per_call(lambda b=body: redaction.redact(b), repeat):.2f} µs")
    cut = per_call(lambda: redaction.cut(REPLY, 300), 2_000)
    print(f"cut of the {len(REPLY):,}-character reply at 300: {cut:.2f} µs")
    worst_cases()


def worst_cases() -> None:
    """How long ``register`` takes, and the search of 1 MiB of near misses (module
    docstring)."""
    # Values registered nowhere else here: re keeps the patterns it compiled.
    for value in ("sk-test/QWERTY987654+abc", 'sk-"q"\\s/p+a ce\té😀%&<x>'):
        redaction.forget_all()
        start = time.perf_counter()
        redaction.register(value)
        took = time.perf_counter() - start
        print(f"register a value of {len(value)} characters: {took * 1e3:.1f} ms")
    # A private key in a variable named like a credential: recognised as it is (not escaped)
    # when registered from the environment, in every form when a project lists it.
    pem = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"] * 52)
    for escaped in (False, True):
        redaction.forget_all()
        start = time.perf_counter()
        redaction.register(pem, escaped=escaped)
        took = time.perf_counter() - start
        how = "in every form" if escaped else "as it is"
        print(f"register a value of {len(pem):,} characters {how}: {took * 1e3:.1f} ms")
    for label, (value, near) in WORST.items():
        redaction.forget_all()
        redaction.register(value)
        text = (near * (2**20 // len(near) + 1))[: 2**20]
        start = time.perf_counter()
        redaction.redact_text(text)
        took = time.perf_counter() - start
        print(f"redact 1 MiB of near misses of {label}: {took * 1e3:.0f} ms")
        assert took < WORST_BOUND_S, f"{label}: {took:.1f} s, more than {WORST_BOUND_S:g} s"


if __name__ == "__main__":
    main()
