"""``oloproof.evaluate`` given an argument of the wrong type or out of range raises one
``ConfigError`` naming the argument, before anything is written, where it used to run with a
silent default (a ``seed`` without ``sample`` ignored, ``concurrency=0`` run at 1, a
``use_cache='no'`` read as true) or fail deep inside with a TypeError or CodecError. Each call
runs in a Python process of its own, as a user's script would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support import toy_project

# Calls evaluate(**ARGS) and prints what it raised and whether a ledger was made.
SCRIPT = """
import json, os, sys
import oloproof
args = eval(sys.argv[1])
try:
    report = oloproof.evaluate(**args)
    said = ["returned", report.cases]
except oloproof.ConfigError as e:
    said = ["ConfigError", str(e)]
except BaseException as e:
    said = [type(e).__name__, str(e)]
print(json.dumps(said + [os.path.exists(".oloproof")]))
"""

INT_MAX = (1 << 64) - 1

REFUSED = {
    # Silently defaulted or misread before.
    "seed=3": "evaluate(): seed chooses the cases of sample; give sample=N with it",
    "sample=2, seed=-7": (
        "evaluate(): seed is the seed of sample's draw (an int, 0 or more), not -7"
    ),
    "concurrency=0": (
        "evaluate(): concurrency is how many cases run at once (an int from 1 to 10000), not 0"
    ),
    "concurrency=-1": (
        "evaluate(): concurrency is how many cases run at once (an int from 1 to 10000), not -1"
    ),
    "repeats=1001": (
        "evaluate(): repeats is how many times each case executes (an int from 1 to 1000), not 1001"
    ),
    "limit=True": "evaluate(): limit is a number of cases (an int, 1 or more), not True",
    "use_cache='no'": "evaluate(): use_cache is True or False, not 'no'",
    "filters='metadata.topic=a'": (
        "evaluate(): filters is a list of 'metadata.KEY=VALUE' strings, not one str: "
        "give ['metadata.topic=a']"
    ),
    # Failed deep inside before.
    "limit='5'": "evaluate(): limit is a number of cases (an int, 1 or more), not '5'",
    "limit=2.5": "evaluate(): limit is a number of cases (an int, 1 or more), not 2.5",
    f"limit={INT_MAX + 1}": (
        "evaluate(): limit is a number of cases (an int, 1 or more), not 18446744073709551616 "
        "(larger than a run records)"
    ),
    f"sample=2, seed={INT_MAX + 1}": (
        "evaluate(): seed is the seed of sample's draw (an int, 0 or more), not "
        "18446744073709551616 (larger than a run records)"
    ),
    "repeats='2'": (
        "evaluate(): repeats is how many times each case executes (an int from 1 to 1000), not '2'"
    ),
    "concurrency='4'": (
        "evaluate(): concurrency is how many cases run at once (an int from 1 to 10000), not '4'"
    ),
    "filters=[3]": "evaluate(): filters is a list of 'metadata.KEY=VALUE' strings; it holds 3",
    "config={'system': {}}": (
        "evaluate(): config is the path of a project file (a str or os.PathLike), not a dict"
    ),
    "config=None": (
        "evaluate(): config is the path of a project file (a str or os.PathLike), not None"
    ),
    "config=b'oloproof.yaml'": (
        "evaluate(): config is the path of a project file (a str or os.PathLike), not a bytes"
    ),
    "policy=1": (
        "evaluate(): policy is the path of a policy file (a str or os.PathLike) or None, not an int"
    ),
}


def _evaluate(root: Path, args: str) -> list[object]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, f"dict({args})"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    said: list[object] = json.loads(done.stdout)
    return said


@pytest.mark.parametrize("args", sorted(REFUSED))
def test_a_bad_argument_is_refused_naming_it(tmp_path: Path, args: str) -> None:
    root = toy_project(tmp_path / "p", cases=3)
    assert _evaluate(root, args) == ["ConfigError", REFUSED[args], False]


def test_numpy_ints_and_path_objects_are_taken(tmp_path: Path) -> None:
    # What a notebook computes its numbers with, and a path object: taken as the ints and the
    # path they are.
    pytest.importorskip("numpy")
    root = toy_project(tmp_path / "p", cases=3)
    args = "config=__import__('pathlib').Path('oloproof.yaml'), limit=__import__('numpy').int64(2)"
    assert _evaluate(root, args) == ["returned", 2, True]
