"""What a module's source imports and the names it uses, read without running it.

A module of the user's that the code imports inside a function, and that is not loaded when
the fingerprint is made, counts by the whole of its file (``oloproof.fingerprint._walk``). What
that file imports runs as well once it is imported, so each module it may import counts in
turn: every ``import`` and ``from … import`` statement anywhere in it (inside a function, a
``try``), with the packages above each module, whose ``__init__`` runs too, and each name a
``from`` import takes, which may be a submodule. The names its code uses (``open``,
``read_text``, ``subprocess``...) tell, as a walked function's do, what it reads while it runs.
"""

from __future__ import annotations

import ast
import importlib.util
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

# What imports a module named by its first argument while the code runs.
IMPORTERS = frozenset({"import_module", "__import__"})


@dataclass(frozen=True)
class Source:
    """``imports``: the absolute names of the modules a source may import, some of them perhaps
    not modules at all (``from helper import clean`` gives ``helper`` and ``helper.clean``).
    ``names``: the names and attributes its code uses. A call of ``importlib.import_module``
    or ``__import__`` imports too: the module it names, when that is text written in the call
    (a relative one from the module's package), else ``computed``. ``bound``: each name an
    import statement binds (``*`` for a star import), with the module it is taken from, in the
    order of the statements."""

    imports: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    computed: bool = False  # it imports a module by a name it makes while it runs
    bound: tuple[tuple[str, str], ...] = ()


def source_of(filename: str, module: str) -> Source:
    """What the source ``filename`` of ``module`` imports and uses; nothing when it is not
    Python source or cannot be read."""
    if not filename.endswith(".py"):
        return Source()
    try:
        stat = os.stat(filename)
    except OSError:
        return Source()
    package = module if Path(filename).name == "__init__.py" else module.rpartition(".")[0]
    return _read(filename, stat.st_mtime_ns, stat.st_size, package)


@lru_cache(maxsize=256)
def _read(filename: str, mtime_ns: int, size: int, package: str) -> Source:
    try:
        tree = ast.parse(Path(filename).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return Source()
    found: dict[str, None] = {}
    names: dict[str, None] = {}
    bound: list[tuple[str, str]] = []
    computed = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _callee(node) in IMPORTERS:
            named = _named(node, package)
            computed = computed or named is None
            found.update(dict.fromkeys(_with_parents(named) if named else ()))
        if isinstance(node, ast.Name):
            names[node.id] = None
        elif isinstance(node, ast.Attribute):
            names[node.attr] = None
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found.update(dict.fromkeys(_with_parents(alias.name)))
                # ``import a.b`` binds ``a``; ``import a.b as c`` binds ``c`` to ``a.b``.
                top = alias.name.partition(".")[0]
                bound.append((alias.asname or top, alias.name if alias.asname else top))
        elif isinstance(node, ast.ImportFrom):
            try:
                name = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            except (ImportError, ValueError):  # a relative import above the top package
                continue
            found.update(dict.fromkeys(_with_parents(name)))
            taken = [a.name for a in node.names if a.name != "*"]
            found.update(dict.fromkeys(f"{name}.{item}" for item in taken))
            names.update(dict.fromkeys(taken))
            bound += [(alias.asname or alias.name, name) for alias in node.names]
    return Source(tuple(found), tuple(names), computed, tuple(bound))


def _callee(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def _named(call: ast.Call, package: str) -> str | None:
    """The absolute name of the module an importer's call names; None when it is not text
    written in the call."""
    first = (
        call.args[0]
        if call.args
        else next((k.value for k in call.keywords if k.arg == "name"), None)
    )
    if not isinstance(first, ast.Constant) or not isinstance(first.value, str) or not first.value:
        return None
    try:
        return importlib.util.resolve_name(first.value, package)
    except (ImportError, ValueError):
        return None


def _with_parents(name: str) -> list[str]:
    """``a.b.c`` → ``a``, ``a.b``, ``a.b.c``: importing a module runs its packages first."""
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts) + 1)]
