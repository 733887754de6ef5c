"""A package installed into a namespace package (``google.protobuf``, ``opentelemetry.api``,
``azure.core``) stands for its own distribution.

The fingerprint stood for an installed module by the distribution of its top-level name. A
namespace package's top level (``ragns``, with no ``__init__.py``) has no file, and no
distribution is named after it, so every package under it stood for ``ragns unknown``: upgrading
the distribution that installed ``ragns/core.py`` from 1.0 to 1.1, whose ``reply`` answers
otherwise, reused the old answers (``Cache: execution 1 hit/0 miss``) with no ``Not seen``
line. It now stands for the distribution whose ``RECORD`` lists the package's files:
``installed ragns-core changed (1.0 → 1.1)``.

The distribution is installed as a wheel installs it into a ``site-packages`` folder on
PYTHONPATH. Real CLI runs in a subprocess.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.cli.test_installed_files import HIT, MISS, _answer, _digest, _env, _project
from tests.support import oloproof

APP = """
from ragns import core

from oloproof import system


@system(name="installed", version="1")
def answer(case):
    return {"answer": core.reply(case["q"])}
"""

CODE = 'def reply(question):\n    return question + " WORD"\n'


def _install(site: Path, *, version: str, word: str) -> None:
    """``ragns/core.py`` (``ragns`` a namespace package: no ``__init__.py``) from the
    distribution ``ragns-core``, with its ``RECORD``, and ``ragns/base.py`` from another (whose
    ``top_level.txt`` names ``ragns`` too, and which is found first)."""
    shutil.rmtree(site, ignore_errors=True)
    (site / "ragns").mkdir(parents=True)
    for dist, module, code in (
        (f"ragns_core-{version}", "core", CODE.replace("WORD", word)),
        ("ragns_base-2.0", "base", "X = 1\n"),  # listed first
    ):
        file = site / "ragns" / f"{module}.py"
        file.write_text(code)
        info = site / f"{dist}.dist-info"
        info.mkdir()
        name, _, number = dist.partition("-")
        metadata = f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {number}\n"
        (info / "METADATA").write_text(metadata)
        (info / "top_level.txt").write_text("ragns\n")
        lines = [
            f"ragns/{module}.py,sha256={_digest(file.read_bytes())},{file.stat().st_size}",
            f"{dist}.dist-info/METADATA,sha256={_digest(metadata.encode())},{len(metadata)}",
            f"{dist}.dist-info/RECORD,,",
        ]
        (info / "RECORD").write_text("\n".join(lines) + "\n")


def test_upgrading_a_package_inside_a_namespace_package_executes_again(tmp_path: Path) -> None:
    root, site = _project(tmp_path / "p"), tmp_path / "env" / "site-packages"
    (root / "app.py").write_text(APP)
    _install(site, version="1.0", word="first")
    first = oloproof("run", cwd=root, env=_env(site))
    assert MISS in first.lines, first.out + first.err
    assert HIT in oloproof("run", cwd=root, env=_env(site)).lines
    _install(site, version="1.1", word="second")

    planned = oloproof("run", "--dry-run", cwd=root, env=_env(site))
    assert "  1 executions: installed ragns-core changed (1.0 → 1.1)" in planned.lines, planned.out
    again = oloproof("run", cwd=root, env=_env(site))
    assert MISS in again.lines, again.out
    assert _answer(root, again.out) == "q1 second"
