"""A subset the Python API cannot choose is refused in the API's words, not the command's.

``evaluate(sample=5)`` over fewer cases, a filter written wrong or matching no key, and
``plan.restrict`` given a limit below 1 used to raise errors naming ``--sample``, ``--filter``
and ``--limit``, options a Python caller never wrote. Through the API they now name its
arguments (``sample=5``, ``filters``, ``limit``); the command's sentences stay as they were
(``oloproof run`` checked below, in a subprocess). The API calls run in a Python process of their
own, as a user's script would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

SCRIPT = """
import json, os, sys
import oloproof
from oloproof.subset import Selection
try:
    exec(sys.argv[1])
    said = ["returned"]
except oloproof.ConfigError as e:
    said = ["ConfigError", str(e)]
except BaseException as e:
    said = [type(e).__name__, str(e)]
print(json.dumps(said + [os.path.exists(".oloproof")]))
"""

SAID = {
    "oloproof.evaluate(sample=5)": (
        "evaluate(): sample=5 asks for more cases than the 3 in the cases file; drop sample to "
        "run them all"
    ),
    "oloproof.evaluate(sample=4, filters=['metadata.topic=a'])": (
        "evaluate(): sample=4 asks for more cases than the 2 selected by "
        "filters=['metadata.topic=a']; drop sample to run them all"
    ),
    "oloproof.evaluate(filters=['topic=a'])": (
        "evaluate(): 'topic=a' in filters: write it as metadata.KEY=VALUE "
        "(e.g. metadata.topic=billing)"
    ),
    "oloproof.evaluate(filters=['metadata.topik=a'])": (
        "evaluate(): metadata.topik in filters: no case has this metadata key; "
        "did you mean 'metadata.topic'?"
    ),
    "oloproof.evaluate(filters=['metadata.topic=z'])": (
        "evaluate(): filters: no case has metadata.topic in ['z']"
    ),
    "oloproof.plan_run('oloproof.yaml').restrict(Selection(limit=0))": (
        "plan.restrict(): limit must be 1 or more, not 0"
    ),
    "oloproof.plan_run('oloproof.yaml').restrict(Selection(limit=1, sample=1, seed=0))": (
        "plan.restrict(): sample and limit choose cases two ways; give one of them"
    ),
}

# The same mistakes on the command line, in the command's words (as before).
COMMAND = {
    ("--sample", "5"): (
        "error: --sample 5 asks for more cases than the 3 in the cases file; drop --sample to "
        "run them all"
    ),
    ("--sample", "4", "--filter", "metadata.topic=a"): (
        "error: --sample 4 asks for more cases than the 2 selected by --filter metadata.topic=a; "
        "drop --sample to run them all"
    ),
    ("--filter", "topic=a"): (
        "error: --filter 'topic=a': write it as metadata.KEY=VALUE (e.g. metadata.topic=billing)"
    ),
    ("--filter", "metadata.topik=a"): (
        "error: --filter metadata.topik: no case has this metadata key; "
        "did you mean 'metadata.topic'?"
    ),
    ("--filter", "metadata.topic=z"): "error: --filter: no case has metadata.topic in ['z']",
}


def _project(root: Path) -> Path:
    toy_project(root, cases=3)
    lines = (root / "cases.jsonl").read_text().splitlines()
    topics = ["a", "a", "b"]
    (root / "cases.jsonl").write_text(
        "".join(
            json.dumps({**json.loads(line), "metadata": {"topic": topic}}) + "\n"
            for line, topic in zip(lines, topics, strict=True)
        )
    )
    return root


@pytest.mark.parametrize("call", sorted(SAID))
def test_the_api_names_its_own_arguments(tmp_path: Path, call: str) -> None:
    root = _project(tmp_path / "p")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, call], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["ConfigError", SAID[call], False]


@pytest.mark.parametrize("args", sorted(COMMAND))
def test_the_command_names_its_options(tmp_path: Path, args: tuple[str, ...]) -> None:
    root = _project(tmp_path / "p")
    done = oloproof("run", *args, cwd=root)
    assert (done.code, done.err.strip()) == (2, COMMAND[args])
    assert not (root / ".oloproof").exists()
