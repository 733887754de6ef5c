"""How a value the code reads becomes bytes in a fingerprint.

Plain data is encoded as it is: numbers, text, bytes, and lists, tuples, dicts (in their order)
and sets (sorted, since their order differs between processes) of them, plus a few library value
types whose state is their repr (dates, time zones, decimals, compiled patterns, enum members),
type hints read as what they are made of, and standard-library holders of plain data read as
the data they hold (``string.Template``, ``SimpleNamespace``, mapping proxies, deques, chain
maps, arrays, ``operator.itemgetter`` and its kin). A function, method, class or module inside a
value is a reference, which the walk follows on its own. An instance of a user class, a
dataclass or a pydantic model is its class plus its attributes (plus the value it holds, for a
subclass of ``str``, ``int``, ``deque`` and the like). A logger is its name, a lock its type. A
path is its text, and a path into the project folder (as a ``Path`` or as text) where it leads
from that folder, so the project may move. A value whose encoding passes
``DATA_LIMIT`` bytes, or an object of a library type (a search index, a model client), cannot be
seen: it is listed as unseen, and only its type (so its distribution's version) counts.
"""

from __future__ import annotations

import array
import collections
import dataclasses
import datetime as dt
import decimal
import enum
import fractions
import functools
import inspect
import logging
import operator
import os
import re
import string
import threading
import typing
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path, PurePath
from types import (
    BuiltinFunctionType,
    ClassMethodDescriptorType,
    FunctionType,
    MappingProxyType,
    MemberDescriptorType,
    MethodDescriptorType,
    MethodType,
    ModuleType,
    SimpleNamespace,
    WrapperDescriptorType,
)
from typing import Any

from oloproof import redaction
from oloproof.fingerprint._places import Place, place_of_function, place_of_name

# Plain data a value may hold to be part of a fingerprint: about one megabyte of text and
# numbers. Larger module state (a corpus, an index) is listed as unseen instead of being
# walked on every run.
DATA_LIMIT = 1_000_000
_DEPTH_LIMIT = 200

# The markers ``dataclasses`` builds fields and ``__init__`` defaults with (``MISSING``...), and
# the type of a namedtuple's field descriptors: standard-library objects whose whole state is
# known, which were otherwise listed as state the fingerprint cannot see.
_SENTINELS = frozenset(
    type(getattr(dataclasses, name))
    for name in ("MISSING", "KW_ONLY", "_HAS_DEFAULT_FACTORY")
    if hasattr(dataclasses, name)
)
_TUPLEGETTER = type(vars(collections.namedtuple("_Probe", "field"))["field"])

_REPR_TYPES = (
    dt.date,
    dt.time,
    dt.timedelta,
    dt.timezone,
    decimal.Decimal,
    fractions.Fraction,
    uuid.UUID,
    complex,
    range,
)


def _deque_data(v: collections.deque[Any]) -> Any:
    # Read by deque's own methods: a subclass's ``__iter__`` (user code) does not run.
    return list(collections.deque.__iter__(v)), collections.deque.maxlen.__get__(v)


def _array_data(v: array.array[Any]) -> Any:
    return array.array.typecode.__get__(v), array.array.tobytes(v)


