"""A package installed without a ``RECORD`` counts by the content of its module files.

A distribution whose ``.dist-info`` (or ``.egg-info``) lists no ``RECORD`` (``setup.py
install``, a system package manager's python3-* packages, a hand-made dist-info) stood for its
version alone: ``ragcore/core.py`` edited in place reused the old answers (``Cache: execution 1
hit/0 miss``) with no ``Not seen`` line. Nothing says what its files held when installed, so it
now counts by the content of its module files, as a package no distribution claims does:
``installed ragcore 1.0 changed (its module files changed)``. Both counted only the modules
loaded when the fingerprint was made, so a submodule the package imports when called (``from
ragcore import impl`` inside ``reply``) edited in place was reused as well: every module file
in the package's folder counts now, loaded or not.

The package lives in a ``site-packages`` folder on PYTHONPATH. Real CLI runs in a subprocess.
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_installed_files import CODE, HIT, MISS, _answer, _env, _install, _project
from tests.support import oloproof


def test_a_module_of_a_package_without_a_record_edited_in_place_executes_again(
    tmp_path: Path,
) -> None:
    root, site = _project(tmp_path / "p"), tmp_path / "env" / "site-packages"
    _install(site, code=CODE.replace("WORD", "first"))
    (site / "ragcore-1.0.dist-info" / "RECORD").unlink()
    first = oloproof("run", cwd=root, env=_env(site))
    assert MISS in first.lines, first.out + first.err
    assert HIT in oloproof("run", cwd=root, env=_env(site)).lines
    (site / "ragcore" / "core.py").write_text(CODE.replace("WORD", "other"))

    planned = oloproof("run", "--dry-run", cwd=root, env=_env(site))
    said = "  1 executions: installed ragcore 1.0 changed (its module files changed)"
    assert said in planned.lines, planned.out
    again = oloproof("run", cwd=root, env=_env(site))
    assert MISS in again.lines, again.out
    assert _answer(root, again.out) == "q1 other"


LAZY = """
def reply(question):
    from ragcore import impl  # loaded only when called: after the fingerprint is made

    return impl.reply(question)
"""


def test_a_submodule_imported_when_called_counts_too(tmp_path: Path) -> None:
    # A distribution without a RECORD, and a package no distribution claims.
    for record in ("removed", "never written"):
        root, site = _project(tmp_path / record), tmp_path / record / "env" / "site-packages"
        _install(site, code=LAZY, record=record != "never written")
        (site / "ragcore" / "impl.py").write_text(CODE.replace("WORD", "first"))
        if record == "removed":
            (site / "ragcore-1.0.dist-info" / "RECORD").unlink()
        assert MISS in oloproof("run", cwd=root, env=_env(site)).lines, record
        (site / "ragcore" / "impl.py").write_text(CODE.replace("WORD", "other"))
        again = oloproof("run", cwd=root, env=_env(site))
        assert MISS in again.lines, (record, again.out)
        assert _answer(root, again.out) == "q1 other"
