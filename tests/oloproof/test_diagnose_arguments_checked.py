"""``oloproof.diagnose`` given an argument of the wrong type or out of range raises one
``ConfigError`` naming the argument, before anything is written, as ``evaluate`` does. It used
to take ``reuse_generations='no'`` as true, run ``repeats=1001`` (the command takes at most
1000) and record ``repeats=True``, and to fail deep inside with a raw TypeError on
``repeats='2'`` or a list as ``criterion``. An error about how arguments combine names them as
Python does, not as the command's options. Each call runs in a Python process of its own, as a
user's script would, over one recorded run of the support example.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support import copy_example, oloproof

# Calls diagnose(ledger, **ARGS) and prints what it raised, and how many runs and diagnoses
# the ledger holds afterwards.
SCRIPT = """
import json, sys
import oloproof
from oloproof import events as ev
args = {"run": "latest", "intervention": "gold-context", "criterion": "answer_correct"}
args.update(eval(sys.argv[1]))
with oloproof.open_project_ledger(".", create=False) as ledger:
    try:
        said = ["returned", oloproof.diagnose(ledger, **args).body["repeats"]]
    except oloproof.ConfigError as e:
        said = ["ConfigError", str(e)]
    except BaseException as e:
        said = [type(e).__name__, str(e)]
    held = [len(ledger.lookup("type", kind)) for kind in (ev.RUN, ev.DIAGNOSIS)]
print(json.dumps(said + held))
"""

INT_MAX = (1 << 64) - 1
TOP_K = "intervention='top-k', "
BUDGET = "intervention='token-budget', "

REFUSED = {
    # Taken as something else before.
    "reuse_generations='no'": "diagnose(): reuse_generations is True or False, not 'no'",
    "repeats=1001": (
        "diagnose(): repeats is how many times the intervention and its control each run "
        "(an int from 1 to 1000), not 1001"
    ),
    "repeats=True": (
        "diagnose(): repeats is how many times the intervention and its control each run "
        "(an int from 1 to 1000), not True"
    ),
    BUDGET + "token_budget=True": (
        "diagnose(): token_budget is the token budget to try (an int, 1 or more), not True"
    ),
    # Failed deep inside before.
    "repeats='2'": (
        "diagnose(): repeats is how many times the intervention and its control each run "
        "(an int from 1 to 1000), not '2'"
    ),
    "criterion=['answer_correct']": (
        "diagnose(): criterion is the name of one of the run's criteria (a str), "
        "not ['answer_correct']"
    ),
    TOP_K + "top_k='3'": "diagnose(): top_k is the cut to try (an int, 1 or more), not '3'",
    TOP_K + f"top_k={INT_MAX + 1}": (
        "diagnose(): top_k is the cut to try (an int, 1 or more), not 18446744073709551616 "
        "(larger than a run records)"
    ),
    "engine=3": (
        "diagnose(): engine is where the child runs execute (a str: local, ray or a Ray "
        "cluster's address) or None, not 3"
    ),
    "intervention='reranker', reranker=3": (
        "diagnose(): reranker is the module:function that reorders candidates (a str) or "
        "None, not 3"
    ),
    "run=5": "diagnose(): run is the run to diagnose (a str: id, ref or address), not 5",
    "intervention=None": (
        "diagnose(): intervention is gold-context, top-k, reranker or token-budget (a str), "
        "not None"
    ),
    # Combinations, named as the arguments are (the command names its options).
    "reuse_generations=True, repeats=2": (
        "diagnose(): reuse_generations=True cannot go with repeats=2: a repeat that reads "
        "stored generations repeats nothing; leave out one of the two"
    ),
    "top_k=3": "diagnose(): top_k applies only to intervention top-k or token-budget",
    TOP_K.rstrip(", "): "diagnose(): intervention='top-k' needs top_k=N (the wider cut to try)",
    TOP_K + "top_k=0": "diagnose(): top_k is the cut to try (an int, 1 or more), not 0",
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_example("support_rag", tmp_path_factory.mktemp("diagnose_args"))
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.err
    return root


def _diagnose(root: Path, args: str) -> list[object]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, f"dict({args})"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    said: list[object] = json.loads(done.stdout)
    return said


@pytest.mark.parametrize("args", sorted(REFUSED))
def test_a_bad_argument_is_refused_naming_it_before_anything_is_written(
    project: Path, args: str
) -> None:
    # One run (the parent) and no diagnosis: nothing was written.
    assert _diagnose(project, args) == ["ConfigError", REFUSED[args], 1, 0]


def test_good_arguments_still_diagnose(project: Path) -> None:
    # A numpy integer is a whole number; two repeats: two child runs of each role.
    pytest.importorskip("numpy")
    said = _diagnose(project, "repeats=__import__('numpy').int64(2), reuse_generations=False")
    assert said == ["returned", 2, 5, 1]


def test_the_largest_count_is_what_the_ledger_records() -> None:
    # callargs writes the ledger's limit out, so that the light labels need not load the ledger.
    from ledger.codec import INT_MAX as RECORDED
    from oloproof.callargs import INT_MAX as CHECKED

    assert CHECKED == RECORDED == INT_MAX
