"""The example projects shipped with Oloproof, and copying one into a new folder.

A wheel carries the repository's top-level ``examples/`` as ``oloproof/examples`` (a hatch
force-include); a source checkout (an editable install) has them at ``<repo>/examples``.
"""

from __future__ import annotations

import importlib.resources
import os
import shutil
import stat
import tempfile
from pathlib import Path

from oloproof.errors import ConfigError
from oloproof.suggest import did_you_mean

BLANK = "blank"
"""The template ``oloproof init DIR`` copies when no example is named."""

# Never copied: byte code and a ledger left behind by running the example in place.
_SKIP = ("__pycache__", ".oloproof", "*.pyc", "*.pyo")


def examples_root() -> Path:
    """The folder holding one sub-folder per example."""
    packaged = importlib.resources.files("oloproof") / "examples"
    if isinstance(packaged, Path) and packaged.is_dir():
        return packaged
    # An editable install: src/oloproof/examples_dir.py → <repo>/examples.
    repo = Path(__file__).resolve().parents[2]
    checkout = repo / "examples"
    if checkout.is_dir() and (repo / "pyproject.toml").is_file():
        return checkout
    raise ConfigError(
        f"no bundled examples found (looked in {packaged} and {checkout}); "
        "reinstall oloproof from a wheel or a full source checkout"
    )


def list_examples() -> list[str]:
    """The names of the bundled examples, sorted."""
    root = examples_root()
    return sorted(
        entry.name
        for entry in root.iterdir()
        if entry.is_dir() and not entry.name.startswith((".", "_"))
    )


def copy_example(name: str, dest: Path) -> Path:
    """Copy example ``name`` to the new folder ``dest``; return ``dest``.

    ``dest`` must not exist or be an empty folder. The copy is made in a hidden folder (beside
    a new ``dest``, inside an empty one) and moved into place, so a failure leaves nothing
    half-copied.
    """
    available = list_examples()
    if name not in available:
        raise ConfigError(
            f"unknown example {name!r}{did_you_mean(name, available)} "
            f"(available: {', '.join(available) or 'none'})"
        )
    return copy_tree(examples_root() / name, dest)


def copy_blank(dest: Path) -> Path:
    """Copy the blank project (a callable system, four cases, one check, a policy) to ``dest``."""
    return copy_tree(Path(__file__).parent / "templates" / BLANK, dest)


def describe(name: str) -> str:
    """The first line of an example's README, without its name (``a staged RAG system…``)."""
    readme = examples_root() / name / "README.md"
    try:
        first = readme.read_text(encoding="utf-8").splitlines()[0]
    except (OSError, IndexError):
        return ""
    return first.lstrip("# ").removeprefix(f"{name}:").strip()


def copy_tree(source: Path, dest: Path) -> Path:
    """Copy the folder ``source`` to the new folder ``dest`` (see ``copy_example``)."""
    dest = Path(dest)
    _refuse_taken(dest)
    if dest.is_dir():
        return _fill_empty(source, dest)
    parent = dest.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".partial", dir=parent))
    except OSError as exc:
        raise ConfigError(f"cannot create {dest}: {exc.strerror or exc}") from None
    try:
        tree = staging / source.name
        _copy(source, tree)
        os.rename(tree, dest)
    except OSError as exc:
        raise ConfigError(f"cannot create {dest}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest


def _refuse_taken(dest: Path) -> None:
    """Refuse a ``dest`` init may not fill, saying what it is."""
    if dest.is_symlink():
        # The files would land wherever the link points, which the user did not name.
        raise ConfigError(
            f"{dest} is a symbolic link (to {os.readlink(dest)}); init fills only a real folder: "
            "name the folder itself, or a new one"
        )
    if not dest.exists():
        return
    if dest.is_file():
        raise ConfigError(f"{dest} is a file, not a folder; refusing to overwrite it")
    if not dest.is_dir():
        raise ConfigError(f"{dest} exists and is not a folder; refusing to overwrite it")
    if any(dest.iterdir()):
        raise ConfigError(f"{dest} already exists and is not empty; refusing to overwrite it")


def _fill_empty(source: Path, dest: Path) -> Path:
    """Copy ``source`` into the empty folder ``dest``, which stays the same folder: it may be
    the current one (``oloproof init .``), which a rename into place would leave behind.

    The copy is made in a hidden folder inside ``dest`` and its entries moved out one by one;
    on a failure the ones moved are taken back out, so ``dest`` is left empty.
    """
    try:
        staging = Path(tempfile.mkdtemp(prefix=".oloproof-init.", suffix=".partial", dir=dest))
    except OSError as exc:
        raise ConfigError(f"cannot create {dest}: {exc.strerror or exc}") from None
    moved: list[Path] = []
    try:
        tree = staging / source.name
        _copy(source, tree)
        for entry in sorted(tree.iterdir()):
            os.rename(entry, dest / entry.name)
            moved.append(dest / entry.name)
    except OSError as exc:
        for path in moved:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        raise ConfigError(f"cannot create {dest}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest


def _copy(source: Path, tree: Path) -> None:
    shutil.copytree(source, tree, ignore=shutil.ignore_patterns(*_SKIP))
    _make_user_writable(tree)


def _make_user_writable(root: Path) -> None:
    # An installed package may be read-only; the user's copy is theirs to edit.
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        if not mode & stat.S_IWUSR:
            path.chmod(mode | stat.S_IWUSR)
