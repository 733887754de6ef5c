"""The walk behind a fingerprint: from an entry point through the user's code it reaches.

Each function reached contributes its code object (bytecode, constants, names, nested code such
as lambdas and inner functions, the exception table; never line numbers, so an edit elsewhere in
its file does not touch it), its default values, the values its closure captured and what it
wraps (``__wrapped__``). The names its code uses are then resolved, conservatively: any name
that is a global of its module is followed, whether the code reads it as a global or as an
attribute of something else; an attribute of an imported user module (``helper.f``) is followed
when the code names it; a method reached through the entry class resolves every name it uses
against that class's whole MRO (so ``self.x``, ``type(self).x`` and ``super().x`` are all
covered); an import inside a function is followed to the module it loads.

A value a function reads (a module-level global, a class attribute, a default, a captured cell)
is encoded when it is plain data: numbers, text, bytes, and lists, tuples, dicts and sets of
them, plus a few value types whose state is their repr (dates, decimals, paths, compiled
patterns, enum members). A function, method, class or module inside it is a reference that the
walk follows. An instance of a user class is its class plus its attributes. A value whose
encoding passes ``DATA_LIMIT`` bytes, or an object of a library type (a search index, a model
client), cannot be seen: it is listed in ``unseen`` and only its type (and so its
distribution's version) is part of the fingerprint.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import dis
import enum
import fractions
import functools
import importlib.util
import inspect
import os
import re
import sys
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path, PurePath
from types import BuiltinFunctionType, CodeType, FunctionType, MethodType, ModuleType
from typing import Any

from blake3 import blake3

from oloproof.fingerprint._places import (
    Place,
    distribution_of,
    file_of_module,
    place_of_file,
    place_of_module,
    place_of_name,
)

# Plain data a value may hold to be part of a fingerprint: about one megabyte of text and
# numbers. Larger module state (a corpus, an index) is listed as unseen instead of being
# walked on every run.
DATA_LIMIT = 1_000_000
_DEPTH_LIMIT = 200
DIGEST = 32  # hex digits kept of each part's blake3 (128 bits)

# What runs on an instance besides the method itself, and can change what the method reads.
LIFECYCLE = (
    "__init__",
    "__new__",
    "__post_init__",
    "__init_subclass__",
    "__getattr__",
    "__getattribute__",
    "__setattr__",
)
# Class attributes that are bookkeeping, or derived from the source the class walk hashes.
_NOISE = frozenset({"__dict__", "__weakref__", "__module__", "__qualname__", "__doc__"})
_IMPORT_NAME = dis.opmap["IMPORT_NAME"]
_REPR_TYPES = (
    dt.date,
    dt.time,
    dt.timedelta,
    decimal.Decimal,
    fractions.Fraction,
    uuid.UUID,
    complex,
    range,
)
_REFERENCES = (FunctionType, staticmethod, classmethod, property, type, ModuleType)


class _TooLarge(Exception):
    pass


class _Budget:
    """What is left of ``DATA_LIMIT`` for one value, and the containers being encoded."""

    __slots__ = ("active", "depth", "left")

    def __init__(self) -> None:
        self.left = DATA_LIMIT
        self.active: set[int] = set()
        self.depth = 0

    def spend(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise _TooLarge


def is_reference(value: Any) -> bool:
    """Whether ``value`` is code the walk records on its own (a function, a class, a module, a
    method wrapper), rather than a value whose bytes stand for it (data, and callables that
    carry data: a partial, a bound method)."""
    if isinstance(value, BuiltinFunctionType):
        return value.__self__ is None or isinstance(value.__self__, ModuleType)
    return isinstance(value, _REFERENCES)


class Walk:
    """One fingerprint's walk. ``run()`` drains the queue of functions and classes to visit."""

    def __init__(self, base_dir: Path) -> None:
        self.base_dir = base_dir.resolve()
        self._base = str(self.base_dir)
        self._labels: dict[str, str] = {}
        self.code: dict[str, tuple[str, str, str]] = {}  # key -> (kind, file, digest)
        self.constants: dict[str, tuple[str, str]] = {}  # key -> (file, digest)
        self.dists: dict[str, str] = {}
        self.unseen: dict[str, None] = {}
        self._queue: deque[Callable[[], None]] = deque()
        self._scheduled: set[tuple[int, int]] = set()
        self._done: set[tuple[str, str, int]] = set()
        self._keep: list[Any] = []  # keeps what was scheduled alive, so ids stay unique

    def run(self) -> None:
        while self._queue:
            self._queue.popleft()()

    # --- entry points ----------------------------------------------------------------------

    def method_entry(self, cls: type, name: str) -> bytes:
        """A method called on ``cls``: the class's MRO by name, and what the method reads."""
        material = bytearray(b"method:" + name.encode())
        for klass in cls.__mro__:
            material += b"|" + _class_key(klass).encode()
            place = place_of_class(klass)
            if place is not Place.USER:
                self.stand_for(klass.__module__, place)
        if type(cls) is not type:
            material += self.class_reference(type(cls))
        for attribute in (name, *LIFECYCLE):
            self.attribute(cls, attribute)
        material += self._dataclass_fields(cls, owner=cls)
        return bytes(material)

    # --- functions and classes -------------------------------------------------------------

    def _schedule(self, obj: Any, owner: type | None, task: Callable[[], None]) -> None:
        token = (id(obj), id(owner))
        if token not in self._scheduled:
            self._scheduled.add(token)
            self._keep.append((obj, owner))
            self._queue.append(task)

    def function_reference(self, fn: FunctionType, owner: type | None) -> bytes:
        self._schedule(fn, owner, lambda: self._function(fn, owner))
        return b"F" + f"{fn.__module__}:{fn.__qualname__}".encode()

    def _function(self, fn: FunctionType, owner: type | None) -> None:
        place = place_of_function(fn)
        if place is not Place.USER:
            self.stand_for(fn.__module__ or "", place)
            return
        digest = blake3()
        names: dict[str, None] = {}
        imports: list[tuple[str, int, tuple[str, ...]]] = []
        _hash_code(fn.__code__, digest, names, imports)
        for value in fn.__defaults__ or ():
            digest.update(self.value(value, "a default", None))
        for name, value in (fn.__kwdefaults__ or {}).items():
            digest.update(name.encode() + self.value(value, "a default", None))
        for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
            if var == "__class__":  # the class of a method using super(): walked as its owner
                continue
            try:
                contents = cell.cell_contents
            except ValueError:  # a cell not yet filled
                digest.update(b"<empty>")
                continue
            digest.update(self.value(contents, f"{fn.__qualname__} closure", owner))
        wrapped = fn.__dict__.get("__wrapped__")
        if wrapped is not None:
            digest.update(self.value(wrapped, f"{fn.__qualname__}.__wrapped__", owner))
        key = f"{fn.__module__}:{fn.__qualname__}"
        self._record_code(key, "f", self.file_label(fn.__code__.co_filename, fn.__module__), digest)
        namespace = fn.__globals__
        module = fn.__module__ or str(namespace.get("__name__", ""))
        for name in names:
            if name in namespace:
                self.global_value(module, name, namespace[name], names)
            if owner is not None:
                self.attribute(owner, name)
        package = namespace.get("__package__")
        for name, level, fromlist in imports:
            package_name = package if isinstance(package, str) else None
            self.imported(name, level, package_name, fromlist, names)

    def class_reference(self, cls: type) -> bytes:
        place = place_of_class(cls)
        if place is Place.USER:
            self._schedule(cls, None, lambda: self._whole_class(cls))
        else:
            self.stand_for(cls.__module__, place)
        return b"C" + _class_key(cls).encode()

    def _whole_class(self, cls: type) -> None:
        """A class the code uses (not the entry class): its source, bases and every member."""
        key = _class_key(cls)
        digest = blake3()
        try:
            digest.update(inspect.getsource(cls).encode())
        except Exception:  # defined in a notebook or at run time; a file that no longer parses
            digest.update(b"<no source>")
        for base in cls.__bases__:
            digest.update(self.class_reference(base))
        if type(cls) is not type:
            digest.update(self.class_reference(type(cls)))
        for name, attr in list(vars(cls).items()):
            if name in _NOISE or (_is_dunder(name) and not is_reference(attr)):
                continue
            digest.update(name.encode() + self.value(attr, f"{key}.{name}", cls))
        digest.update(self._dataclass_fields(cls, owner=cls))
        self._record_code(key, "c", self.file_label(file_of_module(cls.__module__), None), digest)

    def _dataclass_fields(self, cls: type, owner: type | None) -> bytes:
        if not dataclasses.is_dataclass(cls):
            return b""
        material = bytearray()
        for f in dataclasses.fields(cls):
            material += f.name.encode()
            material += self.value(f.default, f"{cls.__qualname__}.{f.name}", owner)
            material += self.value(f.default_factory, f"{cls.__qualname__}.{f.name}", owner)
        return bytes(material)

    def _record_code(self, key: str, kind: str, file: str, digest: Any) -> None:
        hexdigest = digest.hexdigest()[:DIGEST]
        # Two different objects with one qualified name (a redefinition, lambdas made in a
        # loop): keep both, numbered in the order the walk met them.
        number, unique = 1, key
        while unique in self.code and self.code[unique][2] != hexdigest:
            number += 1
            unique = f"{key}#{number}"
        self.code[unique] = (kind, file, hexdigest)

    # --- names a function uses --------------------------------------------------------------

    def global_value(self, module: str, name: str, value: Any, names: Iterable[str]) -> None:
        """A module-level name the code reads: a module, code to follow, or a constant."""
        token = (module, name, 0)
        if token in self._done:
            return
        self._done.add(token)
        if isinstance(value, ModuleType):
            self.module_attributes(value, names)
            return
        label = f"{module}:{name}"
        material = self.value(value, label, None)
        if not is_reference(value):
            self.constant(label, self.file_label(file_of_module(module), module), material)

    def module_attributes(self, module: ModuleType, names: Iterable[str]) -> None:
        """``module.name`` for every name the code uses that the module has."""
        place = place_of_module(module, module.__name__)
        if place is not Place.USER:
            self.stand_for(module.__name__, place)
            return
        namespace = vars(module)
        for name in list(names):
            if name in namespace:
                self.global_value(module.__name__, name, namespace[name], names)

    def attribute(self, owner: type, name: str) -> None:
        """Every definition of ``name`` along ``owner``'s MRO (``self.name``, ``super().name``)."""
        for klass in owner.__mro__:
            if name not in vars(klass):
                continue
            place = place_of_class(klass)
            if place is not Place.USER:
                self.stand_for(klass.__module__, place)
                continue
            token = (_class_key(klass), name, id(owner))
            if token in self._done:
                continue
            self._done.add(token)
            attr = vars(klass)[name]
            label = f"{_class_key(klass)}.{name}"
            material = self.value(attr, label, owner)
            if not is_reference(attr):
                file = self.file_label(file_of_module(klass.__module__), None)
                self.constant(label, file, material)

    def imported(
        self,
        name: str,
        level: int,
        package: str | None,
        fromlist: tuple[str, ...],
        names: Iterable[str],
    ) -> None:
        """A module imported inside a function (``from M import x``: x may be a module too)."""
        try:
            absolute = importlib.util.resolve_name("." * level + name, package) if level else name
        except (ImportError, ValueError):
            self.unseen[f"an import of {name!r} that could not be resolved"] = None
            return
        for loaded in {absolute, absolute.partition(".")[0]}:
            module = sys.modules.get(loaded)
            if module is not None:
                self.module_attributes(module, names)
        self._import_target(absolute)
        module = sys.modules.get(absolute)
        for item in fromlist:
            if item != "*" and (module is None or not hasattr(module, item)):
                self._import_target(f"{absolute}.{item}", quiet=True)

    def _import_target(self, absolute: str, quiet: bool = False) -> None:
        module = sys.modules.get(absolute)
        if module is not None:
            if quiet:  # a submodule named in a from-import: what of it is used is unknown
                self._module_value(module)
            return
        origin = _locate(absolute)
        if origin is None:
            if not quiet:
                self.unseen[f"module {absolute} (imported inside a function, not found)"] = None
            return
        place = place_of_file(origin)
        if place is Place.USER:
            self._module_file(absolute, origin)
        else:
            self.stand_for(absolute, place)

    def _module_file(self, module: str, filename: str) -> None:
        """A user module that is not loaded yet: the whole of its file."""
        try:
            digest = blake3(Path(filename).read_bytes())
        except OSError:
            digest = blake3(b"<unreadable>")
        self._record_code(f"{module}:", "m", self.file_label(filename, None), digest)

    def stand_for(self, module: str, place: Place) -> None:
        """Code outside the user's: a distribution's version (the stdlib: Python's)."""
        if place is Place.STDLIB or not module:
            return
        if place is Place.USER:  # user code without Python source (a compiled extension)
            filename = file_of_module(module)
            if filename is not None:
                self._module_file(module, filename)
            return
        dist, version = distribution_of(module)
        self.dists[dist] = version

    def constant(self, label: str, file: str, material: bytes) -> None:
        self.constants[label] = (file, blake3(material).hexdigest()[:DIGEST])

    def file_label(self, filename: str | None, module: str | None) -> str:
        """A file as the fingerprint names it: relative to the project folder when inside it."""
        if filename is None or filename.startswith("<"):
            filename = file_of_module(module) if module else None
            if filename is None:
                return "<no file>"
        label = self._labels.get(filename)
        if label is None:
            path = os.path.realpath(filename)
            inside = path.startswith(self._base + os.sep)
            label = Path(path[len(self._base) + 1 :]).as_posix() if inside else path
            self._labels[filename] = label
        return label

    # --- values -----------------------------------------------------------------------------

    def value(self, value: Any, label: str, owner: type | None) -> bytes:
        """The bytes a value contributes; references in it are scheduled for a visit."""
        budget = _Budget()
        out = bytearray()
        try:
            self._encode(value, out, budget, label, owner)
        except _TooLarge:
            self.unseen[f"{_display(label)}: more than {DATA_LIMIT:,} bytes of data"] = None
            return b"L" + _class_key(type(value)).encode()
        return bytes(out)

    def _encode(self, v: Any, out: bytearray, budget: _Budget, label: str, owner: Any) -> None:
        kind = type(v)
        budget.spend(8)
        if v is None or v is Ellipsis or kind is bool:
            out += repr(v).encode()
        elif kind is int:
            out += b"i%x;" % v
        elif kind is float:
            out += b"f" + v.hex().encode() + b";"
        elif kind is str:
            data = v.encode("utf-8", "surrogatepass")
            budget.spend(len(data))
            out += b"s%d:" % len(data) + data
        elif kind is bytes or kind is bytearray:
            budget.spend(len(v))
            out += b"b%d:" % len(v) + bytes(v)
        elif kind is tuple or kind is list or kind is dict or kind is set or kind is frozenset:
            self._container(v, out, budget, label, owner)
        else:
            self._object(v, out, budget, label, owner)

    def _container(self, v: Any, out: bytearray, budget: _Budget, label: str, owner: Any) -> None:
        if id(v) in budget.active:  # a list that contains itself
            out += b"<cycle>"
            return
        budget.depth += 1
        if budget.depth > _DEPTH_LIMIT:
            raise _TooLarge
        budget.active.add(id(v))
        try:
            if isinstance(v, dict):
                out += b"{%d:" % len(v)
                for key, item in v.items():
                    self._encode(key, out, budget, label, owner)
                    self._encode(item, out, budget, label, owner)
                out += b"}"
            elif isinstance(v, set | frozenset):
                parts = []
                for item in v:  # set order varies between runs: sort the encodings
                    part = bytearray()
                    self._encode(item, part, budget, label, owner)
                    parts.append(bytes(part))
                out += b"<%d:" % len(parts) + b",".join(sorted(parts)) + b">"
            else:
                out += (b"(" if isinstance(v, tuple) else b"[") + b"%d:" % len(v)
                for item in v:
                    self._encode(item, out, budget, label, owner)
                    out += b","
        finally:
            budget.active.discard(id(v))
            budget.depth -= 1

    def _object(self, v: Any, out: bytearray, budget: _Budget, label: str, owner: Any) -> None:
        if isinstance(v, FunctionType):
            out += self.function_reference(v, owner)
        elif isinstance(v, MethodType):  # a bound method: its function and what it is bound to
            bound = v.__self__
            on = bound if isinstance(bound, type) else type(bound)
            self._encode(v.__func__, out, budget, label, on)
            self._encode(bound, out, budget, label, owner)
        elif isinstance(v, BuiltinFunctionType):
            bound = v.__self__
            out += b"B" + f"{v.__module__}.{v.__qualname__}".encode()
            if bound is None or isinstance(bound, ModuleType):
                module = v.__module__ or getattr(bound, "__name__", "")
                self.stand_for(module, place_of_name(module))
            else:  # a method of a value (``TABLE.get``): the value is what it reads
                self._encode(bound, out, budget, label, owner)
        elif isinstance(v, staticmethod | classmethod):
            out += b"S" if isinstance(v, staticmethod) else b"K"
            self._encode(v.__func__, out, budget, label, owner)
        elif isinstance(v, property):
            for accessor in (v.fget, v.fset, v.fdel):
                self._encode(accessor, out, budget, label, owner)
        elif isinstance(v, functools.partial):
            for part in (v.func, v.args, v.keywords):
                self._encode(part, out, budget, label, owner)
        elif isinstance(v, type):
            out += self.class_reference(v)
        elif isinstance(v, ModuleType):
            self._module_value(v)
            out += b"M" + v.__name__.encode()
        else:
            self._instance(v, out, budget, label, owner)

    def _module_value(self, module: ModuleType) -> None:
        # A module held as data (in a dict, say): what of it is used cannot be told, so a user
        # module counts whole.
        place = place_of_module(module, module.__name__)
        filename = getattr(module, "__file__", None)
        if place is Place.USER and isinstance(filename, str):
            self._module_file(module.__name__, filename)
        else:
            self.stand_for(module.__name__, place)

    def _instance(self, v: Any, out: bytearray, budget: _Budget, label: str, owner: Any) -> None:
        kind = type(v)
        out += self.class_reference(kind)
        user = place_of_class(kind) is Place.USER
        if isinstance(v, enum.Enum):
            out += v.name.encode()
            self._encode(v.value, out, budget, label, owner)
        elif kind is re.Pattern:
            self._encode((v.pattern, v.flags), out, budget, label, owner)
        elif not user and isinstance(v, (PurePath, *_REPR_TYPES)):  # a library repr, no user code
            out += repr(v).encode()
        elif isinstance(v, dict | list | tuple | set | frozenset):  # a namedtuple, a subclass
            self._container(_builtin_copy(v), out, budget, label, owner)
            if user:
                self._state(v, out, budget, label, owner)
        elif user or _has_fields(v):  # the user's object, or a dataclass or pydantic model
            self._state(v, out, budget, label, owner)
        elif _wrapped(v) is not None:  # a library's decorator object (functools.lru_cache)
            self._encode(_wrapped(v), out, budget, label, owner)
        else:
            out += b"<opaque>"
            self.unseen[f"{_display(label)}: a {_display(_class_key(kind))} object"] = None

    def _state(self, v: Any, out: bytearray, budget: _Budget, label: str, owner: Any) -> None:
        """An instance's attributes: its ``__dict__`` and its slots."""
        if id(v) in budget.active:
            out += b"<cycle>"
            return
        state: dict[str, Any] = {}
        try:
            found = object.__getattribute__(v, "__dict__")
            state.update(found if isinstance(found, dict) else {})
        except AttributeError:
            pass
        for klass in type(v).__mro__:
            slots = vars(klass).get("__slots__", ())
            for slot in (slots,) if isinstance(slots, str) else slots:
                try:
                    state[f"slot {slot}"] = object.__getattribute__(v, slot)
                except AttributeError:
                    continue
        budget.active.add(id(v))
        try:
            self._container(state, out, budget, label, owner)
        finally:
            budget.active.discard(id(v))


