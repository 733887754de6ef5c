"""The modules a module's source imports, read without running it.

A module of the user's that the code imports inside a function, and that is not loaded when
the fingerprint is made, counts by the whole of its file (``oloproof.fingerprint._walk``). What
that file imports runs as well once it is imported, so each module it may import counts in
turn: every ``import`` and ``from … import`` statement anywhere in it (inside a function, a
``try``), with the packages above each module, whose ``__init__`` runs too, and each name a
``from`` import takes, which may be a submodule.
"""

from __future__ import annotations

import ast
import importlib.util
import os
from functools import lru_cache
from pathlib import Path


def imports_of(filename: str, module: str) -> tuple[str, ...]:
    """The absolute names of the modules the source ``filename`` of ``module`` may import,
    some of them perhaps not modules at all (``from helper import clean`` gives ``helper`` and
    ``helper.clean``); none when it is not Python source or cannot be read."""
    if not filename.endswith(".py"):
        return ()
    try:
        stat = os.stat(filename)
    except OSError:
        return ()
    package = module if Path(filename).name == "__init__.py" else module.rpartition(".")[0]
    return _read(filename, stat.st_mtime_ns, stat.st_size, package)


@lru_cache(maxsize=256)
def _read(filename: str, mtime_ns: int, size: int, package: str) -> tuple[str, ...]:
    try:
        tree = ast.parse(Path(filename).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return ()
    found: dict[str, None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.update(dict.fromkeys(_with_parents(alias.name)))
        elif isinstance(node, ast.ImportFrom):
            try:
                name = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            except (ImportError, ValueError):  # a relative import above the top package
                continue
            found.update(dict.fromkeys(_with_parents(name)))
            found.update(dict.fromkeys(f"{name}.{a.name}" for a in node.names if a.name != "*"))
    return tuple(found)


def _with_parents(name: str) -> list[str]:
    """``a.b.c`` → ``a``, ``a.b``, ``a.b.c``: importing a module runs its packages first."""
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts) + 1)]