# Standard-library objects that hold plain data, read as the data they hold, so that an edit to
# a prompt kept in a ``string.Template`` (say) is a change like an edit to a str: those whose
# attributes are all of it, and those read through what they hold.
_ATTRIBUTES_ONLY = frozenset({string.Template, SimpleNamespace})
_AS_DATA: dict[type, Callable[[Any], Any]] = {
    MappingProxyType: dict,
    collections.deque: _deque_data,
    collections.ChainMap: lambda v: list(v.maps),
    array.array: _array_data,
    # ``key=operator.itemgetter("score")``: the class and the names it was made with.
    operator.itemgetter: operator.itemgetter.__reduce__,
    operator.attrgetter: operator.attrgetter.__reduce__,
    operator.methodcaller: operator.methodcaller.__reduce__,
}
# The value an instance of a user's subclass of a built-in or standard-library value type holds
# outside its attributes (``class Prompt(str)``: its text), each read by the base type's own
# method, so no override of the subclass runs; encoded beside the attributes, or an edit to
# ``Prompt("...")`` would change nothing in the fingerprint. (A ``ChainMap`` subclass needs no
# entry: its maps are an attribute.)
_HELD_VALUES: dict[type, Callable[[Any], Any]] = {
    collections.deque: _deque_data,
    array.array: _array_data,
    str: str.__getnewargs__,
    bytes: bytes.__getnewargs__,
    int: int.__getnewargs__,
    float: float.__getnewargs__,
    decimal.Decimal: decimal.Decimal.__reduce__,
    dt.datetime: dt.datetime.__reduce__,
    dt.date: dt.date.__reduce__,
    dt.time: dt.time.__reduce__,
    dt.timedelta: dt.timedelta.__reduce__,
}
# Locks and the like (``LOCK = threading.Lock()``) hold only who waits for them now, nothing an
# answer is computed from: their type says all of them, and they are not listed as unseen.
_SYNCHRONISERS = frozenset(
    {
        type(threading.Lock()),
        type(threading.RLock()),
        threading.Condition,
        threading.Semaphore,
        threading.BoundedSemaphore,
        threading.Event,
    }
)
# The method by which an object of Oloproof's own types says what it is made of (a
# ``ModelClient``: its settings): read as that value, where another library's object is opaque.
_OWN_STATE = "fingerprinted_as"
# A method of a type written in C (``str.upper``, ``dict.fromkeys``): its type and name say it all.
_C_METHODS = (MethodDescriptorType, WrapperDescriptorType, ClassMethodDescriptorType)
_REFERENCES = (FunctionType, staticmethod, classmethod, property, type, ModuleType)
# The types of a function compiled by Cython (``numpy.random.randint``'s): not a Python function
# nor a built-in one to ``types``, and its type's module (``_cython_3_2_4``) cannot be imported.
_SPECIAL_FORM = type(typing.Union)
_COMPILED_FUNCTIONS = frozenset({"cython_function_or_method", "fused_cython_function"})


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


def names_another(defined_as: str, value: Any) -> bool:
    """Whether ``value``, a reference bound to a name, is anything but what is defined there
    under that name, ``defined_as`` (``app:PICK`` for a module's name, ``app:Staged.pick`` for
    a class's attribute): a function or class of another name or from elsewhere (``PICK =
    max``, ``from math import floor as rounding``, ``from json import dumps``, ``from ha import
    f``), a module of another name (``import json as codec``, ``from email import parser``).
    Which one the name holds is then part of what the code does, and nothing else says it: the
    referent is counted under its own name, a built-in or a library's by no more than its
    package, and the code reading the name is the same bytes whichever it holds, so rebinding
    ``PICK`` to ``min`` or ``codec`` to ``pickle`` would change nothing of the key."""
    if isinstance(value, staticmethod | classmethod):  # ``pick = staticmethod(max)``
        value = value.__func__
    name = defined_as.rpartition(":")[2].rpartition(".")[2]
    if isinstance(value, ModuleType):
        return value.__name__ != name  # ``import json`` binds nothing but json
    if not isinstance(value, FunctionType | BuiltinFunctionType | type):
        return False
    own = f"{getattr(value, '__module__', None)}:{getattr(value, '__qualname__', None)}"
    return own != defined_as


