"""Shared helpers: run the real CLI in a subprocess inside a copy of a bundled example."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"

_ADDRESS = re.compile(r"sha256:[0-9a-f]{64}")
_RUN_ID = re.compile(r"run_[0-9A-HJKMNP-TV-Z]{26}")


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()


def normalise(text: str) -> str:
    """Replace addresses and run ids, which differ from run to run."""
    return _RUN_ID.sub("run_…", _ADDRESS.sub("sha256:…", text))


def oloproof(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    command: tuple[str, ...] = ("-m", "oloproof"),
) -> Result:
    """``oloproof ARGS`` in ``cwd``. ``command`` is what Python runs it as: a script standing
    for an earlier release, say."""
    proc = subprocess.run(
        [sys.executable, *command, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def printed_under_hash_seeds(script: str, *args: str) -> set[str]:
    """What ``python -c SCRIPT ARGS`` prints under three hash seeds: one text when what it
    prints does not depend on the order of sets and dicts of strings."""
    printed = set()
    for seed in ("1", "2", "3"):
        result = subprocess.run(
            [sys.executable, "-c", script, *args],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        )
        printed.add(result.stdout.strip())
    return printed


def verified_as_made(
    root: Path, stored: tuple[int, Mapping[str, Any]], flag: str, schema: int, counted: str
) -> None:
    """A gate an earlier release recorded as PASS at ``schema`` (``stored``: the schema and
    body as read), read through its upcaster with ``flag`` false, and re-derived by ``verify``
    as it was made (its output says ``counted``)."""
    found, body = stored
    passed = {"blocked": False, "exit_code": 0}
    assert (found, body[flag], body["gate"]) == (schema, False, passed)
    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out + verified.err
    assert counted in verified.out


def stored_event(root: Path, kind: str) -> tuple[int, dict[str, Any]]:
    """The project's one event of ``kind``: the schema it was stored at, and its body as read
    (through the upcasters), as plain JSON data."""
    from ledger.codec import decode
    from oloproof.store import open_project_ledger

    with open_project_ledger(root, create=False) as ledger:
        ((address, event),) = ledger.events(kind)
        return decode(ledger.get_bytes(address))["schema"], json.loads(json.dumps(event.body))


def stored_bytes(root: Path) -> bytes:
    """Every event of the project ledger in ``root``, as its canonical bytes, end to end: what
    a search for a value stored must read (the ledger's file may hold the events compressed)."""
    from ledger import open_ledger

    with open_ledger(root / ".oloproof") as ledger:
        return b"".join(event.to_bytes() for _, event in ledger.events())


# Where today's code derives each gate's body, with a keyword for each check added since its
# first schema: the flags a body of that kind states.
_DERIVED_IN = {
    "oloproof.decision": ("oloproof.runner", "decide_run"),
    "oloproof.comparison": ("oloproof.compare", "derive_comparison"),
}

_EARLIER_RELEASE = """
import importlib

from oloproof import events


def switched_off(today, flags):
    def derive(*args, **kwargs):
        body = today(*args, **kwargs, **dict.fromkeys(flags, False))
        for flag in flags:
            del body[flag]
        return body

    return derive


for kind, (schema, path, name, flags) in {stood_for!r}.items():
    events.SCHEMAS[kind] = schema
    module = importlib.import_module(path)
    setattr(module, name, switched_off(getattr(module, name), flags))
{also}
from oloproof.cli.main import main

main()
"""


_DIAGNOSIS_RELEASE = """
import sys

import oloproof.events as ev

ev.SCHEMAS[ev.DIAGNOSIS] = {schema}
from oloproof.cli.main import command

sys.argv = ["oloproof", *sys.argv[1:]]
command()
"""


def diagnosis_release(schema: int) -> tuple[str, str]:
    """The ``command`` (for ``oloproof``) that stands for the release that recorded diagnoses
    at ``schema``: today's CLI storing them at that schema, which ``diagnosis.derive`` derives
    as that release did."""
    return "-c", _DIAGNOSIS_RELEASE.format(schema=schema)


def added_since(kind: str, schema: int) -> tuple[str, ...]:
    """The keys the upcasters of ``kind`` from ``schema`` on add to a body: the flags of the
    checks a release that recorded ``kind`` at ``schema`` did not make. An upcaster that reads
    the body (comparison 1's, say) raises here: what it changes is more than a flag."""
    from oloproof import events as ev

    body: dict[str, Any] = {}
    for version in range(schema, ev.SCHEMAS[kind]):
        body = ev.UPCASTERS[kind, version](body)
    return tuple(body)


def earlier_release(schemas: Mapping[str, int], also: str = "") -> tuple[str, str]:
    """The ``command`` (for ``oloproof``, ``start_run``) of a script that stands for the
    release that recorded each gate kind in ``schemas`` (``oloproof.decision``,
    ``oloproof.comparison``) at the schema given: today's CLI, each such body derived with
    every check added since switched off (``False``, whatever the upcasters say: they are what
    the tests check) and stored at that schema without those checks' flags (``added_since``),
    so a new flag needs no edit here. ``also``: more code run before the CLI (what else that
    release did otherwise)."""
    stood_for = {
        kind: (schema, *_DERIVED_IN[kind], added_since(kind, schema))
        for kind, schema in schemas.items()
    }
    return "-c", _EARLIER_RELEASE.format(stood_for=stood_for, also=also)


def start_run(
    root: Path,
    marker: str,
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
    command: tuple[str, ...] = ("-m", "oloproof"),
) -> subprocess.Popen[str]:
    """``oloproof run`` (with ``args``) in ``root``, returned once its stderr's first line is
    ``marker``. ``command`` is what Python runs it as: a script standing for an earlier
    release, say."""
    proc = subprocess.Popen(
        [sys.executable, *command, "run", *args],
        cwd=root,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()
    if first != marker:  # closed here, so no pipe is left open for a later test to find
        out, err = proc.communicate(timeout=60)
        raise AssertionError(f"the run did not reach {marker!r}: {first}{err}{out}")
    return proc


@contextlib.contextmanager
def tmpfs(mount: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (``4m``) mounted at ``mount`` (made here) while the block runs: a
    small device to fill. The test is skipped where mounting is not allowed."""
    import pytest

    mount.mkdir()
    tried = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if tried.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {tried.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@contextlib.contextmanager
def run_in_progress(
    root: Path,
    marker: str,
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
    command: tuple[str, ...] = ("-m", "oloproof"),
) -> Iterator[subprocess.Popen[str]]:
    """``start_run``'s process while the block runs; then Ctrl-C, and killed if it outlives
    that by 60 seconds."""
    proc = start_run(root, marker, env, args, command)
    try:
        yield proc
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=60)
        finally:
            proc.kill()


def interrupt_run(
    root: Path,
    marker: str,
    stop: signal.Signals,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    settle: float = 0,
    args: tuple[str, ...] = (),
) -> tuple[int, str, str]:
    """``oloproof run ARGS`` in ``root``, sent ``stop`` ``settle`` seconds after its stderr's
    first line is ``marker``: (exit code, stdout, stderr). The process is killed if it
    outlives ``timeout``."""
    proc = start_run(root, marker, env, args)
    time.sleep(settle)
    proc.send_signal(stop)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        proc.kill()
    return proc.returncode, out, err


# The start of a system a test holds on a case to interrupt it there
# (``interrupted_while_held``): ``hold(marker)`` writes the marker on stderr, waits for a file
# ``release`` beside the app, then raises, so the held case is never recorded as answered.
HOLDING_APP = """
import os
import sys
import time
from pathlib import Path

from oloproof import system

HERE = Path(__file__).parent


def hold(marker):
    sys.stderr.write(marker + "\\n")
    sys.stderr.flush()
    while not (HERE / "release").exists():
        time.sleep(0.05)
    raise RuntimeError("released")
"""


# A toy system that holds the case whose `q` is the environment's HOLD (saying "holding" on
# stderr) until a file `release` appears beside it, then answers it as the others: a run held
# part way, for what other commands say of it meanwhile.
HELD_TOY_APP = """
import os
import sys
import time
from pathlib import Path

from oloproof import system

HERE = Path(__file__).parent


@system(name="toy", version="1")
def run(case):
    if case["q"] == os.environ.get("HOLD"):
        sys.stderr.write("holding\\n")
        sys.stderr.flush()
        while not (HERE / "release").exists():
            time.sleep(0.05)
    return {"answer": case["q"]}
"""
# A toy system run one case at a time, over cases.jsonl
SERIAL_TOY_CONFIG = """\
system: {name: toy, version: "1", callable: "app:run"}
dataset: cases.jsonl
concurrency: 1
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
"""
HELD_TOY_CONFIG = SERIAL_TOY_CONFIG + "policy: policy.yaml\n"


def interrupted_while_held(
    root: Path, marker: str, env: dict[str, str] | None = None, args: tuple[str, ...] = ()
) -> str:
    """``oloproof run ARGS`` in ``root``, whose system holds a case (once its stderr's first
    line is ``marker``) until a file ``release`` appears in ``root``: interrupted (Ctrl-C)
    there, the case then let go. The interrupted run's id."""
    proc = start_run(root, marker, env, args)
    proc.send_signal(signal.SIGINT)
    time.sleep(1)  # the signal is taken before the case it interrupted ends
    (root / "release").touch()
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        (root / "release").unlink()
    assert proc.returncode == 130, out + err
    return err.split("--resume ")[1].split()[0]


def interrupted_fields(root: Path, err: str) -> list[str]:
    """The ``oloproof runs`` columns of the run a signal stopped, named by the ``--resume`` its
    stderr (``err``) offers: checked to be INTERRUPTED, its stderr free of a traceback."""
    assert "Traceback" not in err
    fields = runs_fields(root, err.split("--resume ")[1].split()[0])
    assert fields[3] == "INTERRUPTED", fields
    return fields


def runs_fields(root: Path, run_id: str) -> list[str]:
    """The columns of ``run_id``'s line in ``oloproof runs``."""
    line = next(line for line in oloproof("runs", cwd=root).lines if line.startswith(run_id))
    return line.split("  ")


def write_project(
    root: Path, *, app: str, config: str, policy: str, cases: Iterable[dict[str, Any]]
) -> Path:
    """A project in ``root`` (made here): its ``app.py``, ``oloproof.yaml``, ``policy.yaml``
    and one ``cases.jsonl`` line per case."""
    root.mkdir()
    (root / "app.py").write_text(app)
    (root / "oloproof.yaml").write_text(config)
    (root / "policy.yaml").write_text(policy)
    with (root / "cases.jsonl").open("w") as f:
        f.writelines(json.dumps(case) + "\n" for case in cases)
    return root


# The smallest project a refusal starts from (``toy_project``): a system that answers its
# question, judged on whether the answer holds the expected one, under a floor on that.
TOY_APP = """
from oloproof import system

@system(name="toy", version="1")
def run(case):
    return {"answer": case["q"]}
"""
TOY_CONFIG = """\
system:
  name: toy
  version: "1"
  callable: app:run
concurrency: 2
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
policy: policy.yaml
"""
TOY_POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"


def toy_project(
    root: Path, *, config: str = TOY_CONFIG, policy: str = TOY_POLICY, cases: int = 1
) -> Path:
    """``root`` (made if missing) holding ``TOY_APP``, ``config``, ``policy`` and ``cases``
    cases ``c1``, ``c2``… asking ``x`` and expecting it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "app.py").write_text(TOY_APP)
    (root / "oloproof.yaml").write_text(config)
    (root / "policy.yaml").write_text(policy)
    lines = (
        json.dumps({"id": f"c{i}", "input": {"q": "x"}, "expected": {"answer": "x"}}) + "\n"
        for i in range(1, cases + 1)
    )
    (root / "cases.jsonl").write_text("".join(lines))
    return root


def halves_project(root: Path) -> Path:
    """``toy_project`` of 10 cases ``c0``… asking ``x0``…, c0-c4 with ``metadata.half`` first,
    c5-c9 second: what ``--filter metadata.half=first`` chooses half of."""
    toy_project(root, cases=10)
    lines = (
        json.dumps(
            {
                "id": f"c{i}",
                "input": {"q": f"x{i}"},
                "expected": {"answer": "x"},
                "metadata": {"half": "first" if i < 5 else "second"},
            }
        )
        + "\n"
        for i in range(10)
    )
    (root / "cases.jsonl").write_text("".join(lines))
    return root


# The diagnosis of the support_rag example the guides show: its failed answers, under gold context.
GOLD_DIAGNOSIS = ("--intervention", "gold-context", "--criterion", "answer_correct")

# A callable system ``app:answer`` judged on whether its answer holds the expected one.
ANSWERED_CONFIG = """
system: {name: s, version: "1", callable: app:answer}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""


def answered_project(root: Path, app: str, expected: Sequence[str] = (), cases: int = 30) -> Path:
    """``write_project`` of ``app`` with ``ANSWERED_CONFIG`` and a rule ``answered`` at least
    0.5: ``cases`` cases ``q0``, ``q1``… (input ``{"q": "q0"}``), each expecting its question,
    or, for the first ones, the answer ``expected`` gives."""
    return write_project(
        root,
        app=app,
        config=ANSWERED_CONFIG,
        policy="version: 1\nrules:\n  - {id: answers, metric: answered, min: 0.5}\n",
        cases=(
            {
                "id": f"q{i}",
                "input": {"q": f"q{i}"},
                "expected": {"answer": expected[i] if i < len(expected) else f"q{i}"},
            }
            for i in range(cases)
        ),
    )


# The retrieve stage of the gold-context projects below: the one relevant passage (kb-01) ranks
# second, under a top_k of 1, so the run's context never holds it and every case fails.
GOLD_RETRIEVE = """
    def retrieve(self, input, depth):
        return Retrieval(query=input["question"], depth=depth, candidates=(
            Passage(doc_id="noise", text="Unrelated."),
            Passage(doc_id="kb-01", text="Two business days."),
        ))
"""


# A retrieve stage that returns the candidates each case's input lists, as they are listed.
INPUT_RETRIEVE = """
    def retrieve(self, input, depth):
        return Retrieval(
            query=input["question"],
            depth=depth,
            candidates=tuple(Passage(**c) for c in input["candidates"]),
        )
"""


def gold_context_project(
    root: Path,
    *,
    app: str,
    config: str,
    questions: Sequence[str],
    env: dict[str, str] | None = None,
) -> str:
    """A staged project in ``root`` (made here), one case per question, each expecting the
    answer its gold passage (kb-01) holds, run once; the run id."""
    expected = {
        "answer": "Two business days",
        "relevant": [{"doc_id": "kb-01"}],
        "gold_context": [{"doc_id": "kb-01", "text": "Two business days."}],
    }
    root.mkdir()
    (root / "app.py").write_text(app)
    (root / "oloproof.yaml").write_text(config)
    with (root / "cases.jsonl").open("w") as f:
        for q in questions:
            f.write(json.dumps({"id": q, "input": {"question": q}, "expected": expected}) + "\n")
    done = oloproof("run", cwd=root, env=env)
    assert done.code in (0, 3), done.out + done.err
    return _RUN_ID.findall(done.lines[0])[0]


def child_run_reports(
    root: Path, lines: Sequence[str], env: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """``inspect --json`` of each child run a diagnosis's output names, in order."""
    (children,) = [line for line in lines if line.startswith("Child runs: ")]
    reports = []
    for run_id in _RUN_ID.findall(children):
        done = oloproof("inspect", run_id, "--json", cwd=root, env=env)
        assert done.code == 0, done.out + done.err
        reports.append(json.loads(done.out))
    return reports


def decision_recorded_at(
    root: Path, schema: int, as_then: Callable[[dict[str, Any]], dict[str, Any]]
) -> tuple[str, dict[str, Any], tuple[str, ...]]:
    """The project's first decision recorded again at an older ``schema``, its body as
    ``as_then`` makes it from today's: (that event's address, its body, its refs)."""
    from ledger import Event
    from oloproof import events as ev
    from oloproof.store import open_project_ledger

    with open_project_ledger(root, create=False) as ledger:
        _, event = next(iter(ledger.events(ev.DECISION)))
        body = as_then(json.loads(json.dumps(event.body)))
        return ledger.put(Event(ev.DECISION, schema, body, event.refs)), body, event.refs


def stale_when_current(root: Path, body: dict[str, Any], refs: tuple[str, ...]) -> str:
    """``body`` recorded at today's decision schema, which it does not hold to: the one
    StaleSummary line ``verify`` reports for it (verify exits 1)."""
    from ledger import Event
    from oloproof import events as ev
    from oloproof.store import open_project_ledger

    with open_project_ledger(root, create=False) as ledger:
        forged = ledger.put(Event(ev.DECISION, ev.SCHEMAS[ev.DECISION], body, refs))
    verified = oloproof("verify", cwd=root)
    assert verified.code == 1, verified.out + verified.err
    stale = [line for line in verified.lines if line.startswith("StaleSummary")]
    assert len(stale) == 1 and stale[0].startswith(f"StaleSummary {forged}: decision: ")
    return stale[0]


def copy_example(name: str, dest: Path) -> Path:
    target = dest / name
    shutil.copytree(
        EXAMPLES / name, target, ignore=shutil.ignore_patterns("__pycache__", ".oloproof")
    )
    return target


JUDGE_GATE_URL = "http://127.0.0.1:8767/v1"


@contextlib.contextmanager
def serving_judge_gate(dest: Path) -> Iterator[tuple[Path, Any]]:
    """A copy of the judge_gate example whose config points at its judge server, started on a
    free port in this process; yields the copy and the server (a ScriptedJudgeServer)."""
    root = copy_example("judge_gate", dest)
    spec = importlib.util.spec_from_file_location("judge_gate_server", root / "judge_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with module.make_server(0) as server:
        config = root / "oloproof.yaml"
        text = config.read_text(encoding="utf-8")
        assert JUDGE_GATE_URL in text
        config.write_text(text.replace(JUDGE_GATE_URL, server.openai_base_url), encoding="utf-8")
        yield root, server


def echo_http_config(*headers: str) -> str:
    """The ``oloproof.yaml`` template of an HTTP system at ``{url}`` (no retries, the answer at
    ``result``) sending ``headers``, each a ``Name: value`` line written for ``str.format``,
    judged by whether its answer holds the expected one."""
    return (
        'system:\n  name: echo\n  version: "1"\n  http:\n    url: {url}\n'
        "    output_path: result\n    retries: 0\n    headers:\n"
        + "".join(f"      {header}\n" for header in headers)
        + "dataset: cases.jsonl\nevaluators:\n"
        "  - {{type: contains, criterion: answer_ok, field: answer, expected_field: answer}}\n"
    )


class QuietHandler(BaseHTTPRequestHandler):
    """A test server's handler: logs nothing, and sends each reply whole, closing its
    connection (a client that took it for kept alive could send the next case on it as it
    closes)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def reply(self, status: int, data: bytes, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


@contextlib.contextmanager
def served_project(
    root: Path, handler: type[BaseHTTPRequestHandler], config: str, cases: Iterable[Any]
) -> Iterator[Path]:
    """A project in ``root`` (made here) whose system is ``handler``, served while it is in use:
    ``config`` names its URL ``{url}``, and ``cases`` are its cases."""
    with http_server(handler) as base:
        root.mkdir()
        (root / "oloproof.yaml").write_text(config.format(url=base + "/answer"))
        (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
        yield root


@contextlib.contextmanager
def http_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1, on a free port, answering with ``handler``; its base
    URL (``http://127.0.0.1:PORT``). Stopped, and its thread joined, on the way out."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01})
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


# Mount $1 on $2 read-only in this namespace, go there and run the rest of the arguments.
_READ_ONLY = (
    'mount --bind "$1" "$2" && mount -o remount,bind,ro "$2" && cd "$2" && shift 2 && exec "$@"'
)
_UNSHARE = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", _READ_ONLY, "sh"]


def on_read_only_mount(folder: Path, mount: Path, *command: str) -> Result:
    """``command`` run in ``mount`` (made here), where ``folder`` is mounted read-only: a real
    file system, read-only even to root, in a mount namespace of the command's own."""
    mount.mkdir(exist_ok=True)
    proc = subprocess.run(
        [*_UNSHARE, str(folder), str(mount), *command],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def read_only_mounts_refused(scratch: Path) -> str | None:
    """Why ``on_read_only_mount`` cannot work on this machine (``scratch``, an empty folder,
    is used to try), or None when it does."""
    if shutil.which("unshare") is None:
        return "`unshare` is not installed, so no read-only mount can be made"
    (scratch / "source").mkdir()
    tried = on_read_only_mount(scratch / "source", scratch / "mnt", "touch", "written")
    if "Read-only file system" not in tried.err:
        return f"cannot mount a folder read-only here: {tried.err.strip() or tried.code}"
    return None


def failing_for(answers: set[str], judge: Any) -> Any:
    """``judge`` (a ScriptedJudgeServer's reply), but a 500 for every request judging one of
    ``answers``: a judgment that goes missing."""
    from oloproof.testing import RecordedRequest, Reply, fail

    def reply(request: RecordedRequest) -> Reply:
        shown = request.user_message
        if any(f"<answer>\n{text}\n</answer>" in shown for text in answers):
            return fail(500, "overloaded")
        return judge(request)

    return reply


def calibrate_judge_gate(root: Path, env: dict[str, str]) -> None:
    """``oloproof calibrate`` of the judge_gate example's judge on its labels (it must succeed)."""
    done = oloproof(
        "calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl", cwd=root, env=env
    )
    assert done.code == 0, done.err


# A repeated run's cases (``--repeats 3``). Each question's calls, in order: p answers right, f
# wrong, e raises, s answers a number (which the `shaped` evaluator cannot judge: its schema's
# second branch is the whole schema again, through $dynamicRef, so a number recurses until
# Python's recursion limit stops it). c3 errors in every repeat, c1 and c4 in one; c5 has a repeat
# without a verdict; c2 passes throughout and c6 two times of three.
FLAKY_PATTERNS = {"q1": "pep", "q2": "ppp", "q3": "eee", "q4": "epp", "q5": "psp", "q6": "ppf"}

# A system answering each question by its three-step pattern (``FLAKY_APP.format(patterns=…)``).
FLAKY_APP = """
from oloproof import system

PATTERNS = {patterns!r}
CALLS = {{}}


@system(name="flaky", version="1")
def answer(case):
    question = case["question"]
    n = CALLS.get(question, 0)
    CALLS[question] = n + 1
    step = PATTERNS[question][n % 3]
    if step == "e":
        raise RuntimeError(f"the model timed out on {{question}} (call {{n + 1}})")
    return {{"answer": {{"p": "yes", "f": "no", "s": 5}}[step]}}
"""

_FLAKY_CONFIG = """\
system: {name: flaky, version: "1", callable: "app:answer"}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
  - {type: json_schema, criterion: shaped, field: answer,
     schema: {"$dynamicAnchor": "s", anyOf: [{type: string}, {"$dynamicRef": "#s"}]}}
policy: policy.yaml
concurrency: 1
"""

_FLAKY_POLICY = "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.05}\n"


def flaky_repeats_project(dest: Path) -> Path:
    """The project of ``FLAKY_PATTERNS`` in ``dest/flaky`` (made here), six cases c1…c6."""
    return write_project(
        dest / "flaky",
        app=FLAKY_APP.format(patterns=FLAKY_PATTERNS),
        config=_FLAKY_CONFIG,
        policy=_FLAKY_POLICY,
        cases=[
            {"id": f"c{q[1:]}", "input": {"question": q}, "expected": {"answer": "yes"}}
            for q in FLAKY_PATTERNS
        ],
    )


# A baseline system and a candidate answering each case by its own steps, one per call in turn
# (``patterns_project``): p right, f wrong, e raises.
PATTERNS_APP = """
import threading

from oloproof import system

CALLS = {}
LOCK = threading.Lock()


def answer(case, role):
    with LOCK:
        n = CALLS.get((role, case["q"]), 0)
        CALLS[(role, case["q"])] = n + 1
    steps = case[role]
    step = steps[n % len(steps)]
    if step == "e":
        raise RuntimeError("upstream timeout")
    return {"answer": "yes" if step == "p" else "no"}


@system(name="base", version="1")
def base(case):
    return answer(case, "base")


@system(name="cand", version="1")
def cand(case):
    return answer(case, "cand")
"""

_PATTERNS_CONFIG = """\
system: {{name: {name}, version: "1", callable: "app:{name}"}}
dataset: cases.jsonl
evaluators:
  - {{type: contains, criterion: answer_correct, field: answer, expected_field: answer}}
policy: policy.yaml
"""


def patterns_project(root: Path, patterns: Sequence[tuple[str, str]], *, policy: str) -> Path:
    """A project in ``root`` (made here) whose case ``c{i}`` the baseline (``--config
    baseline.yaml``) and the candidate (``oloproof.yaml``) answer by ``patterns[i]``, a pair
    (baseline's steps, candidate's) of ``PATTERNS_APP``."""
    project = write_project(
        root,
        app=PATTERNS_APP,
        config=_PATTERNS_CONFIG.format(name="cand"),
        policy=policy,
        cases=[
            {
                "id": f"c{q}",
                "input": {"q": q, "base": base, "cand": cand},
                "expected": {"answer": "yes"},
            }
            for q, (base, cand) in enumerate(patterns)
        ],
    )
    (project / "baseline.yaml").write_text(_PATTERNS_CONFIG.format(name="base"))
    return project


def patterns_runs(root: Path) -> tuple[str, str]:
    """Run a ``patterns_project``'s baseline, then its candidate (neither gate failed): their
    run ids, the candidate's first."""
    ids = []
    for args in (("--config", "baseline.yaml"), ()):
        done = oloproof("run", *args, cwd=root)
        assert done.code in (0, 3), done.out + done.err
        ids.append(done.lines[0].split()[1])
    base, cand = ids
    return cand, base


def non_inferiority_compared(root: Path, margin: float) -> tuple[list[str], str, str]:
    """The lines of ``compare`` of a ``patterns_project``'s candidate with its baseline (each
    run here, its gate not failed) under non-inferiority by ``margin`` points on
    answer_correct, which blocks; and the candidate's and the baseline's run ids."""
    (root / "compare.yaml").write_text(
        "version: 1\nrules:\n"
        f"  - {{id: nw, metric: answer_correct, non_inferiority: {{margin: {margin}}}}}\n"
    )
    cand, base = patterns_runs(root)
    done = oloproof("compare", cand, base, "--policy", "compare.yaml", cwd=root)
    assert done.code == 3, done.out + done.err
    return done.lines, cand, base


def echo_project(root: Path, app: str, config: str, questions: Sequence[str]) -> Path:
    """``write_project`` of ``app`` and ``config``, a policy on the criterion ``echoed`` and a
    case per question: input ``{"q": question, "n": i}`` (each input its own: identical inputs
    would share one execution), expected answer the question."""
    return write_project(
        root,
        app=app,
        config=config,
        policy="version: 1\nrules:\n  - {id: floor, metric: echoed, min: 0.5}\n",
        cases=(
            {"id": f"c{i}", "input": {"q": q, "n": i}, "expected": {"answer": q}}
            for i, q in enumerate(questions)
        ),
    )


def assert_diagnosis_verified(root: Path, address: str) -> None:
    """``diagnose --verify ADDRESS`` and ``verify`` in ``root`` both find nothing wrong."""
    for args in (("diagnose", "--verify", address), ("verify",)):
        verified = oloproof(*args, cwd=root)
        assert verified.code == 0, verified.out + verified.err


def metric_of(report: Any, criterion: str) -> Any:
    """The metric named ``criterion`` in a run's ``--json`` report (``run`` or ``inspect``)."""
    return next(m for m in report["metrics"] if m["criterion"] == criterion)


def bundle_cases(root: Path, run_id: str) -> list[dict[str, Any]]:
    """The cases of ``oloproof export RUN_ID``'s bundle, in its order."""
    done = oloproof("export", run_id, cwd=root)
    assert done.code == 0, done.err
    bundle = root / ".oloproof" / "bundles" / run_id / "cases.jsonl"
    return [json.loads(line) for line in bundle.read_text().splitlines()]


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens at (bound once, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# For a script that calls the Python API in a subprocess: ``said(call)`` is what the call raised
# (its type's name and its message), or ``["returned", name of its result's type]``.
SAID = """
def said(call):
    try:
        result = call()
    except Exception as e:
        return [type(e).__name__, str(e)]
    return ["returned", type(result).__name__]
"""


def api_said(script: str, cwd: Path) -> list[Any]:
    """What each line ``script`` (a Python API script, ``SAID`` at its head) prints, read as
    JSON, once it has run in a subprocess in ``cwd`` and exited 0."""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]
