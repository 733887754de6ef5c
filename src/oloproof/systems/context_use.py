"""Whether a ``generate`` can only have read the passages kept in its context, and which state
a stage's code changes as it runs.

The generate stage's cache key holds those passages, and how the context was made (its token
budget, the passages it dropped, its source) only where generate can read it: one that formats
the whole context into its prompt, dumps it, or hands it to a helper made an answer that may
depend on the budget, and must not be served that answer under another budget.

Read from the method's bytecode, conservatively: every use of its context parameter must read
``.items`` at once (``context.items``, ``for p in context.items``, ``context.items[0]``), or
hand the context, as the last positional argument of a call, to a plain function of the module
or a method of the class that in turn uses it only so (``answer(question, context)``,
``self._prompt(input, context)``: up to ``_MAX_FUNCTIONS`` functions in all). No code it reaches may
read locals by another way (``locals()``, a frame, ``eval``). Anything else, or a method that
cannot be read so (wrapped by a decorator, taking ``*args``, a static or class method), counts
as reading the whole context.

``written``: what state a stage's code changes as it runs, so that a ``generate`` that reads
what ``retrieve`` leaves behind (``self.scores[q] = ...``) is known to need retrieve to run.
"""

from __future__ import annotations

import builtins
import dis
import inspect
import sys
from collections.abc import Iterable
from types import CodeType, FunctionType
from typing import Any, Final

_ITEMS: Final = "items"
# Names through which code reaches a function's locals without loading them by name.
_REACH_LOCALS: Final = frozenset(
    {"locals", "vars", "eval", "exec", "_getframe", "currentframe", "f_locals", "f_back"}
)
# A local loaded alone (3.11 to 3.14); its pair loads, stores and deletes do not count.
_LOADS: Final = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW"})
_CONTEXT_AT: Final = 2  # generate(self, input, context)
_MAX_FUNCTIONS: Final = 8  # generate and the helpers followed from it
# Where LOAD_ATTR's low bit asks for a method and its self (3.12 on); before, LOAD_METHOD did.
_ATTR_METHODS: Final = sys.version_info >= (3, 12)


def reads_only_items(cls: type, reached: frozenset[str], method: str = "generate") -> bool:
    """Whether ``cls.method`` reads nothing of its context but ``context.items``; ``reached``:
    the names the code it reaches uses (its fingerprint's)."""
    if _REACH_LOCALS & reached:
        return False
    return _uses_only_items(inspect.getattr_static(cls, method, None), _CONTEXT_AT, cls, set())


def ignores_context(cls: type, reached: frozenset[str], method: str = "generate") -> bool:
    """Whether ``cls.method`` certainly never reads its context: a plain function that takes
    it by name and never loads it, reaching no locals another way. Such a generate answers the
    same whatever context it is handed (it answers from what ``retrieve`` left behind, say), so
    no intervention on the context can reach its answer. Anything that cannot be read so counts
    as reading it."""
    function = inspect.getattr_static(cls, method, None)
    if (
        _REACH_LOCALS & reached
        or type(function) is not FunctionType
        or getattr(function, "__wrapped__", None) is not None
        or function.__code__.co_argcount <= _CONTEXT_AT
    ):
        return False
    code = function.__code__
    name = code.co_varnames[_CONTEXT_AT]
    if name in code.co_cellvars:  # a nested function or comprehension holds it
        return False
    return not any(_is_local(i, name) for i in dis.get_instructions(code))


def _uses_only_items(function: Any, at: int, cls: type | None, seen: set[Any]) -> bool:
    """Whether plain function ``function`` uses its positional parameter ``at`` only as
    ``.items``, itself or through the helpers it hands it to."""
    if type(function) is not FunctionType or getattr(function, "__wrapped__", None) is not None:
        return False
    code = function.__code__
    if code.co_argcount <= at:
        return False  # the value comes through *args, or not at all
    key = (code, at)
    if key in seen:  # a helper calling itself: its other uses decide
        return True
    if len(seen) >= _MAX_FUNCTIONS:
        return False
    seen.add(key)
    name = code.co_varnames[at]
    if name in code.co_cellvars:  # a nested function or comprehension holds it
        return False
    instructions = list(dis.get_instructions(code))
    for index, instruction in enumerate(instructions):
        if not _is_local(instruction, name):
            continue
        if instruction.opname not in _LOADS or isinstance(instruction.argval, tuple):
            return False  # stored, deleted, loaded with another local
        following = instructions[index + 1] if index + 1 < len(instructions) else None
        if following is not None and following.opname == "LOAD_ATTR":
            if following.argval != _ITEMS:
                return False
            continue
        if not _handed_on(function, instructions, index, cls, seen):
            return False
    return True


def _handed_on(
    function: FunctionType,
    instructions: list[dis.Instruction],
    index: int,
    cls: type | None,
    seen: set[Any],
) -> bool:
    """Whether the value loaded at ``index`` is the last positional argument of the call that
    follows at once, made to a function that uses it only as ``.items``."""
    call = instructions[index + 1] if index + 1 < len(instructions) else None
    if call is None or call.opname not in ("PRECALL", "CALL") or not call.arg:
        return False
    # Back from the value to the callee: the instructions between leave the other arguments.
    # Within an argument, what a tail of its instructions leaves is at most one value and
    # only whole, so the first point that leaves them all is where the arguments begin.
    left = 0
    for back in range(index - 1, 0, -1):
        instruction = instructions[back]
        if left == call.arg - 1:
            callee = _callee(function, instructions, back, cls)
            if callee is None:
                return False
            target, offset, owner = callee
            return _uses_only_items(target, call.arg - 1 + offset, owner, seen)
        if instruction.opcode in dis.hasjrel or instruction.opcode in dis.hasjabs:
            return False  # an argument that branches: not followed
        try:
            left += dis.stack_effect(instruction.opcode, instruction.arg, jump=False)
        except ValueError:
            return False
    return False


