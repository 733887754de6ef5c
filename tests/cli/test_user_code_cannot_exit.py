"""User code cannot take the process: whatever a system, a stage or an evaluator raises, and
whatever it calls (``sys.exit``), costs that case or that judgment, never the run; a real
Ctrl-C or SIGTERM still interrupts (tests/cli/test_run_errors.py), and a malformed artifact
built with the SDK's own types stops the run with exit 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support import copy_example, oloproof

from ledger import open_ledger
from oloproof import events as ev
from oloproof.metrics import case_results
from oloproof.store import open_project_ledger

# Each kind of BaseException user code can raise, and how the case's error names it.
RAISERS = {
    "exit0": ("sys.exit(0)", "SystemExit"),
    "exit5": ("sys.exit(5)", "SystemExit"),
    # A hard exit would end the process with the status it gives, 0 reading as a passing gate.
    "hard0": ("os._exit(0)", "HardExit: it called os._exit(0)"),
    "keyboard": ("raise KeyboardInterrupt", "KeyboardInterrupt"),
    "generator": ("raise GeneratorExit", "GeneratorExit"),
    "cancelled": ("raise asyncio.CancelledError()", "CancelledError"),
    "bare": ("raise BaseException('bare')", "BaseException"),
}

CONFIG = """\
system:
  name: toy
  version: "1"
  callable: app:run
concurrency: {concurrency}
evaluators:
  - {{type: contains, criterion: echo, field: answer, expected_field: answer}}
"""


def _app(is_async: bool) -> str:
    branches = "".join(
        f"    if q == {name!r}:\n        {statement}\n" for name, (statement, _) in RAISERS.items()
    )
    head = "async def" if is_async else "def"
    return (
        "import asyncio, os, sys\n"
        "from oloproof import system\n\n"
        '@system(name="toy", version="1")\n'
        f"{head} run(case):\n"
        '    q = case["q"]\n'
        f"{branches}"
        '    return {"answer": q}\n'
    )


def _cases(root: Path, questions: list[str]) -> None:
    lines = [json.dumps({"id": q, "input": {"q": q}, "expected": {"answer": q}}) for q in questions]
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n")


def _project(root: Path, app: str, questions: list[str], concurrency: int = 1) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "app.py").write_text(app)
    (root / "oloproof.yaml").write_text(CONFIG.format(concurrency=concurrency))
    _cases(root, questions)
    return root


def _end_states(root: Path) -> list[str]:
    with open_ledger(root / ".oloproof") as ledger:
        return [e.body["state"] for _, e in ledger.events(ev.RUN_END)]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_any_base_exception_from_a_system_errors_only_its_case(
    tmp_path: Path, is_async: bool
) -> None:
    questions = ["first", *RAISERS, "last"]
    root = _project(tmp_path, _app(is_async), questions, concurrency=2)
    result = oloproof("run", cwd=root)
    assert result.code == 0, result.out + result.err
    assert "Traceback" not in result.err and "interrupted" not in result.err
    assert result.lines[0].endswith("[NO_POLICY/PARTIAL]")
    assert "2 / 2 observed · 7 missing" in result.out
    assert _end_states(root) == ["complete"]
    run_id = result.lines[0].split()[1]
    for name, (_, kind) in RAISERS.items():
        case = oloproof("inspect", run_id, "--case", name, cwd=root)
        assert case.code == 0, case.err
        assert f"case {name} (errored)" in case.out
        assert f"error: {kind}" in case.out
        assert "Traceback (most recent call last)" in case.out
        assert "echo: missing (execution_errored)" in case.out


STAGED = """\
import sys
from oloproof import Passage, Retrieval, rag_system

@rag_system(name="staged", version="1", depth=2, top_k=1)
class Staged:
    def retrieve(self, query, depth):
        if query["q"] == "exit-in-retrieve":
            sys.exit(3)
        return Retrieval(candidates=(Passage(doc_id="d1", text="t"),))

    async def generate(self, query, context):
        if query["q"] == "interrupt-in-generate":
            raise KeyboardInterrupt
        return {"answer": query["q"]}
