"""Where code comes from: the user's own, the standard library, an installed package, Oloproof.

A fingerprint follows the user's own code and stands for everything else by a version: the
standard library by the Python version, an installed package by its distribution's version,
Oloproof (and its ``ledger``) by Oloproof's version.

The user's own code is every file outside the standard library's directories, the
site-packages (and dist-packages) directories and Oloproof's own packages. The interpreter's
whole prefix is deliberately not excluded: a project checked out under ``/usr`` or ``/opt``
with the system's Python would otherwise be taken for installed code, and its edits missed.
Code without a file (built-in and frozen modules) belongs to the standard library when its
module's name is one of the standard library's, and is otherwise treated as the user's.

An installed distribution stands for itself by its version and by the digest of the files its
``RECORD`` lists inside site-packages (each file's own hash, as the installer wrote it): a
package installed again at the same version with other code or data (``pip install .`` of a
project that never bumps its version) counts as changed, and the same wheel installed in
another environment does not. A package no distribution claims stands for the files of its
modules that are loaded.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import site
import sys
import sysconfig
from enum import Enum
from functools import lru_cache
from pathlib import Path
from types import FunctionType, ModuleType

from blake3 import blake3

import ledger
import oloproof


class Place(Enum):
    USER = "user"
    STDLIB = "stdlib"
    INSTALLED = "installed"
    TOOL = "tool"


@lru_cache(maxsize=1)
def _roots() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(Oloproof's own package dirs, installed-package dirs, standard-library dirs)."""
    tool = {str(Path(m.__file__ or "").resolve().parent) for m in (oloproof, ledger)}
    installed = {sysconfig.get_path(name) for name in ("purelib", "platlib")}
    installed.update(site.getsitepackages() if hasattr(site, "getsitepackages") else ())
    installed.add(site.getusersitepackages())
    installed.update(p for p in sys.path if Path(p).name in ("site-packages", "dist-packages"))
    stdlib = {sysconfig.get_path(name) for name in ("stdlib", "platstdlib")}

    def clean(paths: set[str]) -> tuple[str, ...]:
        return tuple(sorted({str(Path(p).resolve()) for p in paths if p}))

    return clean(tool), clean(installed), clean(stdlib)


def _under(path: str, roots: tuple[str, ...]) -> str | None:
    for root in roots:
        if path == root or path.startswith(root + "/"):
            return root
    return None


@lru_cache(maxsize=4096)
def place_of_file(filename: str) -> Place:
    """Where a source file belongs. Order matters: site-packages sits inside the stdlib dir."""
    path = str(Path(filename).resolve())
    tool, installed, stdlib = _roots()
    if _under(path, tool):
        return Place.TOOL
    if _under(path, installed):
        return Place.INSTALLED
    if _under(path, stdlib):
        return Place.STDLIB
    return Place.USER


def place_of_module(module: ModuleType | None, name: str) -> Place:
    """Where a module (or, when it is not loaded, the module called ``name``) belongs."""
    filename = getattr(module, "__file__", None) if module is not None else None
    if isinstance(filename, str):
        return place_of_file(filename)
    top = name.partition(".")[0]
    if top in sys.stdlib_module_names or top in sys.builtin_module_names or not top:
        return Place.STDLIB
    if top in ("oloproof", "ledger"):
        return Place.TOOL
    for path in getattr(module, "__path__", ()) or ():
        # A namespace package: its directories say where it lives.
        return place_of_file(str(path))
    return Place.USER


def place_of_name(module_name: str) -> Place:
    return place_of_module(sys.modules.get(module_name), module_name)


def place_of_function(fn: FunctionType) -> Place:
    filename = fn.__code__.co_filename
    if filename.startswith("<frozen"):
        return Place.STDLIB
    if filename.startswith("<"):  # exec'd code (a dataclass's __init__): its module says
        return place_of_name(fn.__module__ or "")
    return place_of_file(filename)


