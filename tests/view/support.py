"""Helpers of the viewer's tests: projects made with the real CLI, the viewer in a subprocess."""

from __future__ import annotations

import contextlib
import html
import json
import re
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support import copy_example, oloproof

RUN_ID = re.compile(r"run_[0-9A-HJKMNP-TV-Z]{26}")
ADDRESS = re.compile(r"sha256:[0-9a-f]{64}")

HOSTILE_APP = """
from oloproof import system

@system(name="hostile", version="1")
def run(case):
    return {"answer": case["q"] + " <script>document.title = 'owned'</script>"}
"""
HOSTILE_CASES = (
    '{"id": "xss", "input": {"q": "<img src=x onerror=alert(1)>"}, "expected": {"answer": "nope"}}\n'
    '{"id": "fine", "input": {"q": "nope"}, "expected": {"answer": "nope"}}\n'
)
HOSTILE_CONFIG = """system: {name: hostile, version: '1', callable: 'app:run'}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
"""


@dataclass
class SupportProject:
    """support_rag run, diagnosed with gold context, and its two child runs compared."""

    root: Path
    run_id: str
    diagnosis: str
    gold_run: str
    control_run: str
    comparison: str


def make_support(dest: Path) -> SupportProject:
    root = copy_example("support_rag", dest)
    run = oloproof("run", cwd=root)
    assert run.code == 3, run.err
    run_id = RUN_ID.findall(run.out)[0]
    diag = oloproof(
        "diagnose", run_id, "--intervention", "gold-context", "--criterion", "answer_correct",
        cwd=root,
    )  # fmt: skip
    assert diag.code == 0, diag.err
    diagnosis = ADDRESS.findall(diag.out.split("Diagnosis ", 1)[1])[0]
    child_line = next(line for line in diag.lines if line.startswith("Child runs:"))
    gold_run, control_run = RUN_ID.findall(child_line)
    compared = oloproof("compare", gold_run, control_run, "--policy", "compare.yaml", cwd=root)
    assert compared.code in (0, 1, 3), compared.err
    comparison = ADDRESS.findall(compared.out)[0]
    return SupportProject(root, run_id, diagnosis, gold_run, control_run, comparison)


def make_hostile(dest: Path) -> tuple[Path, str]:
    root = dest / "hostile"
    root.mkdir()
    (root / "app.py").write_text(HOSTILE_APP)
    (root / "cases.jsonl").write_text(HOSTILE_CASES)
    (root / "oloproof.yaml").write_text(HOSTILE_CONFIG)
    run = oloproof("run", cwd=root)
    assert run.code == 0, run.err
    return root, RUN_ID.findall(run.out)[0]


# Case ids a URL path cannot carry as they are: dot segments ("." and ".."; "%2E" is one too
# for a browser), and characters that end or escape a path segment.
ODD_IDS = [".", "..", "...", "../x", "a/b", "what?", "x#y", "100%", "%2e", "two words", "é"]
ODD_APP = """
import os
from oloproof import system

@system(name="odd", version="1")
def run(case):
    return {"answer": "yes" if os.environ.get("ANSWER_YES") else "no"}
"""


@dataclass
class OddIdsProject:
    """A run failing every case of ODD_IDS (each asks ``<<ID>>``), and a run passing them all
    compared with it: every case flipped."""

    root: Path
    run_id: str
    passing_run: str
    comparison: str


def make_odd_ids(dest: Path) -> OddIdsProject:
    root = dest / "odd"
    root.mkdir()
    (root / "app.py").write_text(ODD_APP)
    (root / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "input": {"q": f"<<{i}>>"}, "expected": {"answer": "yes"}}) + "\n"
            for i in ODD_IDS
        )
    )
    (root / "oloproof.yaml").write_text(HOSTILE_CONFIG.replace("hostile", "odd"))
    failing = oloproof("run", cwd=root)
    assert failing.code == 0, failing.err
    passing = oloproof("run", "--no-cache", cwd=root, env={"ANSWER_YES": "1"})
    assert passing.code == 0, passing.err
    run_id, passing_id = RUN_ID.findall(failing.out)[0], RUN_ID.findall(passing.out)[0]
    compared = oloproof("compare", passing_id, run_id, cwd=root)
    assert compared.code == 0, compared.err
    return OddIdsProject(root, run_id, passing_id, ADDRESS.findall(compared.out)[0])


@contextlib.contextmanager
def serving(root: Path, *args: str) -> Iterator[str]:
    """`oloproof view --port 0` in ``root``, as a subprocess; yields its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "oloproof", "view", "--port", "0", *args],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the line naming the address: the server is listening
        found = re.search(r"http://[^\s/]+:\d+/", line)
        assert found, f"no address in {line!r}; stderr: {proc.stderr.read() if proc.stderr else ''}"
        yield found.group(0).rstrip("/")
    finally:
        proc.terminate()
        proc.communicate(timeout=30)  # reaps it and closes both pipes


def page_text(page: str) -> str:
    """The page as a reader sees it: tags dropped, entities decoded, spaces squeezed."""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def fetch(url: str, method: str = "GET", headers: dict[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8")


def raw(port: int, *lines: str) -> tuple[int, dict[str, str], str]:
    """Send the request ``lines`` exactly as given to 127.0.0.1:``port`` (no Host header is
    added, unlike urllib's); (status, headers, body) of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        received = b""
        while chunk := conn.recv(65536):  # the server closes the connection after answering
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *fields = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (f.partition(":") for f in fields)}
    return int(status_line.split()[1]), headers, body.decode("utf-8")