"""


def test_a_stage_that_exits_errors_only_its_case(tmp_path: Path) -> None:
    root = _project(tmp_path, STAGED, ["ok", "exit-in-retrieve", "interrupt-in-generate"])
    (root / "oloproof.yaml").write_text(
        CONFIG.format(concurrency=1).replace("callable: app:run", "rag: {object: app:Staged}")
    )
    result = oloproof("run", cwd=root)
    assert result.code == 0, result.out + result.err
    assert "1 / 1 observed · 2 missing" in result.out
    run_id = result.lines[0].split()[1]
    retrieve = oloproof("inspect", run_id, "--case", "exit-in-retrieve", cwd=root)
    assert "error: SystemExit: 3" in retrieve.out
    generate = oloproof("inspect", run_id, "--case", "interrupt-in-generate", cwd=root)
    assert "error: KeyboardInterrupt" in generate.out


def test_an_evaluator_that_raises_leaves_that_judgment_missing(tmp_path: Path) -> None:
    # A schema that is itself, without end, through $dynamicRef (not looked for when the run
    # is planned, as a $ref loop is): validating recurses until Python's recursion limit stops
    # it, on every case.
    root = _project(tmp_path, _app(False), ["a", "b"])
    (root / "oloproof.yaml").write_text(
        CONFIG.format(concurrency=1)
        + '  - {type: json_schema, criterion: shaped, schema: {"$dynamicAnchor": "s", "$dynamicRef": "#s"}}\n'
    )
    result = oloproof("run", cwd=root)
    assert result.code == 0, result.out + result.err
    assert "Traceback" not in result.err
    assert result.lines[0].endswith("[NO_POLICY/COMPLETE]")
    shaped = next(line for line in result.lines if line.startswith("│ shaped "))
    assert "0 / 0 observed · 2 missing" in shaped
    echo = next(line for line in result.lines if line.startswith("│ echo "))
    assert "2 / 2 observed · 0 missing" in echo
    case = oloproof("inspect", result.lines[0].split()[1], "--case", "a", cwd=root)
    assert "shaped: missing (evaluator_raised)" in case.out


def test_code_that_exits_at_import_time_is_refused_naming_the_module(tmp_path: Path) -> None:
    root = _project(tmp_path, "import sys\nsys.exit(7)\n", ["a"])
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out + result.err
    assert result.err == (
        f"error: {root / 'oloproof.yaml'}, line 4: system.callable: importing 'app' failed: "
        "it called sys.exit(7)\n"
    )
    for statement, shown in (
        ("import os\nos._exit(0)", "it called os._exit(0)"),
        ("raise KeyboardInterrupt", "KeyboardInterrupt"),
        ("raise BaseException('at import')", "BaseException: at import"),
    ):
        (root / "app.py").write_text(f"{statement}\n")
        result = oloproof("run", cwd=root)
        assert result.code == 2, result.out + result.err
        assert result.err.endswith(f"importing 'app' failed: {shown}\n")
    assert not (root / ".oloproof").exists()


FORKS = """\
import os
from oloproof import system

@system(name="toy", version="1")
def run(case):
    child = os.fork()
    if child == 0:  # the child exits as it asks, with its own status
        os._exit(7)
    _, status = os.waitpid(child, 0)
    return {"answer": f"{case['q']} {os.waitstatus_to_exitcode(status)}"}
"""


def test_a_child_the_system_forks_still_exits_as_it_asks(tmp_path: Path) -> None:
    root = _project(tmp_path, FORKS, ["a"])
    result = oloproof("run", "--json", cwd=root)
    assert result.code == 0, result.err
    shown = oloproof("inspect", json.loads(result.out)["run_id"], "--case", "a", cwd=root)
    assert "answer: a 7" in shown.out, shown.out


def test_a_staged_class_whose_constructor_exits_is_refused(tmp_path: Path) -> None:
    app = STAGED.replace(
        "class Staged:\n", "class Staged:\n    def __init__(self):\n        sys.exit(4)\n\n"
    )
    root = _project(tmp_path, app, ["a"])
    (root / "oloproof.yaml").write_text(
        CONFIG.format(concurrency=1).replace("callable: app:run", "rag: {object: app:Staged}")
    )
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out + result.err
    assert result.err.endswith("system.rag.object: app:Staged() failed: it called sys.exit(4)\n")
    assert not (root / ".oloproof").exists()


SDK_MISUSE = """\
from oloproof import Passage, Retrieval, current_case, system

@system(name="toy", version="1", records=("retrieval/v1",))
def run(case):
    q = case["q"]
    if q == "wrong-types":
        Passage(doc_id=None, score="high", text=3)
    if q == "nan-score":
        current_case().retrieval(Retrieval(candidates=(Passage(doc_id="d", score=float("nan")),)))
    if q == "nested":
        Retrieval.model_validate({"candidates": [{"doc_id": "d", "text": 3}]})
    return {"answer": q}
