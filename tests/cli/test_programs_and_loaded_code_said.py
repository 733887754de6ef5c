"""What a system runs or reads while it runs, by ways the code fingerprint knew no name of, is
said when a run reuses its results.

A script of the project run in a subprocess (``subprocess.run``, ``from subprocess import
run``, ``os.popen``), a plugin file loaded by ``runpy.run_path`` or
``importlib.util.spec_from_file_location``, data read through ``importlib.resources``'
``read_binary``, ``linecache`` or a zip archive, a service reached over ``HTTPSConnection``, a
socket or a model SDK: after the script, the plugin or the data changed, the second run reused
the old answers (``execution 1 hit``) and said nothing, on the run's report or on
``--dry-run``. Each is now named on the ``Not seen by the code fingerprint`` line.

Real CLI runs in a subprocess: run, change what the system runs or reads, run again.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support import oloproof

NOT_SEEN = "Not seen by the code fingerprint (change system.version when they change): "
HIT = "Cache: execution 1 hit/0 miss; judgment 1 hit/0 miss"

CONFIG = """
system: {name: runs, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""

HEAD = """
import http.client
import importlib.resources
import importlib.util
import linecache
import os
import runpy
import socket
import subprocess
import sys
import zipfile
from pathlib import Path
from subprocess import run

from openai import OpenAI

from oloproof import system

HERE = Path(__file__).parent
"""

SCRIPT = 'print("q1 WORDING")\n'
PLUGIN = 'def answer(q):\n    return q + " WORDING"\n'


def _write(name: str, text: str) -> Callable[[Path, str], None]:
    def write(root: Path, wording: str) -> None:
        (root / name).write_text(text.replace("WORDING", wording))

    return write


def _zip(root: Path, wording: str) -> None:
    with zipfile.ZipFile(root / "data.zip", "w") as archive:
        archive.writestr("answer.txt", f"q1 {wording}")


def _nothing(root: Path, wording: str) -> None:
    pass


# Services are never reached: the case takes the other branch, as a system calling out only on
# some inputs does.
NEVER = 'if case["q"] == "never":\n        '
# name: (the body of answer(case), what it reads (written before each run), what is said)
USES = {
    "subprocess.run": (
        'done = subprocess.run([sys.executable, str(HERE / "w.py")], capture_output=True, '
        "text=True)\n"
        '    return {"answer": done.stdout.strip()}',
        _write("w.py", SCRIPT),
        "programs it starts while it runs (it uses subprocess)",
    ),
    "from subprocess import run": (
        'done = run([sys.executable, str(HERE / "w.py")], capture_output=True, text=True)\n'
        '    return {"answer": done.stdout.strip()}',
        _write("w.py", SCRIPT),
        "programs it starts while it runs (it uses subprocess)",
    ),
    "os.popen": (
        'return {"answer": os.popen(f"{sys.executable} {HERE / \'w.py\'}").read().strip()}',
        _write("w.py", SCRIPT),
        "programs it starts while it runs (it uses popen)",
    ),
    "runpy.run_path": (
        'return {"answer": runpy.run_path(str(HERE / "plugin.py"))["answer"](case["q"])}',
        _write("plugin.py", PLUGIN),
        "code it loads from files while it runs (it uses run_path, runpy)",
    ),
    "spec_from_file_location": (
        'spec = importlib.util.spec_from_file_location("plugin", HERE / "plugin.py")\n'
        "    plugin = importlib.util.module_from_spec(spec)\n"
        "    spec.loader.exec_module(plugin)\n"
        '    return {"answer": plugin.answer(case["q"])}',
        _write("plugin.py", PLUGIN),
        "code it loads from files while it runs (it uses spec_from_file_location)",
    ),
    "importlib.resources.read_binary": (
        'return {"answer": importlib.resources.read_binary("data", "answer.txt").decode()}',
        _write("data/answer.txt", "q1 WORDING"),
        "files it opens or reads while it runs (it uses read_binary)",
    ),
    "linecache.getline": (
        'return {"answer": linecache.getline(str(HERE / "answer.txt"), 1).strip()}',
        _write("answer.txt", "q1 WORDING\n"),
        "files it opens or reads while it runs (it uses getline, linecache)",
    ),
    "zipfile.ZipFile": (
        'return {"answer": zipfile.ZipFile(HERE / "data.zip").read("answer.txt").decode()}',
        _zip,
        "files it opens or reads while it runs (it uses ZipFile, zipfile)",
    ),
    "HTTPSConnection": (
        NEVER + 'http.client.HTTPSConnection("example.invalid").request("GET", "/")\n'
        '    return {"answer": case["q"]}',
        _nothing,
        "services it calls while it runs (it uses HTTPSConnection)",
    ),
    "socket": (
        NEVER + 'socket.create_connection(("127.0.0.1", 9)).recv(1)\n'
        '    return {"answer": case["q"]}',
        _nothing,
        "services it calls while it runs (it uses create_connection, socket)",
    ),
    "a model SDK": (
        NEVER + 'OpenAI(api_key="k").chat.completions.create(model="m", messages=[])\n'
        '    return {"answer": case["q"]}',
        _nothing,
        "services it calls while it runs (it uses openai)",
    ),
}


def _project(root: Path, body: str) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "data" / "__init__.py").write_text("")
    app = f'{HEAD}\n\n@system(name="runs", version="1")\ndef answer(case):\n    {body}\n'
    (root / "app.py").write_text(app)
    (root / "oloproof.yaml").write_text(CONFIG)
    case = {"id": "c1", "input": {"q": "q1"}, "expected": {"answer": "q1"}}
    (root / "cases.jsonl").write_text(json.dumps(case) + "\n")
    return root


@pytest.mark.parametrize("use", sorted(USES))
def test_a_run_that_reuses_says_what_the_code_runs_or_reads_while_it_runs(
    tmp_path: Path, use: str
) -> None:
    body, reads, said = USES[use]
    root = _project(tmp_path / "p", body)
    reads(root, "first")
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.out + first.err
    reads(root, "second")
    for shown in (oloproof("run", "--dry-run", cwd=root), oloproof("run", cwd=root)):
        assert shown.code == 0, shown.out + shown.err
        (line,) = [line for line in shown.lines if line.startswith(NOT_SEEN)]
        assert said in line.removeprefix(NOT_SEEN).split("; "), line
    assert HIT in shown.lines, shown.out
