"""An installed package's decorator around the project's function counts by that package.

``helper.py`` wraps its function with ``ragdeco.deco``, a decorator from an installed package
that builds its wrapper with ``functools.wraps``, which copies the wrapped function's
``__module__`` (``helper``) onto the wrapper. The walk took the wrapper's package from that
name: it counted ``helper`` as an installed package (``installed helper changed (unversioned
…)`` after an edit to it) and ``ragdeco`` not at all, so upgrading ``ragdeco`` from 1.0 to 1.1,
whose wrapper answers otherwise, reused the old answers (``Cache: execution 1 hit/0 miss``)
with no ``Not seen`` line. The wrapper now counts by the module its code is defined in.

The package lives in a ``site-packages`` folder on PYTHONPATH, installed code to the
fingerprint, with the ``.dist-info`` its version is read from. Real CLI runs in a subprocess.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.support import answered_project, oloproof

APP = """
import helper
from oloproof import system


@system(name="s", version="1")
def answer(case):
    return {"answer": helper.reply(case["q"])}
"""

HELPER = """
from ragdeco import deco


@deco
def reply(q):
    return q
"""

DECO = """
import functools


def deco(fn):
    @functools.wraps(fn)
    def wrapper(q):
        return fn(q) + SUFFIX

    return wrapper
"""


def _install(site: Path, version: str, suffix: str) -> None:
    shutil.rmtree(site, ignore_errors=True)
    (site / "ragdeco").mkdir(parents=True)
    (site / "ragdeco" / "__init__.py").write_text(f"SUFFIX = {suffix!r}\n{DECO}")
    info = site / f"ragdeco-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: ragdeco\nVersion: {version}\n")


def test_upgrading_the_decorator_s_package_executes_again(tmp_path: Path) -> None:
    root = answered_project(tmp_path / "p", APP, cases=2)
    (root / "helper.py").write_text(HELPER)
    site = tmp_path / "env" / "site-packages"
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    _install(site, "1.0", "")
    first = oloproof("run", cwd=root, env=env)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in first.lines, first.err
    _install(site, "1.1", "!")

    dry = oloproof("run", "--dry-run", cwd=root, env=env)
    assert "  2 executions: installed ragdeco changed (1.0 → 1.1)" in dry.lines, dry.out
    rerun = oloproof("run", cwd=root, env=env)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in rerun.lines, rerun.out