def file_of_module(module_name: str) -> str | None:
    filename = getattr(sys.modules.get(module_name), "__file__", None)
    return filename if isinstance(filename, str) else None


@lru_cache(maxsize=1024)
def distribution_of(module_name: str) -> tuple[str, str]:
    """``(distribution, version)`` standing for an installed or Oloproof module."""
    name, version, _ = installed(module_name)
    return name, version


@lru_cache(maxsize=1024)
def installed(module_name: str) -> tuple[str, str, str | None]:
    """``(distribution, version, files)`` standing for an installed or Oloproof module.

    Found by the import name first, then through the ``top_level.txt`` and ``RECORD`` files of
    the distributions installed beside the module. ``files`` is the digest of what the
    distribution's ``RECORD`` says it installed into site-packages (None without one). A
    module no distribution claims stands for itself: the hash of its loaded modules' files, so
    an edit to any of them still shows.
    """
    top = module_name.partition(".")[0]
    if place_of_name(top) is Place.TOOL:
        return "oloproof", oloproof.__version__, None
    try:
        dist = importlib.metadata.distribution(top)
        return dist.metadata["Name"] or top, dist.version, _files_of(dist)
    except importlib.metadata.PackageNotFoundError:
        pass
    filename = file_of_module(top) or _origin(top)
    if filename is not None:
        found = _claimed_by(top, _site_dir_of(Path(filename), top))
        if found is not None:
            return found
        return top, f"unversioned {_loaded_files_digest(top, filename)}", None
    return top, "unknown", None


def _files_of(dist: importlib.metadata.Distribution) -> str | None:
    """The digest of the files ``dist`` installed into site-packages, by their recorded hashes.

    Left out: files outside site-packages (scripts, whose first line names the environment's
    Python), the ``.dist-info`` folder (which installer wrote it, and from where) and files
    recorded without a hash (bytecode compiled at install)."""
    try:
        text = dist.read_text("RECORD")
    except OSError:
        return None
    if not text:
        return None
    kept = []
    for line in text.splitlines():
        path, _, digest = line.rpartition(",")[0].rpartition(",")  # path,hash,size
        top = path.partition("/")[0]
        if digest and not path.startswith(("../", "/")) and not top.endswith(".dist-info"):
            kept.append(f"{path},{digest}")
    return blake3("\n".join(sorted(kept)).encode()).hexdigest()[:16]


def _loaded_files_digest(top: str, filename: str) -> str:
    """The hash of the files of ``top`` and its loaded submodules (of ``filename`` alone when
    none is loaded)."""
    files = {filename}
    for name, module in list(sys.modules.items()):
        if name == top or name.startswith(top + "."):
            found = getattr(module, "__file__", None)
            if isinstance(found, str):
                files.add(found)
    digest = blake3()
    for file in sorted(files):
        try:
            digest.update(Path(file).read_bytes())
        except OSError:
            digest.update(b"<unreadable>")
    return digest.hexdigest()[:16]


def _origin(top: str) -> str | None:
    # Found without importing it (a top-level name imports nothing to be found).
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.has_location else None


def _site_dir_of(filename: Path, top: str) -> Path:
    # .../site-packages/top/__init__.py or .../site-packages/top.py or top.cpython-311-x.so
    parent = filename.parent
    return parent.parent if parent.name == top else parent


def _claimed_by(top: str, site_dir: Path) -> tuple[str, str, str | None] | None:
    try:
        infos = sorted(site_dir.glob("*.dist-info"))
    except OSError:
        return None
    for info in infos:
        dist = importlib.metadata.Distribution.at(info)
        listed = (dist.read_text("top_level.txt") or "").split()
        record = dist.read_text("RECORD") or ""
        if top in listed or f"\n{top}/" in "\n" + record or f"\n{top}." in "\n" + record:
            return dist.metadata["Name"] or info.name, dist.version, _files_of(dist)
    return None
