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
another environment does not. A file edited in place (patched in site-packages to debug, with
the version and ``RECORD`` left as they were) counts by its content instead of its recorded
hash; see ``_as_installed``. A package inside a namespace package (``google.protobuf``) stands
for the distribution whose ``RECORD`` lists its files, not for the namespace's name, which no
distribution owns. A package installed without a ``RECORD``, or that no distribution claims,
stands for the content of its module files, every one in its folder, loaded or not.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.machinery
import importlib.metadata
import importlib.util
import os
import site
import sys
import sysconfig
from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class Installed:
    """What stands for an installed (or Oloproof) module: its distribution's ``name`` and
    ``version``; ``files``, the digest of the files its ``RECORD`` lists inside site-packages
    as they are (without a ``RECORD``, ``modules`` and the digest of its module files;
    None for Oloproof or when no file is found); ``edited``, those edited in place."""

    name: str
    version: str
    files: str | None = None
    edited: tuple[str, ...] = ()


def distribution_of(module_name: str) -> tuple[str, str]:
    """``(distribution, version)`` standing for an installed or Oloproof module."""
    found = installed(module_name)
    return found.name, found.version


def installed(module_name: str) -> Installed:
    """What stands for an installed or Oloproof module: the distribution of its top-level
    package (``_installed``) or, under a namespace package, which many distributions share
    (``google.protobuf``, ``azure.core``), of the package below it."""
    parts = module_name.split(".")
    depth = 1
    while depth < len(parts) and _namespace(".".join(parts[:depth])):
        depth += 1
    return _installed(".".join(parts[:depth]))


def _namespace(name: str) -> bool:
    """Whether ``name`` is a namespace package: a package without a file of its own."""
    module = sys.modules.get(name)
    if module is not None:
        held = vars(module)  # not getattr: a module's __getattr__ may run anything
        return held.get("__file__") is None and held.get("__path__") is not None
    if "." in name:  # found only by importing its parent: not reached, so not asked
        return False
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin is None and bool(spec.submodule_search_locations)


@lru_cache(maxsize=1024)
def _installed(top: str) -> Installed:
    """Found by the import name first, then through the ``top_level.txt`` and ``RECORD`` files
    of the distributions installed beside the module. A module no distribution claims stands
    for itself: the hash of its module files, so an edit to any of them still shows.
    ``top`` is dotted under a namespace package (``google.protobuf``): its distribution is the
    one whose ``RECORD`` lists its files.
    """
    if place_of_name(top) is Place.TOOL:
        return Installed("oloproof", oloproof.__version__)
    if "." not in top:
        try:
            dist = importlib.metadata.distribution(top)
            return _as_installed(dist, dist.metadata["Name"] or top, top)
        except importlib.metadata.PackageNotFoundError:
            pass
    filename = file_of_module(top) or _origin(top)
    if filename is not None:
        found = _claimed_by(top, _site_dir_of(Path(filename), top))
        if found is not None:
            return found
        return Installed(top, f"unversioned {_module_files_digest(filename)}")
    return Installed(top, "unknown")


def _as_installed(dist: importlib.metadata.Distribution, name: str, top: str) -> Installed:
    """``dist`` (which installed ``top``) by the files its ``RECORD`` lists inside
    site-packages, each by its recorded hash unless it was edited in place.

    Left out: files outside site-packages (scripts, whose first line names the environment's
    Python), the ``.dist-info`` folder (which installer wrote it, and from where) and files
    recorded without a hash (bytecode compiled at install).

    Installers write ``RECORD`` last, so a file modified after it, or whose size is not the
    recorded one, may have been edited since: it is hashed again and, when it differs, counts
    by its content (a file merely touched hashes as recorded and changes nothing). Only the
    stat of each file is read otherwise: hashing them all took 0.2 to 0.8 s a run for numpy,
    pyarrow or ray (``benchmarks/installed_files.py``). The status-change time is not used,
    though it cannot be set back: an image's layers, a copied environment and an installer
    that hard-links from its cache all set it later than the ``RECORD``'s, which would hash
    every file on every run. Not seen, so: an edit that keeps both the size and a
    modification time from before the installation (a copy of the same size made with ``cp
    -p``).

    A module file added beside those it lists (one dropped in to debug, which an edited module
    imports) counts by its content too; one in a folder it lists nothing in does not.
    """
    try:
        text = dist.read_text("RECORD")
    except OSError:
        text = None
    if not text:
        # Installed without one (``setup.py install``, a system package manager): nothing says
        # what its files held, so its module files count by their content, as an unclaimed
        # package's do.
        filename = file_of_module(top) or _origin(top)
        found = None if filename is None else f"modules {_module_files_digest(filename)}"
        return Installed(name, dist.version, found)
    rows = [row for row in csv.reader(text.splitlines()) if len(row) == 3]
    # Paths as strings: a run checks thousands of files (pandas lists 3,000), and a stat is
    # cheaper than the pathlib objects around it.
    base = str(dist.locate_file(""))
    since = _written_at([os.path.join(base, path) for path, _, _ in rows if _is_record(path)])
    kept, edited = [], []
    for path, digest, size in rows:
        first = path.partition("/")[0]
        if not digest or path.startswith(("../", "/")) or first.endswith(".dist-info"):
            continue
        now = _unless_edited(os.path.join(base, path), digest, size, since)
        if now != digest:
            edited.append(path)
        kept.append(f"{path},{now}")
    listed = {path for path, _, _ in rows}
    for path in _added(base, {p.rpartition("/")[0] for p in listed if "/" in p}, listed):
        edited.append(path)
        kept.append(f"{path},added {_module_files_digest(os.path.join(base, path))}")
    files = blake3("\n".join(sorted(kept)).encode()).hexdigest()[:16]
    return Installed(name, dist.version, files, tuple(sorted(edited)))