def _callee(
    function: FunctionType, instructions: list[dis.Instruction], at: int, cls: type | None
) -> tuple[Any, int, type | None] | None:
    """The function that the instruction at ``at`` loads to be called, how many arguments come
    before those of the call (``self``), and the class its ``self`` is of: a global of the
    module, or a method of ``cls`` on the first parameter. ``None`` for anything else."""
    instruction = instructions[at]
    if instruction.opname == "LOAD_GLOBAL" and instruction.arg is not None and instruction.arg & 1:
        return function.__globals__.get(instruction.argval), 0, None
    is_method = instruction.opname == "LOAD_METHOD" or (
        _ATTR_METHODS
        and instruction.opname == "LOAD_ATTR"
        and instruction.arg is not None
        and instruction.arg & 1
    )
    if not is_method or cls is None or at == 0:
        return None
    on = instructions[at - 1]
    self_name = function.__code__.co_varnames[0] if function.__code__.co_argcount else ""
    if (
        on.opname not in _LOADS
        or on.argval != self_name
        or any(_is_local(i, self_name) and not i.opname.startswith("LOAD_") for i in instructions)
        or _set_on_instances(cls, instruction.argval)
    ):
        return None
    return inspect.getattr_static(cls, instruction.argval, None), 1, cls


def _set_on_instances(cls: type, name: str) -> bool:
    """Whether a method of ``cls`` may set attribute ``name`` (on an instance, where it would
    hide the class's method of that name)."""
    for klass in cls.__mro__:
        for value in vars(klass).values():
            code = getattr(getattr(value, "__func__", value), "__code__", None)
            if code is None:
                continue
            if "setattr" in code.co_names or any(
                i.opname in ("STORE_ATTR", "DELETE_ATTR") and i.argval == name
                for i in dis.get_instructions(code)
            ):
                return True
    return False


def _is_local(instruction: dis.Instruction, name: str) -> bool:
    """Whether ``instruction`` acts on the local ``name`` (alone or in a pair)."""
    if not any(kind in instruction.opname for kind in ("FAST", "DEREF", "CLOSURE")):
        return False
    argval: Any = instruction.argval
    return name in argval if isinstance(argval, tuple) else bool(argval == name)


# Methods that change the container they are called on.
_MUTATORS: Final = frozenset(
    {"append", "extend", "insert", "remove", "pop", "popitem", "clear", "update", "setdefault"}
    | {"add", "discard", "appendleft", "extendleft", "popleft", "sort", "reverse"}
    | {"__setitem__", "__delitem__", "__setattr__", "__delattr__"}
)
_SETS: Final = frozenset({"STORE_ATTR", "DELETE_ATTR", "STORE_GLOBAL", "DELETE_GLOBAL"})
_SUBSCRIPT_SETS: Final = frozenset({"STORE_SUBSCR", "DELETE_SUBSCR", "STORE_SLICE"})
_NAMED_LOADS: Final = frozenset({"LOAD_GLOBAL", "LOAD_ATTR", "LOAD_METHOD", "LOAD_NAME"})
# What runs once, as an instance is made, rather than on every call of a stage.
_SETUP: Final = frozenset({"__init__", "__new__", "__post_init__", "__init_subclass__"})


def written(functions: Iterable[FunctionType]) -> frozenset[str]:
    """The names of the state ``functions`` change as they run: attributes and globals they
    assign or delete (``self.last = ...``, ``global LAST``), and the names loaded on a line that
    stores into an item (``self.scores[q] = ...``, ``LAST[q] = ...``) or just before a mutating
    method (``self.history.append(...)``). Read from their bytecode and nested code, leaving out
    what sets an instance up; builtins' names are left out. A change made through a local name
    for the state (``cache = self.cache; cache[q] = ...``) is not seen."""
    found: set[str] = set()
    for function in functions:
        if function.__name__ not in _SETUP:
            _written_by(function.__code__, found)
    return frozenset(found - set(dir(builtins)))


def _written_by(code: CodeType, found: set[str]) -> None:
    instructions = list(dis.get_instructions(code))
    stored_lines = set()
    for index, instruction in enumerate(instructions):
        if instruction.opname in _SETS:
            found.add(instruction.argval)
        elif instruction.opname in _SUBSCRIPT_SETS:
            stored_lines.add(instruction.positions and instruction.positions.lineno)
        elif instruction.opname in _NAMED_LOADS and instruction.argval in _MUTATORS and index:
            before = instructions[index - 1]
            if before.opname in _NAMED_LOADS:
                found.add(before.argval)
    found.update(
        i.argval
        for i in instructions
        if i.opname in _NAMED_LOADS and (i.positions and i.positions.lineno) in stored_lines
    )
    for constant in code.co_consts:
        if isinstance(constant, CodeType):
            _written_by(constant, found)
