"""A public function given an argument of the wrong type refuses it with one ``ConfigError``
naming the argument and what it got, before anything is written, as ``evaluate`` does.
``compare_runs(policy_path=3)``, ``plan_run(3)``, ``load_config(3)``, ``load_dataset(3)`` and
``open_project_ledger(3)`` raised ``TypeError: expected str, bytes or os.PathLike object, not
int`` from deep inside, ``plan_run(engine=3)`` a ``TypeError`` of ``re``, and
``execute_run(ledger, "plan")`` ``AttributeError: 'str' object has no attribute 'config'``.
Each call runs in a Python process of its own, as a user's script would."""

from __future__ import annotations

from pathlib import Path

from tests.support import SAID, api_said, oloproof, toy_project

SCRIPT = (
    """
import asyncio, json, oloproof
"""
    + SAID
    + """

plan = oloproof.plan_run("oloproof.yaml")
calls = [
    lambda: oloproof.plan_run(3),
    lambda: oloproof.plan_run("oloproof.yaml", policy_path=3),
    lambda: oloproof.plan_run("oloproof.yaml", engine=3),
    lambda: oloproof.load_config(3),
    lambda: oloproof.load_dataset(3),
    lambda: oloproof.open_project_ledger(3),
    lambda: asyncio.run(oloproof.execute_run(".", plan)),
]
with oloproof.open_project_ledger(".", create=False) as ledger:
    calls += [
        lambda: oloproof.compare_runs(ledger, "latest", "latest", policy_path=3),
        lambda: asyncio.run(oloproof.execute_run(ledger, "plan")),
    ]
    for call in calls:
        print(json.dumps(said(call)))
"""
)

ASK_FOR_A_LEDGER = (
    "ledger is an open ledger (oloproof.open_project_ledger(folder)), not the path '.'; "
    "close it when done, or use it in a with block"
)


def test_an_argument_of_the_wrong_type_is_refused_by_name(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "toy", cases=2)
    assert oloproof("run", cwd=root).code == 3  # recorded; too few cases to pass
    said = api_said(SCRIPT, root)
    assert said == [
        [
            "ConfigError",
            "plan_run(): config_path is the path of a project file (a str or os.PathLike), "
            "not an int",
        ],
        [
            "ConfigError",
            "plan_run(): policy_path is the path of a policy file (a str or os.PathLike) or "
            "None, not an int",
        ],
        [
            "ConfigError",
            "plan_run(): engine is where the cases execute (a str: local, ray or a Ray "
            "cluster's address) or None, not 3",
        ],
        [
            "ConfigError",
            "load_config(): path is the path of a project file (a str or os.PathLike), not an int",
        ],
        [
            "ConfigError",
            "load_dataset(): path is the path of a cases file (a str or os.PathLike), not an int",
        ],
        [
            "ConfigError",
            "open_project_ledger(): root is the path of a project folder (a str or "
            "os.PathLike), not an int",
        ],
        ["ConfigError", ASK_FOR_A_LEDGER],
        [
            "ConfigError",
            "compare_runs(): policy_path is the path of a policy file (a str or os.PathLike) "
            "or None, not an int",
        ],
        ["ConfigError", "execute_run(): plan is what plan_run() returns, not 'plan'"],
    ]
    # Refused before anything was written: the first run is still the only one.
    assert len([line for line in oloproof("runs", cwd=root).lines if "run_" in line]) == 1