"""


@pytest.mark.parametrize(
    ("question", "sentence"),
    [
        (
            "wrong-types",
            "error: case 'wrong-types': malformed Passage artifact: doc_id: "
            "Input should be a valid string\n",
        ),
        (
            "nan-score",
            "error: case 'nan-score': malformed Passage artifact: score: "
            "Input should be a finite number\n",
        ),
        (
            "nested",
            "error: case 'nested': malformed Retrieval artifact: candidates.0.text: "
            "Input should be a valid string\n",
        ),
    ],
)
def test_an_sdk_artifact_built_wrongly_in_user_code_stops_the_run(
    tmp_path: Path, question: str, sentence: str
) -> None:
    root = _project(tmp_path, SDK_MISUSE, ["fine", question, "after"])
    (root / "policy.yaml").write_text(
        "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.1}\n"
    )
    result = oloproof("run", "--policy", "policy.yaml", cwd=root)
    assert result.code == 2, result.out + result.err
    assert result.err == sentence
    assert _end_states(root) == ["stopped"]
    with open_ledger(root / ".oloproof") as ledger:
        assert not list(ledger.events(ev.DECISION))
        errored = [e for _, e in ledger.events(ev.EXECUTION) if e.body["status"] != "ok"]
        ((_, run),) = ledger.events(ev.RUN)
    assert errored == []  # the case is not recorded as errored: the run stopped on it
    shown = oloproof("inspect", run.body["run_id"], cwd=root)
    assert shown.lines[0].endswith("[UNDECIDED/STOPPED]")  # a policy, and no gate claimed
    assert not any(line.startswith("Gate:") for line in shown.lines)


def test_a_user_keyboard_interrupt_is_not_a_ctrl_c_but_a_real_one_still_is(
    tmp_path: Path,
) -> None:
    """A KeyboardInterrupt the system raises errors its case; Ctrl-C sent to the process while
    an async system is waiting interrupts the run as before (exit 130, resumable)."""
    app = _app(True).replace(
        '    return {"answer": q}\n',
        '    if q.startswith("slow"):\n'
        '        print("waiting", flush=True)\n'
        "        await asyncio.sleep(60)\n"
        '    return {"answer": q}\n',
    )
    root = _project(tmp_path, app, ["keyboard", "slow"])
    proc = subprocess.Popen(
        [sys.executable, "-m", "oloproof", "run"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stderr is not None
    try:
        # The system prints (onto stderr: stdout is the report's) when the slow case starts
        # waiting: by then the first case is done.
        assert proc.stderr.readline() == "waiting\n"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:  # a failed assertion leaves no process behind to trouble the next test
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, out + err
    assert "oloproof run --resume run_" in err
    assert _end_states(root) == ["interrupted"]


def test_a_reranker_that_exits_errors_only_its_cases(tmp_path: Path) -> None:
    root = copy_example("support_rag", tmp_path)
    (root / "exiting.py").write_text(
        "import sys\n\ndef rerank(input, candidates):\n    sys.exit(9)\n"
    )
    parent = oloproof("run", cwd=root)
    assert parent.code in (0, 1, 3), parent.err
    run_id = parent.lines[0].split()[1]
    gold = ["--intervention", "gold-context", "--criterion", "answer_correct"]
    assert oloproof("diagnose", run_id, *gold, cwd=root).code == 0
    rerank = ["--intervention", "reranker", "--reranker", "exiting:rerank"]
    result = oloproof("diagnose", run_id, *rerank, "--criterion", "answer_correct", cwd=root)
    assert result.code == 0, result.out + result.err
    assert "Traceback" not in result.err
    with open_project_ledger(root) as ledger:  # read as Oloproof reads it (stored_form.expand)
        children = [
            e.body["run_id"]
            for _, e in ledger.events(ev.RUN)
            if (e.body.get("parent") or {}).get("intervention", {}).get("kind") == "reranker"
        ]
        assert len(children) == 1
        results = [b for _, b in case_results(ledger, children[0])]
        errors = {ledger.get(b["execution"]).body["error"]["type"] for b in results}
    assert results and {b["status"] for b in results} == {"errored"}
    assert errors == {"SystemExit"}