# --- helpers ---------------------------------------------------------------------------------


def _hash_code(
    code: CodeType,
    digest: Any,
    names: dict[str, None],
    imports: list[tuple[str, int, tuple[str, ...]]],
) -> None:
    """A code object's behaviour into ``digest``; its names and imports into the lists."""
    digest.update(code.co_code)
    digest.update(getattr(code, "co_exceptiontable", b""))
    header = (
        code.co_name,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_flags,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
    )
    digest.update(repr(header).encode())
    for const in code.co_consts:
        if isinstance(const, CodeType):
            digest.update(b"<code>")
            _hash_code(const, digest, names, imports)
        else:
            digest.update(_const(const) + b",")
    for name in code.co_names:
        names.setdefault(name)
    if _IMPORT_NAME in code.co_code:
        loaded: list[Any] = []
        for instruction in dis.get_instructions(code):
            if instruction.opname == "LOAD_CONST":
                loaded.append(instruction.argval)
            elif instruction.opname == "IMPORT_NAME":
                level = loaded[-2] if len(loaded) >= 2 and isinstance(loaded[-2], int) else 0
                fromlist = loaded[-1] if loaded and isinstance(loaded[-1], tuple) else ()
                imports.append((str(instruction.argval), level, tuple(map(str, fromlist))))


