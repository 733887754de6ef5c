"""The names a class's field annotations use, read from its source, never evaluated.

``mode: Mode``, ``docs: list[Doc]``, ``parent: "Node | None"``, ``n: Annotated[int,
Field(le=LIMIT)]``: a pydantic model validates against them, so the module-level names they use
(an alias, a ``TypeVar``, a class, a constant) are part of what the class does. The annotation
objects cannot say which names they came from (``Mode``'s ``Literal`` is just a ``Literal``), and
under ``from __future__ import annotations`` they are text; the class's source says both. A
string in an annotation is a forward reference, parsed as an expression, except a ``Literal``'s
values and ``Annotated``'s metadata, which are data.
"""

from __future__ import annotations

import ast
import textwrap
from functools import lru_cache


@lru_cache(maxsize=1024)
def field_annotation_names(source: str) -> tuple[str, ...]:
    """The names and attributes the field annotations of the class ``source`` defines use."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError):
        return ()
    found = next((node for node in tree.body if isinstance(node, ast.ClassDef)), None)
    names: dict[str, None] = {}
    for statement in found.body if found is not None else ():
        if isinstance(statement, ast.AnnAssign):
            _collect(statement.annotation, names, types=True)
    return tuple(names)


def _collect(node: ast.AST, names: dict[str, None], types: bool) -> None:
    """The names in ``node``; a string in it parsed as a type where ``types``."""
    if isinstance(node, ast.Constant):
        if types and isinstance(node.value, str):
            try:
                parsed = ast.parse(node.value.strip(), mode="eval")
            except (SyntaxError, ValueError):  # text, not a forward reference
                return
            _collect(parsed.body, names, types=True)
        return
    if isinstance(node, ast.Name):
        names[node.id] = None
    elif isinstance(node, ast.Attribute):
        names[node.attr] = None
    if not isinstance(node, ast.Subscript):
        for child in ast.iter_child_nodes(node):
            _collect(child, names, types)
        return
    _collect(node.value, names, types)
    head = node.value.id if isinstance(node.value, ast.Name) else getattr(node.value, "attr", "")
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    for at, item in enumerate(items):
        data = head == "Literal" or (head == "Annotated" and at > 0)
        _collect(item, names, types and not data)