def _added(base: str, folders: set[str], listed: set[str]) -> list[str]:
    """The module files in ``folders`` (under ``base``) that are not ``listed``."""
    found = []
    for folder in folders:
        outside = folder.startswith(("../", "/")) or folder.endswith("__pycache__")
        if outside or folder.partition("/")[0].endswith(".dist-info"):
            continue
        try:
            names = os.listdir(os.path.join(base, folder))
        except OSError:
            continue
        paths = (f"{folder}/{name}" for name in names if name.endswith(_MODULE_SUFFIXES))
        found += [path for path in paths if path not in listed]
    return found


def _is_record(path: str) -> bool:
    head, _, tail = path.rpartition("/")
    return tail == "RECORD" and head.endswith(".dist-info") and "/" not in head


def _written_at(records: list[str]) -> int:
    """When the ``RECORD`` was written, in ns (0, so every file is hashed, when unknown)."""
    for record in records:
        try:
            return os.stat(record).st_mtime_ns
        except OSError:
            pass
    return 0


def _unless_edited(file: str, digest: str, size: str, since: int) -> str:
    """``digest`` (``sha256=<urlsafe base64>``, as recorded) when ``file`` is as installed, its
    content's digest in that form when it was edited since the ``RECORD`` was written at
    ``since``, and ``missing`` when it is gone."""
    try:
        status = os.stat(file)
    except OSError:
        return "missing"
    if status.st_mtime_ns < since and (not size.isdigit() or int(size) == status.st_size):
        return digest
    try:
        content = Path(file).read_bytes()
    except OSError:
        return "unreadable"
    algorithm = digest.partition("=")[0]
    try:
        hashed = hashlib.new(algorithm, content).digest()
    except ValueError:  # a hash this Python does not know: the content still counts
        return f"blake3={blake3(content).hexdigest()}"
    return f"{algorithm}={base64.urlsafe_b64encode(hashed).rstrip(b'=').decode()}"


def _module_files_digest(filename: str) -> str:
    """The hash of a module's file or, for a package (``filename`` its ``__init__``), of every
    module file in its folder, by name and content (``__pycache__`` left out): a submodule it
    imports only when called (``from ragcore import impl`` in a function) counts too, though it
    is not loaded yet when the fingerprint is made."""
    path = Path(filename)
    files = [path]
    if path.name.startswith("__init__."):
        files = []
        for folder, subfolders, names in os.walk(path.parent):
            subfolders[:] = [d for d in subfolders if d != "__pycache__"]
            files += [Path(folder, n) for n in names if n.endswith(_MODULE_SUFFIXES)]
    digest = blake3()
    for file in sorted(files):
        try:
            content = blake3(file.read_bytes()).digest()
        except OSError:
            content = b"<unreadable>"
        digest.update(os.path.relpath(file, path.parent).encode(errors="surrogateescape"))
        digest.update(b"\0" + content)
    return digest.hexdigest()[:16]


_MODULE_SUFFIXES = tuple(importlib.machinery.all_suffixes())  # .py, .pyc, .so, .abi3.so...


def _origin(top: str) -> str | None:
    # Found without importing it (a top-level name imports nothing to be found).
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.has_location else None


def _site_dir_of(filename: Path, top: str) -> Path:
    # .../site-packages/top/__init__.py or .../site-packages/top.py or top.cpython-311-x.so;
    # a dotted top (``google.protobuf``) sits one folder deeper for each dot.
    *outer, last = top.split(".")
    parent = filename.parent
    found = parent.parent if parent.name == last else parent
    for _ in outer:
        found = found.parent
    return found


def _claimed_by(top: str, site_dir: Path) -> Installed | None:
    try:
        infos = sorted(site_dir.glob("*.dist-info"))
    except OSError:
        return None
    for info in infos:
        dist = importlib.metadata.Distribution.at(info)
        # A namespace package's top_level.txt names what many distributions share.
        listed = (dist.read_text("top_level.txt") or "").split() if "." not in top else []
        record, path = "\n" + (dist.read_text("RECORD") or ""), top.replace(".", "/")
        if top in listed or f"\n{path}/" in record or f"\n{path}." in record:
            return _as_installed(dist, dist.metadata["Name"] or info.name, top)
    return None