def _const(value: Any) -> bytes:
    """A code constant (always plain: numbers, text, bytes, tuples, frozensets, None)."""
    if isinstance(value, tuple):
        return b"(" + b",".join(_const(v) for v in value) + b")"
    if isinstance(value, frozenset):
        return b"<" + b",".join(sorted(_const(v) for v in value)) + b">"
    if isinstance(value, float):
        return b"f" + value.hex().encode()
    return f"{type(value).__name__}:{value!r}".encode("utf-8", "surrogatepass")


def _builtin_copy(value: Any) -> Any:
    """A dict, list, tuple or set subclass's items as the built-in type (encoded as such)."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, tuple):
        return tuple(value)
    if isinstance(value, list):
        return list(value)
    return frozenset(value)


def _has_fields(value: Any) -> bool:
    """A dataclass or pydantic model instance: its state is its fields, whoever defined it."""
    from pydantic import BaseModel

    return dataclasses.is_dataclass(value) or isinstance(value, BaseModel)


def _wrapped(value: Any) -> Any:
    try:
        return inspect.getattr_static(value, "__wrapped__", None)
    except Exception:  # an object whose attribute lookup itself fails
        return None


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _class_key(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _display(label: str) -> str:
    return label.replace(":", ".", 1)


def place_of_class(cls: type) -> Place:
    if cls.__module__ == "builtins":
        return Place.STDLIB
    return place_of_name(cls.__module__)


def place_of_function(fn: FunctionType) -> Place:
    filename = fn.__code__.co_filename
    if filename.startswith("<frozen"):
        return Place.STDLIB
    if filename.startswith("<"):  # exec'd code (a dataclass's __init__): its module says
        return place_of_name(fn.__module__ or "")
    return place_of_file(filename)


def _locate(module: str) -> str | None:
    """The file of a module that is not loaded, found without importing anything."""
    top, _, rest = module.partition(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if not rest:
        return spec.origin
    for location in spec.submodule_search_locations or ():
        base = Path(location, *rest.split("."))
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return str(candidate)
    return None
