"""Whether a ``generate`` can only have read the passages kept in its context.

The generate stage's cache key holds those passages, and how the context was made (its token
budget, the passages it dropped, its source) only where generate can read it: one that formats
the whole context into its prompt, dumps it, or hands it to a helper made an answer that may
depend on the budget, and must not be served that answer under another budget.

Read from the method's bytecode, conservatively: every use of its context parameter must read
``.items`` at once (``context.items``, ``for p in context.items``, ``context.items[0]``), and
no code it reaches may read locals by another way (``locals()``, a frame, ``eval``). Anything
else, or a method that cannot be read so (wrapped by a decorator, taking ``*args``, a static
or class method), counts as reading the whole context.
"""

from __future__ import annotations

import dis
import inspect
from types import CodeType
from typing import Any, Final

_ITEMS: Final = "items"
# Names through which code reaches a function's locals without loading them by name.
_REACH_LOCALS: Final = frozenset(
    {"locals", "vars", "eval", "exec", "_getframe", "currentframe", "f_locals", "f_back"}
)
# A local loaded alone (3.11 to 3.14); its pair loads, stores and deletes do not count.
_LOADS: Final = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW"})
_CONTEXT_AT: Final = 2  # generate(self, input, context)


def reads_only_items(cls: type, reached: frozenset[str], method: str = "generate") -> bool:
    """Whether ``cls.method`` reads nothing of its context but ``context.items``; ``reached``:
    the names the code it reaches uses (its fingerprint's)."""
    function = inspect.getattr_static(cls, method, None)
    code: CodeType | None = getattr(function, "__code__", None)
    if code is None or getattr(function, "__wrapped__", None) is not None:
        return False
    if code.co_argcount <= _CONTEXT_AT or _REACH_LOCALS & reached:
        return False
    return _only_items(code, code.co_varnames[_CONTEXT_AT])


def _only_items(code: CodeType, name: str) -> bool:
    if name in code.co_cellvars:  # a nested function or comprehension holds it
        return False
    instructions = list(dis.get_instructions(code))
    for at, instruction in enumerate(instructions):
        if not _is_local(instruction, name):
            continue
        if instruction.opname not in _LOADS or isinstance(instruction.argval, tuple):
            return False  # stored, deleted, loaded with another local
        following = instructions[at + 1] if at + 1 < len(instructions) else None
        if following is None or following.opname != "LOAD_ATTR" or following.argval != _ITEMS:
            return False
    return True


def _is_local(instruction: dis.Instruction, name: str) -> bool:
    """Whether ``instruction`` acts on the local ``name`` (alone or in a pair)."""
    if not any(kind in instruction.opname for kind in ("FAST", "DEREF", "CLOSURE")):
        return False
    argval: Any = instruction.argval
    return name in argval if isinstance(argval, tuple) else bool(argval == name)
