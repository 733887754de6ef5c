"""Projects the Ray engine's tests run, written into a folder: a plain callable system with
cases that raise every kind of exception, and a small staged system.

The systems find their control files (``hold``, ``victim.pid``...) beside their own module,
so they behave the same in a Ray worker as in the driver: the tests reach a worker through
the project's folder, never through the environment (a worker does not inherit the
driver's).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

CALLABLE_APP = '''
import asyncio
import os
import signal
import threading
import time
from pathlib import Path

from oloproof import Passage

def _here():
    # Not a module constant: the folder's path would be part of the code's fingerprint.
    return Path(__file__).resolve().parent


class Odd(BaseException):
    """Not an Exception at all."""


def _hold(name):
    # Announce this process and wait for good: only killing it, or the run, ends the wait.
    here = _here()
    (here / f"{name}.tmp").write_text(str(os.getpid()))
    os.replace(here / f"{name}.tmp", here / name)
    threading.Event().wait()


def answer(case_input):
    n = case_input["n"]
    kind = case_input.get("do")
    if kind == "value":
        raise ValueError(f"case {n} is unlucky")
    if kind == "exit":
        raise SystemExit(3)
    if kind == "interrupt":
        raise KeyboardInterrupt
    if kind == "odd":
        raise Odd("an odd one")
    if kind == "cancel":
        raise asyncio.CancelledError()
    if kind == "nested":
        try:
            {}["missing"]
        except KeyError as exc:
            raise RuntimeError("while looking it up") from exc
    if kind == "malformed":
        Passage(doc_id=n)  # a doc_id must be a string: the adapter's contract is broken
    if kind == "victim" and not (_here() / "victim.pid").exists():
        _hold("victim.pid")
    if kind == "doom":
        os.kill(os.getpid(), signal.SIGKILL)
    if kind == "beside":  # in flight for three seconds, its process marked as holding it
        (_here() / f"beside-{os.getpid()}-{n}").write_text("")
        time.sleep(3)
    if kind == "crash":  # kills its process once three "beside" cases run there (or in 5 s)
        until = time.monotonic() + 5
        while time.monotonic() < until:
            if len(list(_here().glob(f"beside-{os.getpid()}-*"))) >= 3:
                break
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGKILL)
    if kind == "block" and (_here() / "hold").exists():
        _hold(f"blocked-{n}")
    return {"answer": f"echo {case_input['q']}"}
'''

STAGED_APP = """
import os
from pathlib import Path

from oloproof import Context, Passage, Retrieval, rag_system

DOCS = [(f"d{i}", f"passage {i} says {' '.join(['word'] * (i % 7 + 1))}.") for i in range(20)]


@rag_system(name="tiny-rag", version="1", depth=4, top_k=2, token_budget=9)
class TinyRag:
    def __init__(self) -> None:
        # Each construction leaves a file named by its process: the model would load here.
        here = Path(__file__).resolve().parent
        with open(here / f"built-{os.getpid()}", "a") as f:
            f.write("built\\n")

    def retrieve(self, input: dict, depth: int) -> Retrieval:
        n = input["n"]
        picked = [DOCS[(n + k) % len(DOCS)] for k in range(depth)]
        passages = tuple(Passage(doc_id=d, text=t, score=float(depth - k)) for k, (d, t) in enumerate(picked))
        return Retrieval(query=input["q"], depth=depth, candidates=passages)

    def generate(self, input: dict, context: Context) -> dict:
        if input["n"] % 10 == 3:
            raise ValueError(f"the model refused case {input['n']}")
        first = context.items[0] if context.items else None
        return {"answer": first.text if first else "none", "citations": [first.doc_id] if first else []}

    def count_tokens(self, passage: Passage) -> int:
        return len((passage.text or "").split())
"""


def write_callable_config(
    root: Path, name: str, engine: dict[str, Any] | None, **more: Any
) -> None:
    """``oloproof.yaml`` in ``root`` for the callable ``app:answer`` named ``name`` over
    ``cases.jsonl``, judged by whether its answer holds the expected text (``answered``); on
    ``engine`` when given, with the ``more`` settings."""
    config: dict[str, Any] = {
        "system": {"name": name, "version": "1", "callable": "app:answer"},
        "dataset": "cases.jsonl",
        "evaluators": [
            {
                "type": "contains",
                "criterion": "answered",
                "field": "answer",
                "expected_field": "answer",
            }
        ],
        **more,
    }
    if engine is not None:
        config["engine"] = engine
    (root / "oloproof.yaml").write_text(json.dumps(config), encoding="utf-8")  # JSON is YAML


def callable_project(
    root: Path, cases: Iterable[dict[str, Any]], engine: dict[str, Any] | None = None
) -> Path:
    """A project whose system is ``app:answer``, over ``cases`` (each an ``n``, a ``q`` and
    what to ``do``), judged by whether the answer holds the expected text."""
    root.mkdir(parents=True)
    (root / "app.py").write_text(CALLABLE_APP, encoding="utf-8")
    lines = []
    for case in cases:
        n = case["n"]
        body = {
            "id": f"c{n:05d}",
            "input": {k: case[k] for k in ("n", "q", "do") if k in case},
            # Every seventh case expects another answer: failures as well as passes.
            "expected": {"answer": case["q"] if n % 7 else "no such answer"},
            "metadata": {"band": str(n % 3)},
        }
        lines.append(json.dumps(body))
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_callable_config(root, "echo", engine, slices=["metadata.band"])
    return root


def many_cases(n: int) -> list[dict[str, Any]]:
    """``n`` cases, about one in a hundred raising one kind of exception or another."""
    kinds = ["value", "exit", "interrupt", "odd", "cancel", "nested"]
    cases: list[dict[str, Any]] = []
    for i in range(n):
        case: dict[str, Any] = {"n": i, "q": f"question {i}"}
        if i % 97 == 5:
            case["do"] = kinds[(i // 97) % len(kinds)]
        cases.append(case)
    return cases


def staged_project(root: Path, n: int, engine: dict[str, Any] | None = None) -> Path:
    """A staged project over ``n`` cases whose generate fails on every tenth."""
    root.mkdir(parents=True)
    (root / "app.py").write_text(STAGED_APP, encoding="utf-8")
    lines = [
        json.dumps(
            {
                "id": f"s{i:03d}",
                "input": {"n": i, "q": f"question {i}"},
                "expected": {"answer": "passage", "relevant": [{"doc_id": f"d{i % 20}"}]},
            }
        )
        for i in range(n)
    ]
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    config: dict[str, Any] = {
        "system": {"name": "tiny-rag", "version": "1", "rag": {"object": "app:TinyRag"}},
        "evaluators": [
            {
                "type": "contains",
                "criterion": "answered",
                "field": "answer",
                "expected_field": "answer",
            },
            {"type": "hit_rate", "k": 2},
            {"type": "citation_validity"},
        ],
        "slices": ["relevant_position", "context_truncated"],
    }
    if engine is not None:
        config["engine"] = engine
    (root / "oloproof.yaml").write_text(json.dumps(config), encoding="utf-8")
    return root
