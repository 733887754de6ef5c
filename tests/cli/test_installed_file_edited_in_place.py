"""An installed package's module edited in place (its version and RECORD unchanged) executes again.

Someone patches ``site-packages/ragcore/core.py`` to debug. The fingerprint stood for the
installed distribution by its version and the digest of its ``RECORD``, neither of which an
edit in place touches, so the next run reused the old answers (``Cache: execution 1 hit/0
miss``) made by code that no longer exists, with no ``Not seen`` line. A file the ``RECORD``
lists that was written after it (installers write ``RECORD`` last), or whose size is not the
recorded one, is now checked against its recorded hash, and one that differs counts by its
content: ``installed ragcore 1.0 changed (ragcore/core.py edited in place)``. A file touched
but not changed (``touch``) is the same package. A module dropped in beside the installed ones
(which the RECORD does not list) counts by its content too.

The package is installed as a wheel installs it (``tests/cli/test_installed_files.py``) into a
``site-packages`` folder on PYTHONPATH. Real CLI runs in a subprocess.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.cli.test_installed_files import (
    CODE,
    FROM_DATA,
    HIT,
    MISS,
    _answer,
    _env,
    _install,
    _project,
)
from tests.cli.test_installed_without_record_edited import LAZY
from tests.support import oloproof


def _later(path: Path) -> None:
    """Move ``path``'s times past its RECORD's, as an edit made after installation does
    (the edit itself may land within the filesystem's timestamp tick)."""
    later = path.stat().st_mtime_ns + 2_000_000_000
    os.utime(path, ns=(later, later))


def test_a_module_edited_in_place_executes_again(tmp_path: Path) -> None:
    root, site = _project(tmp_path / "p"), tmp_path / "env" / "site-packages"
    _install(site, code=CODE.replace("WORD", "first"))
    first = oloproof("run", cwd=root, env=_env(site))
    assert MISS in first.lines, first.out + first.err
    core = site / "ragcore" / "core.py"
    core.write_text(CODE.replace("WORD", "other"))  # the same size as the installed file
    _later(core)

    planned = oloproof("run", "--dry-run", cwd=root, env=_env(site))
    said = "  1 executions: installed ragcore 1.0 changed (ragcore/core.py edited in place)"
    assert said in planned.lines, planned.out
    again = oloproof("run", cwd=root, env=_env(site))
    assert MISS in again.lines, again.out
    assert _answer(root, again.out) == "q1 other"
    core.write_text(CODE.replace("WORD", "third"))  # edited again
    _later(core)
    assert MISS in oloproof("run", cwd=root, env=_env(site)).lines


def test_an_edit_keeping_the_installed_time_executes_again_when_the_size_differs(
    tmp_path: Path,
) -> None:
    # cp -p or rsync -a of a patched copy: the file's times are older than the RECORD.
    root, site = _project(tmp_path / "p"), tmp_path / "env" / "site-packages"
    _install(site, code=FROM_DATA, data="first")
    assert oloproof("run", cwd=root, env=_env(site)).code == 0
    prompt = site / "ragcore" / "prompt.txt"
    times = prompt.stat()
    prompt.write_text("a longer prompt")
    os.utime(prompt, ns=(times.st_atime_ns, times.st_mtime_ns))
    again = oloproof("run", cwd=root, env=_env(site))
    assert MISS in again.lines, again.out
    assert _answer(root, again.out) == "q1 a longer prompt"


def test_a_file_touched_but_not_changed_is_the_same_package(tmp_path: Path) -> None:
    root, site = _project(tmp_path / "p"), tmp_path / "env" / "site-packages"
    _install(site, code=CODE.replace("WORD", "first"))
    assert oloproof("run", cwd=root, env=_env(site)).code == 0
    _later(site / "ragcore" / "core.py")
    again = oloproof("run", cwd=root, env=_env(site))
    assert HIT in again.lines, again.out


def test_a_module_added_beside_the_installed_ones_counts_by_its_content(tmp_path: Path) -> None:
    # Dropped in after the installation, so the RECORD does not list it, and imported by the
    # installed code only when called.
    root, site = _project(tmp_path / "p"), tmp_path / "env" / "site-packages"
    _install(site, code=LAZY)
    added = site / "ragcore" / "impl.py"
    added.write_text(CODE.replace("WORD", "first"))
    assert MISS in oloproof("run", cwd=root, env=_env(site)).lines
    added.write_text(CODE.replace("WORD", "other"))

    planned = oloproof("run", "--dry-run", cwd=root, env=_env(site))
    said = "  1 executions: installed ragcore 1.0 changed (ragcore/impl.py edited in place)"
    assert said in planned.lines, planned.out
    again = oloproof("run", cwd=root, env=_env(site))
    assert MISS in again.lines, again.out
    assert _answer(root, again.out) == "q1 other"
