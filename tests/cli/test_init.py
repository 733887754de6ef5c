"""`oloproof init --example NAME DIR`: from the source checkout and from an installed wheel."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from oloproof import examples_dir
from oloproof.errors import ConfigError
from oloproof.examples_dir import copy_example, examples_root, list_examples

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
EXAMPLES = REPO / "examples"
SKIPPED_PARTS = {"__pycache__", ".oloproof"}


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (what init copies) by relative path, with its bytes."""
    files: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if SKIPPED_PARTS & set(relative.parts) or path.suffix in (".pyc", ".pyo"):
            continue
        if path.is_file():
            files[relative.as_posix()] = path.read_bytes()
    return files


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Everything under ``root``, folders included (None), for "nothing changed" checks."""
    return {
        path.relative_to(root).as_posix(): (path.read_bytes() if path.is_file() else None)
        for path in sorted(root.rglob("*"))
    }


def oloproof(*args: str, cwd: Path, pythonpath: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(pythonpath), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "oloproof", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_checkout_ships_the_route_a_example() -> None:
    assert examples_root() == EXAMPLES
    names = list_examples()
    assert "blackbox_rag" in names
    assert names == sorted(
        p.name for p in EXAMPLES.iterdir() if p.is_dir() and p.name[0] not in "._"
    )


# ------------------------------------------------------------------ copy_example in process


@pytest.mark.parametrize("name", list_examples())
def test_copy_example_copies_the_tree_file_by_file(name: str, tmp_path: Path) -> None:
    dest = tmp_path / "project"
    assert copy_example(name, dest) == dest
    copied = tree(dest)
    assert copied, f"example {name} is empty"
    assert copied == tree(EXAMPLES / name)
    assert not any(SKIPPED_PARTS & set(p.relative_to(dest).parts) for p in dest.rglob("*"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"]  # no staging left


def test_copy_into_an_existing_empty_folder(tmp_path: Path) -> None:
    dest = tmp_path / "empty"
    dest.mkdir()
    copy_example("blackbox_rag", dest)
    assert tree(dest) == tree(EXAMPLES / "blackbox_rag")


def test_copy_creates_missing_parent_folders(tmp_path: Path) -> None:
    dest = tmp_path / "a" / "b" / "project"
    copy_example("blackbox_rag", dest)
    assert tree(dest) == tree(EXAMPLES / "blackbox_rag")


def test_unknown_example_lists_the_available_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        copy_example("no_such_example", tmp_path / "x")
    assert str(err.value) == (
        f"unknown example 'no_such_example' (available: {', '.join(list_examples())})"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["folder", "file"])
def test_existing_destination_is_never_overwritten(kind: str, tmp_path: Path) -> None:
    dest = tmp_path / "mine"
    if kind == "folder":
        dest.mkdir()
        (dest / "notes.txt").write_text("keep me")
    else:
        dest.write_text("keep me")
    before = snapshot(tmp_path)
    said = "already exists and is not empty" if kind == "folder" else "is a file, not a folder"
    with pytest.raises(ConfigError, match=f"{said}; refusing to overwrite"):
        copy_example("blackbox_rag", dest)
    assert snapshot(tmp_path) == before


def test_a_failure_mid_copy_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_copytree = shutil.copytree
    copied: list[str] = []

    def failing_copy(src: str, dst: str, **kwargs: Any) -> str:
        if copied:
            raise OSError(28, "No space left on device")
        copied.append(src)
        return str(shutil.copy2(src, dst))

    def copytree(*args: Any, **kwargs: Any) -> Any:
        return real_copytree(*args, **{**kwargs, "copy_function": failing_copy})

    monkeypatch.setattr(shutil, "copytree", copytree)
    with pytest.raises(ConfigError, match=r"cannot create .*project"):
        copy_example("blackbox_rag", tmp_path / "project")
    assert copied  # the failure came after a file was written
    assert list(tmp_path.iterdir()) == []


def test_a_failed_rename_keeps_an_empty_destination(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dest = tmp_path / "empty"
    dest.mkdir()

    def refuse(src: Any, dst: Any) -> None:
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(os, "rename", refuse)
    with pytest.raises(ConfigError, match="Permission denied"):
        copy_example("blackbox_rag", dest)
    assert [p.name for p in tmp_path.iterdir()] == ["empty"]
    assert list(dest.iterdir()) == []


def test_a_failure_filling_an_empty_folder_takes_back_what_it_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dest = tmp_path / "empty"
    dest.mkdir()
    real_rename = os.rename
    moved: list[str] = []

    def rename_once(src: Any, dst: Any) -> None:
        if moved:
            raise OSError(28, "No space left on device")
        moved.append(str(dst))
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", rename_once)
    with pytest.raises(ConfigError, match="No space left on device"):
        copy_example("blackbox_rag", dest)
    assert moved  # one entry had reached the folder before the failure
    assert [p.name for p in tmp_path.iterdir()] == ["empty"]
    assert list(dest.iterdir()) == []


def test_read_only_examples_are_copied_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "examples"
    for name in ("demo", "__pycache__", ".hidden"):
        (root / name).mkdir(parents=True)
    (root / "demo" / "app.py").write_text("print('hi')\n")
    (root / "demo" / "__pycache__").mkdir()
    (root / "demo" / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"\0")
    (root / "demo" / ".oloproof").mkdir()
    (root / "demo" / ".oloproof" / "data.mdb").write_bytes(b"\0")
    (root / "demo" / "app.py").chmod(0o444)
    (root / "demo").chmod(0o555)
    monkeypatch.setattr(examples_dir, "examples_root", lambda: root)
    try:
        assert list_examples() == ["demo"]
        dest = copy_example("demo", tmp_path / "out")
    finally:
        (root / "demo").chmod(0o755)
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")) == ["app.py"]
    assert dest.stat().st_mode & stat.S_IWUSR
    assert (dest / "app.py").stat().st_mode & stat.S_IWUSR


# --------------------------------------------------------------------- the CLI, checkout


def test_init_from_the_checkout(tmp_path: Path) -> None:
    result = oloproof("init", "--example", "blackbox_rag", "my-eval", cwd=tmp_path, pythonpath=SRC)
    assert result.returncode == 0, result.stderr
    dest = tmp_path / "my-eval"
    assert tree(dest) == tree(EXAMPLES / "blackbox_rag")
    out = result.stdout
    assert "Created my-eval from the blackbox_rag example" in out
    for name in tree(dest):
        assert f"my-eval/{name}" in out
    assert "cd my-eval" in out and "oloproof run" in out


def test_init_help_has_an_example() -> None:
    result = oloproof("init", "--help", cwd=REPO, pythonpath=SRC)
    assert result.returncode == 0, result.stderr
    assert "Example:" in result.stdout
    assert "--example" in result.stdout


def test_init_unknown_example_exits_2_listing_the_known_ones(tmp_path: Path) -> None:
    result = oloproof("init", "--example", "nope", "x", cwd=tmp_path, pythonpath=SRC)
    assert result.returncode == 2
    assert "unknown example 'nope'" in result.stderr
    assert f"(available: {', '.join(list_examples())})" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_init_into_a_non_empty_folder_exits_2_and_changes_nothing(tmp_path: Path) -> None:
    dest = tmp_path / "taken"
    dest.mkdir()
    (dest / "oloproof.yaml").write_text("mine\n")
    before = snapshot(tmp_path)
    result = oloproof("init", "--example", "blackbox_rag", "taken", cwd=tmp_path, pythonpath=SRC)
    assert result.returncode == 2
    assert "refusing to overwrite" in result.stderr
    assert snapshot(tmp_path) == before


def test_init_without_example_makes_a_blank_project_that_runs(tmp_path: Path) -> None:
    result = oloproof("init", "x", cwd=tmp_path, pythonpath=SRC)
    assert result.returncode == 0, result.stderr
    assert "Created x from a blank project (4 files)" in result.stdout
    assert sorted(p.name for p in (tmp_path / "x").iterdir()) == [
        "app.py",
        "cases.jsonl",
        "oloproof.yaml",
        "policy.yaml",
    ]
    ran = oloproof("run", cwd=tmp_path / "x", pythonpath=SRC)
    # Four cases cannot show a 70% floor is met: the gate blocks without a FAIL.
    assert ran.returncode == 3, ran.stderr
    assert "│ answer_correct │ 75.0%    │ [19.4%, 99.4%] │" in ran.stdout


def test_init_dot_fills_the_empty_folder_it_is_run_in(tmp_path: Path) -> None:
    here = tmp_path / "here"
    here.mkdir()
    before = here.stat().st_ino
    result = oloproof("init", ".", cwd=here, pythonpath=SRC)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "Created . from a blank project (4 files):",
        "  app.py",
        "  cases.jsonl",
        "  oloproof.yaml",
        "  policy.yaml",
        "",
        "Next:",
        "  oloproof run",
    ]
    # The very folder the shell is in, filled: not another one renamed into its place.
    assert here.stat().st_ino == before
    assert sorted(p.name for p in here.iterdir()) == [
        "app.py",
        "cases.jsonl",
        "oloproof.yaml",
        "policy.yaml",
    ]
    assert oloproof("run", cwd=here, pythonpath=SRC).returncode == 3


def test_init_without_a_folder_says_what_to_give(tmp_path: Path) -> None:
    result = oloproof("init", cwd=tmp_path, pythonpath=SRC)
    assert result.returncode == 2
    assert (
        result.stderr
        == "error: name the folder to create: oloproof init DIR (--list names examples)\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_init_list_and_help_name_every_example(tmp_path: Path) -> None:
    listed = oloproof("init", "--list", cwd=tmp_path, pythonpath=SRC)
    assert listed.returncode == 0, listed.stderr
    names = [line.split(":")[0] for line in listed.stdout.splitlines()]
    assert names == list_examples() and len(names) == 3
    assert all(line.split(": ", 1)[1] for line in listed.stdout.splitlines())
    helped = oloproof("init", "--help", cwd=tmp_path, pythonpath=SRC)
    flat = " ".join(helped.stdout.split())
    for name in list_examples():
        assert name in flat, name


def test_a_close_example_name_is_suggested(tmp_path: Path) -> None:
    result = oloproof("init", "--example", "blackbx", "x", cwd=tmp_path, pythonpath=SRC)
    assert result.returncode == 2
    assert "unknown example 'blackbx'; did you mean 'blackbox_rag'?" in result.stderr


# ------------------------------------------------------------------------ the CLI, wheel


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project built as a wheel and installed (without dependencies) into a folder."""
    work = tmp_path_factory.mktemp("wheel")
    pip: Callable[..., subprocess.CompletedProcess[str]] = lambda *args: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "pip", *args, "--quiet", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    built = pip(
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "-w",
        str(work / "dist"),
        str(REPO),
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (work / "dist").glob("oloproof-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert "oloproof/examples/blackbox_rag/app.py" in archive.namelist()
    site = work / "site"
    installed = pip("install", "--no-deps", "--no-index", "--target", str(site), str(wheel))
    assert installed.returncode == 0, installed.stderr
    return site


def test_init_from_an_installed_wheel(installed_wheel: Path, tmp_path: Path) -> None:
    site = installed_wheel
    packaged = site / "oloproof" / "examples" / "blackbox_rag"
    assert tree(packaged) == tree(EXAMPLES / "blackbox_rag")

    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import oloproof, oloproof.examples_dir as e; print(oloproof.__file__); "
            "print(e.examples_root())",
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.returncode == 0, probe.stderr
    module_file, root = probe.stdout.splitlines()
    assert Path(module_file).is_relative_to(site)
    assert Path(root) == site / "oloproof" / "examples"

    # A file only the installed copy has proves where init copies from.
    marker = packaged / "from-the-wheel.txt"
    marker.write_text("installed copy\n")
    try:
        result = oloproof(
            "init", "--example", "blackbox_rag", "proj", cwd=tmp_path, pythonpath=site
        )
        assert result.returncode == 0, result.stderr
        copied = tree(tmp_path / "proj")
        assert copied == tree(packaged)
        assert copied.pop("from-the-wheel.txt") == b"installed copy\n"
        assert copied == tree(EXAMPLES / "blackbox_rag")
    finally:
        marker.unlink()


@pytest.mark.parametrize("kind", ["empty file", "file", "link to an empty folder", "dangling link"])
def test_init_over_something_that_is_not_a_folder_says_what_it_is(
    kind: str, tmp_path: Path
) -> None:
    # Each was "already exists and is not empty", untrue of an empty file or of a link to an
    # empty folder.
    dest = tmp_path / "dest"
    if kind == "empty file":
        dest.touch()
    elif kind == "file":
        dest.write_text("keep me")
    elif kind == "link to an empty folder":
        (tmp_path / "empty").mkdir()
        dest.symlink_to("empty")
    else:
        dest.symlink_to("nowhere")
    said = {
        "empty file": f"{Path('dest')} is a file, not a folder; refusing to overwrite it",
        "file": f"{Path('dest')} is a file, not a folder; refusing to overwrite it",
        "link to an empty folder": f"{Path('dest')} is a symbolic link (to empty); init fills "
        "only a real folder: name the folder itself, or a new one",
        "dangling link": f"{Path('dest')} is a symbolic link (to nowhere); init fills only a "
        "real folder: name the folder itself, or a new one",
    }[kind]
    before = snapshot(tmp_path)
    result = oloproof("init", "dest", cwd=tmp_path, pythonpath=SRC)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"error: {said}\n")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    "args",
    [
        ("--example", "support_rag", "--list"),
        ("--list", "x"),
        ("--list", "x", "--example", "judge_gate"),
    ],
)
def test_init_list_with_an_example_or_a_folder_is_refused(
    args: tuple[str, ...], tmp_path: Path
) -> None:
    # --example (and DIR) were silently ignored: the list printed, nothing copied, exit 0.
    result = oloproof("init", *args, cwd=tmp_path, pythonpath=SRC)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "error: --list lists the examples and copies nothing: give it without --example or DIR\n"
    )
    assert list(tmp_path.iterdir()) == []