class Values:
    """Encoding values; a ``Walk`` supplies what a reference does (the hooks below)."""

    unseen: dict[str, None]
    _base: str  # the project folder, symbolic links resolved

    def function_reference(self, fn: FunctionType, owner: type | None) -> bytes:
        raise NotImplementedError

    def class_reference(self, cls: type) -> bytes:
        raise NotImplementedError

    def stand_for(self, module: str, place: Place) -> None:
        raise NotImplementedError

    def module_value(self, module: ModuleType) -> None:
        raise NotImplementedError

    def in_project(self, path: str) -> str | None:
        """An absolute ``path`` relative to the project folder (``.`` for the folder itself),
        symbolic links resolved, when it lies inside; None when it does not."""
        if not os.path.isabs(path):
            return None
        try:
            real = os.path.realpath(path)
        except ValueError:  # a NUL in the text: the path of no file
            return None
        if real == self._base:
            return "."
        if real.startswith(self._base + os.sep):
            return Path(real[len(self._base) + 1 :]).as_posix()
        return None

    def value(self, value: Any, label: str, owner: type | None) -> bytes:
        """The bytes a value contributes; references in it are scheduled for a visit."""
        budget = _Budget()
        out = bytearray()
        try:
            self._encode(value, out, budget, label, owner)
        except _TooLarge:
            self.unseen[f"{display(label)}: more than {DATA_LIMIT:,} bytes of data"] = None
            return b"L" + class_key(type(value)).encode()
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
            self._text(v, out, budget)
        elif kind is bytes or kind is bytearray:
            budget.spend(len(v))
            out += b"b%d:" % len(v) + bytes(v)
        elif kind is tuple or kind is list or kind is dict or kind is set or kind is frozenset:
            self._container(v, out, budget, label, owner)
        else:
            self._object(v, out, budget, label, owner)

    def _text(self, v: str, out: bytearray, budget: _Budget) -> None:
        """Text, or a path into the project (``os.path.dirname(__file__)``, a ``Path`` built
        from it) relative to the project folder: the project moved elsewhere keeps its
        identity (its cache, its runs to resume), while a path to another file, or one outside
        the project, differs. A secret in it (a key read from the environment at import) is
        taken as ``[redacted]``: its digest, stored with the run, would let the key be tried
        for offline, and a key rotated would read as the code changed."""
        v = redaction.kept_out(v)
        inside = self.in_project(v)
        data = (v if inside is None else inside).encode("utf-8", "surrogatepass")
        budget.spend(len(data))
        out += (b"s%d:" if inside is None else b"p%d:") % len(data) + data

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
        elif type(v).__name__ in _COMPILED_FUNCTIONS and isinstance(v.__module__, str):
            # Like a built-in function: its module and name, and what stands for its module.
            out += b"B" + f"{v.__module__}.{v.__qualname__}".encode()
            self.stand_for(v.__module__, place_of_name(v.__module__))
        elif isinstance(v, MemberDescriptorType):
            # A slot of a class (``__slots__``, ``dataclass(slots=True)``): its name and class
            # say all of it. The class is named, not walked: a stage's class counts by what its
            # method reads, not whole.
            out += b"A" + f"{class_key(v.__objclass__)}.{v.__name__}".encode()
        elif isinstance(v, _C_METHODS):
            out += b"D" + v.__name__.encode() + self.class_reference(v.__objclass__)
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
            self.module_value(v)
            out += b"M" + v.__name__.encode()
        else:
            self._instance(v, out, budget, label, owner)

    def _instance(self, v: Any, out: bytearray, budget: _Budget, label: str, owner: Any) -> None:
        kind = type(v)
        out += self.class_reference(kind)
        user = place_of_class(kind) is Place.USER
        if isinstance(v, enum.Enum):
            out += v.name.encode()
            self._encode(v.value, out, budget, label, owner)
        elif kind is re.Pattern:
            self._encode((v.pattern, v.flags), out, budget, label, owner)
        elif kind in _SYNCHRONISERS:
            pass
        elif isinstance(v, logging.Logger) and not user:
            # ``logging.getLogger(__name__)``: which logger, by its name. Its level, handlers and
            # parent are the process's logging setup (a Ray worker's differs from the driver's),
            # and set what is logged, not what is answered.
            self._encode(v.name, out, budget, label, owner)
        elif kind in _SENTINELS:  # what a dataclass's fields and __init__ mark "no default" by
            out += kind.__name__.encode()
        elif kind is _TUPLEGETTER:  # a namedtuple's field: its position and doc say all of it
            self._encode(v.__reduce__()[1], out, budget, label, owner)
        elif kind in _AS_DATA:  # exactly the standard library's type: a subclass may add state
            self._as_data(v, _AS_DATA[kind], out, budget, label, owner)
        elif not user and isinstance(v, PurePath):
            self._text(str(v), out, budget)
        elif not user and isinstance(v, _REPR_TYPES):  # a library repr, no user code
            out += repr(v).encode()
        elif isinstance(v, dict | list | tuple | set | frozenset):  # a namedtuple, a subclass
            self._container(_builtin_copy(v), out, budget, label, owner)
            if isinstance(v, collections.defaultdict):  # what a key not in it reads
                self._encode(v.default_factory, out, budget, label, owner)
            if user:
                self._state(v, out, budget, label, owner)
        # The user's object, a Template or namespace, a dataclass or pydantic model: its fields.
        elif user or kind in _ATTRIBUTES_ONLY or _has_fields(v):
            held = next((_HELD_VALUES[k] for k in kind.__mro__ if k in _HELD_VALUES), None)
            if held is not None:
                self._encode(held(v), out, budget, label, owner)
            self._state(v, out, budget, label, owner)
        elif (hint := _type_hint(v)) is not None:
            self._encode(hint, out, budget, label, owner)
        elif place_of_class(kind) is Place.TOOL and hasattr(kind, _OWN_STATE):
            self._encode(getattr(kind, _OWN_STATE)(v), out, budget, label, owner)
        elif _wrapped(v) is not None:  # a library's decorator object (functools.lru_cache)
            self._encode(_wrapped(v), out, budget, label, owner)
        elif isinstance(v, functools.cached_property | functools.partialmethod):
            self._encode(v.func, out, budget, label, owner)
        else:
            out += b"<opaque>"
            self.unseen[f"{display(label)}: a {display(class_key(kind))} object"] = None
            # Its state cannot be seen, but the user's code it holds (a jit-compiled or
            # otherwise wrapped function) can, and counts.
            out += self.references(_attributes(v), label, owner)

    def references(self, values: Iterable[Any], label: str, owner: Any) -> bytes:
        """Only the user's functions and classes among ``values``, as references."""
        out = bytearray()
        found = list(values)
        # One level into mappings: a singledispatch function's registry, say.
        found += [v for m in found if isinstance(m, Mapping) for v in list(m.values())]
        for value in found:
            code = value.__func__ if isinstance(value, MethodType) else value
            if isinstance(code, FunctionType):
                user = place_of_function(code) is Place.USER
            else:
                user = isinstance(code, type) and place_of_class(code) is Place.USER
            if user:
                out += self.value(value, label, owner)
        return bytes(out)

    def _as_data(
        self,
        v: Any,
        data: Callable[[Any], Any],
        out: bytearray,
        budget: _Budget,
        label: str,
        owner: Any,
    ) -> None:
        if id(v) in budget.active:  # a deque that holds itself
            out += b"<cycle>"
            return
        budget.active.add(id(v))
        try:
            self._encode(data(v), out, budget, label, owner)
        finally:
            budget.active.discard(id(v))

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


