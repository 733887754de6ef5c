"""An installed package stands for itself by its version and by the files it installed.

A project's own library installed without an editable install (``pip install .`` in a Docker
image, a wheel built in CI) keeps its version across edits more often than not: the
fingerprint took the version for the code, so reinstalling the library with other code, or
with another data file (a prompt it ships), reused every answer made by the old one, and the
run said nothing. A package that no distribution claims stood for its ``__init__.py`` alone, so
an edit to any of its other modules was missed the same way. Each now executes again, and the
same files installed in another environment (another interpreter, another installer) are the
same package.

The packages live in ``site-packages`` folders on PYTHONPATH, installed code to the
fingerprint; their ``RECORD`` is written as pip writes it. Real CLI runs in a subprocess.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
from pathlib import Path

from tests.support import bundle_cases, oloproof

CONFIG = """
system: {name: installed, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""

APP = """
import ragcore

from oloproof import system


@system(name="installed", version="1")
def answer(case):
    return {"answer": ragcore.reply(case["q"])}
"""

CODE = 'def reply(question):\n    return question + " WORD"\n'
FROM_DATA = """
from pathlib import Path


def reply(question):
    return question + " " + (Path(__file__).parent / "prompt.txt").read_text()
"""


def _install(
    site: Path, *, code: str, data: str = "first", version: str = "1.0", record: bool = True
) -> None:
    """``ragcore`` (``__init__.py`` re-exporting ``core.reply``, and ``prompt.txt``) into
    ``site``, as a wheel installs it: with a ``.dist-info`` and, if ``record``, a RECORD that
    lists a script outside site-packages (its first line names this environment's Python)."""
    shutil.rmtree(site, ignore_errors=True)
    package = site / "ragcore"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from ragcore.core import reply\n")
    (package / "core.py").write_text(code)
    (package / "prompt.txt").write_text(data)
    if not record:
        return
    info = site / f"ragcore-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: ragcore\nVersion: {version}\n")
    (info / "INSTALLER").write_text(site.parent.name)
    lines = [
        f"{path.relative_to(site).as_posix()},sha256={_digest(path.read_bytes())},"
        f"{path.stat().st_size}"
        for path in sorted([*package.iterdir(), info / "METADATA", info / "INSTALLER"])
    ]
    script = f"#!{site.parent}/bin/python\n".encode()
    lines.append(f"../../bin/ragcore,sha256={_digest(script)},{len(script)}")
    lines.append(f"ragcore-{version}.dist-info/RECORD,,")
    (info / "RECORD").write_text("\n".join(lines) + "\n")


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _project(root: Path) -> Path:
    root.mkdir()
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    case = {"id": "c1", "input": {"q": "q1"}, "expected": {"answer": "q1"}}
    (root / "cases.jsonl").write_text(json.dumps(case) + "\n")
    return root


def _env(site: Path) -> dict[str, str]:
    return {
        "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])
    }


def _answer(root: Path, out: str) -> str:
    (case,) = bundle_cases(root, out.split()[1])
    return str(case["output"]["answer"])


MISS = "Cache: execution 0 hit/1 miss; judgment 0 hit/1 miss"
HIT = "Cache: execution 1 hit/0 miss; judgment 1 hit/0 miss"


def test_a_package_installed_again_at_its_version_with_other_code_executes_again(
    tmp_path: Path,
) -> None:
    root, site = _project(tmp_path / "p"), tmp_path / "env" / "site-packages"
    _install(site, code=CODE.replace("WORD", "first"))
    first = oloproof("run", cwd=root, env=_env(site))
    assert first.code == 0, first.out + first.err
    _install(site, code=CODE.replace("WORD", "second"))
    planned = oloproof("run", "--dry-run", cwd=root, env=_env(site))
    said = "  1 executions: installed ragcore 1.0 changed (installed again with other files)"
    assert said in planned.lines, planned.out
    again = oloproof("run", cwd=root, env=_env(site))
    assert MISS in again.lines, again.out
    assert _answer(root, again.out) == "q1 second"


def test_a_package_installed_again_with_another_data_file_executes_again(tmp_path: Path) -> None:
    root, site = _project(tmp_path / "p"), tmp_path / "env" / "site-packages"
    _install(site, code=FROM_DATA, data="first")
    assert oloproof("run", cwd=root, env=_env(site)).code == 0
    _install(site, code=FROM_DATA, data="second")
    again = oloproof("run", cwd=root, env=_env(site))
    assert MISS in again.lines, again.out
    assert _answer(root, again.out) == "q1 second"


def test_the_same_files_installed_in_another_environment_are_the_same_package(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path / "p")
    one, other = tmp_path / "one" / "site-packages", tmp_path / "other" / "site-packages"
    _install(one, code=CODE.replace("WORD", "first"))
    _install(other, code=CODE.replace("WORD", "first"))  # its script and INSTALLER differ
    assert oloproof("run", cwd=root, env=_env(one)).code == 0
    again = oloproof("run", cwd=root, env=_env(other))
    assert HIT in again.lines, again.out


def test_an_edit_to_any_module_of_an_unclaimed_package_executes_again(tmp_path: Path) -> None:
    root, site = _project(tmp_path / "p"), tmp_path / "env" / "site-packages"
    _install(site, code=CODE.replace("WORD", "first"), record=False)
    assert oloproof("run", cwd=root, env=_env(site)).code == 0
    (site / "ragcore" / "core.py").write_text(CODE.replace("WORD", "second"))
    again = oloproof("run", cwd=root, env=_env(site))
    assert MISS in again.lines, again.out
    assert _answer(root, again.out) == "q1 second"
