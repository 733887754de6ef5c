"""What a module of the user's does when it is imported, besides defining names.

A module's top-level statements that act on something else: a call whose result is dropped
(``random.seed(1)``, ``dspy.configure(lm=lm)``, ``load_dotenv()``), an assignment to an
attribute or an item (``Settings.llm = OpenAI(model="gpt-4o")``,
``os.environ["MODEL"] = "small"``), a ``del`` of one, and an ``if``, ``for``, ``with`` or
``try`` holding any of these. They set state the code reads later, in a library or in the
process, where the walk of the functions it calls never looks; each such statement counts by
its syntax tree (never by its line numbers), and so does each top-level assignment of a name
it reads (``lm = dspy.LM("gpt-4o")`` before ``dspy.configure(lm=lm)``).

Left out: definitions, imports, assignments to plain names (their values count where they are
read), ``if __name__ == "__main__":``, which an import never runs, and a change to ``sys.path``
(``sys.path.insert(0, str(ROOT))``): what it makes importable counts where the code uses it,
and the path it names would tie the identity to the folder the project is in.

Most modules have no such statement, and reading one costs a scan of its source for lines that
could start one; only a module where the scan finds one is parsed.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

# A column-0 line that may start such a statement: a compound statement other than the
# ``__main__`` guard, ``del``, or a name followed by ``.``, ``(`` or ``[``. A line inside a
# string may match too; the parse then finds nothing. Searched for after a newline (the source
# is given one in front), which ``re`` finds five times faster than a line start.
_MAYBE = re.compile(
    rb"\n(?:(?:for|while|with|try|match|del|async)\b|if\b(?!\s+__name__\b)|[A-Za-z_][\w.]*\s*[.(\[])"
)
_DEFINES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)


@dataclass(frozen=True)
class TopLevel:
    """A module's acting statements: their dump (what counts) and the names they load."""

    dump: str
    names: tuple[str, ...]


def top_level(filename: str) -> TopLevel | None:
    """The statements ``filename`` runs at import that act on something else; None when it has
    none, or its source cannot be read."""
    if not filename.endswith(".py"):
        return None
    try:
        stat = os.stat(filename)
    except OSError:
        return None
    return _read(filename, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=256)
def _read(filename: str, mtime_ns: int, size: int) -> TopLevel | None:
    """``top_level`` of a file as it is at ``mtime_ns`` and ``size`` (the stages of a staged
    system, each fingerprinted on its own, read their module once)."""
    try:
        source = Path(filename).read_bytes()
    except OSError:
        return None
    if _MAYBE.search(b"\n" + source) is None:
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    acting = [s for s in tree.body if _acts(s)]
    if not acting:
        return None
    assigned = _assignments(tree.body)
    counted: list[ast.stmt] = []
    seen: set[int] = set()
    pending = list(acting)
    names: dict[str, None] = {}
    while pending:
        statement = pending.pop(0)
        if id(statement) in seen:
            continue
        seen.add(id(statement))
        counted.append(statement)
        for name in _loaded(statement):
            names.setdefault(name)
            pending += assigned.get(name, ())
    dump = "\n".join(ast.dump(s) for s in counted)
    return TopLevel(dump, tuple(names))


def _acts(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Expr):
        value = statement.value  # a docstring does nothing
        return not isinstance(value, ast.Constant) and not _on_import_path(value)
    if isinstance(statement, ast.Assign | ast.Delete):
        return not all(_plain(t) for t in statement.targets)
    if isinstance(statement, ast.AugAssign | ast.AnnAssign):
        return not _plain(statement.target)
    if isinstance(statement, _DEFINES) or _is_main_guard(statement):
        return False
    return any(_acts(s) for s in _inner(statement))


def _on_import_path(value: ast.expr) -> bool:
    """``sys.path.insert(...)``, ``sys.path.append(...)`` and the like."""
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return False
    held = value.func.value
    return (
        isinstance(held, ast.Attribute)
        and held.attr == "path"
        and isinstance(held.value, ast.Name)
        and held.value.id == "sys"
    )


def _plain(target: ast.expr) -> bool:
    """A target that only binds names of the module."""
    if isinstance(target, ast.Name):
        return True
    if isinstance(target, ast.Starred):
        return _plain(target.value)
    if isinstance(target, ast.Tuple | ast.List):
        return all(_plain(t) for t in target.elts)
    return False


def _inner(statement: ast.stmt) -> list[ast.stmt]:
    """The statements an ``if``, ``for``, ``while``, ``with``, ``try`` or ``match`` holds."""
    found: list[ast.stmt] = []
    for field in ("body", "orelse", "finalbody"):
        found += getattr(statement, field, None) or []
    for handler in getattr(statement, "handlers", None) or []:
        found += handler.body
    for case in getattr(statement, "cases", None) or []:
        found += case.body
    return found


def _is_main_guard(statement: ast.stmt) -> bool:
    if not isinstance(statement, ast.If) or not isinstance(statement.test, ast.Compare):
        return False
    sides = [statement.test.left, *statement.test.comparators]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)


def _assignments(body: list[ast.stmt]) -> dict[str, list[ast.stmt]]:
    """Each name the module's top level binds by assignment, with the statements that do."""
    found: dict[str, list[ast.stmt]] = {}
    for statement in body:
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, ast.AugAssign | ast.AnnAssign) and statement.value is not None:
            targets = [statement.target]
        else:
            continue
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Name):
                    found.setdefault(node.id, []).append(statement)
    return found


def _loaded(statement: ast.stmt) -> list[str]:
    """The names a statement reads, and the attributes it names (``os.environ`` gives both)."""
    found: list[str] = []
    for node in ast.walk(statement):
        if isinstance(node, ast.Name):
            found.append(node.id)
        elif isinstance(node, ast.Attribute):
            found.append(node.attr)
    return found
