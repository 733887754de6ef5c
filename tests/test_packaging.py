"""What the wheel ships: both packages, the examples, the blank project, the guides and the
JSON Schemas, and type information; an installed copy finds its guides and starts a project."""

from __future__ import annotations

import email
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from tests.support import REPO


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--quiet",
            "--disable-pip-version-check",
            "-w",
            str(work),
            str(REPO),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (found,) = work.glob("oloproof-*.whl")
    return found


def test_the_wheel_ships_guides_schemas_templates_and_types(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = email.message_from_bytes(
            archive.read(next(n for n in names if n.endswith(".dist-info/METADATA")))
        )
    for page in (REPO / "docs").glob("*.md"):
        assert f"oloproof/docs/{page.name}" in names, page.name
    for schema in (REPO / "schemas").glob("*.json"):
        assert f"oloproof/schemas/{schema.name}" in names, schema.name
    for name in ("app.py", "cases.jsonl", "oloproof.yaml", "policy.yaml"):
        assert f"oloproof/templates/blank/{name}" in names
    assert {"oloproof/py.typed", "ledger/py.typed", "ledger/__init__.py"} <= names
    assert metadata["Requires-Python"] == ">=3.11"
    assert "Provides-Extra" in metadata and "parquet" in metadata.get_all("Provides-Extra")


def test_an_installed_copy_finds_its_guides_and_makes_a_blank_project(
    wheel: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "--quiet",
            "--disable-pip-version-check",
            "--target",
            str(site),
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}

    def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "oloproof", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    docs = run("docs", "--path", cwd=tmp_path)
    assert docs.returncode == 0, docs.stderr
    assert Path(docs.stdout.strip()) == site / "oloproof" / "docs"
    assert (Path(docs.stdout.strip()) / "index.md").read_text() == (
        REPO / "docs" / "index.md"
    ).read_text()
    made = run("init", "blank", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    ran = run("run", cwd=tmp_path / "blank")
    assert ran.returncode == 3, ran.stderr