def _builtin_copy(value: Any) -> Any:
    """A dict, list, tuple or set subclass's items as the built-in type (encoded as such)."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, tuple):
        return tuple(value)
    if isinstance(value, list):
        return list(value)
    return frozenset(value)


def _type_hint(value: Any) -> Any:
    """A type hint (``list[str]``, ``Optional[Doc]``, ``Literal["a", "b"]``, ``str | None``, a
    ``TypeVar``, a ``NewType``) as what it is made of, its classes as references; None for
    another object."""
    if isinstance(value, _SPECIAL_FORM):  # ``typing.Union``, ``Literal``: one object each
        return repr(value)
    if isinstance(value, typing.TypeVar):
        return (
            value.__name__,
            value.__bound__,
            value.__constraints__,
            value.__covariant__,
            value.__contravariant__,
        )
    if isinstance(value, typing.ForwardRef):
        return value.__forward_arg__
    if isinstance(value, typing.NewType):  # ``UserId = NewType("UserId", int)``
        return value.__name__, value.__supertype__
    origin = typing.get_origin(value)
    return None if origin is None else (origin, typing.get_args(value))


def _has_fields(value: Any) -> bool:
    """A dataclass or pydantic model instance: its state is its fields, whoever defined it."""
    from pydantic import BaseModel

    return dataclasses.is_dataclass(value) or isinstance(value, BaseModel)


def _attributes(value: Any) -> list[Any]:
    """An object's own attribute values, read without running any of its code."""
    try:
        found = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return []
    return list(found.values()) if isinstance(found, dict) else []


def _wrapped(value: Any) -> Any:
    try:
        return inspect.getattr_static(value, "__wrapped__", None)
    except Exception:  # an object whose attribute lookup itself fails
        return None


def class_key(cls: type) -> str:
    return f"{_module_of(cls)}:{cls.__qualname__}"


def display(label: str) -> str:
    return label.replace(":", ".", 1)


def place_of_class(cls: type) -> Place:
    module = _module_of(cls)
    if module == "builtins" or not module:
        # A type without a module (an extension's metatype, whose ``__module__`` is the
        # descriptor it gives its instances) is part of what stands for its instances.
        return Place.STDLIB
    return place_of_name(module)


def _module_of(cls: type) -> str:
    module = getattr(cls, "__module__", None)
    return module if isinstance(module, str) else ""
