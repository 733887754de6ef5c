"""The walk behind a fingerprint: from an entry point through the user's code it reaches.

Each function reached contributes its code object (bytecode, constants, names, nested code such
as lambdas and inner functions, the exception table; never line numbers, so an edit elsewhere in
its file does not touch it), its default values, the values its closure captured and what it
wraps (``__wrapped__``). The names its code uses are then resolved, conservatively: any name
that is a global of its module is followed, whether the code reads it as a global or as an
attribute of something else; an attribute of an imported user module (``helper.f``) is followed
when the code names it; a method reached through the entry class resolves every name it uses
against that class's whole MRO (so ``self.x``, ``type(self).x`` and ``super().x`` are all
covered); an import inside a function is followed to the module it loads. Code that looks
names up by a string it makes (``getattr``, ``globals()``, ``vars``) takes every name of the
user's modules it holds, and of its class. Once the functions are walked, the statements each
user module reached runs at import (``oloproof.fingerprint._toplevel``) are read, and what they
name is walked in turn.

What cannot be seen but can be named is listed for the report: the shared objects behind a
library module's methods (``random.random``), the clock read through the time module.

The values it reads (module-level names, class attributes, defaults, captured cells) are
encoded by ``oloproof.fingerprint._values``.
"""

from __future__ import annotations

import dataclasses
import dis
import importlib.util
import inspect
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import BuiltinFunctionType, CodeType, FunctionType, MethodType, ModuleType
from typing import Any

from blake3 import blake3

from oloproof.fingerprint._annotations import field_annotation_names
from oloproof.fingerprint._imports import IMPORTERS, source_of
from oloproof.fingerprint._places import (
    Place,
    file_of_module,
    installed,
    place_of_file,
    place_of_function,
    place_of_module,
    place_of_name,
)
from oloproof.fingerprint._toplevel import top_level
from oloproof.fingerprint._values import (
    Values,
    class_key,
    is_reference,
    names_another,
    place_of_class,
)
from oloproof.usercode import recordable

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
# Class attributes that are bookkeeping, or derived from the source the class walk hashes;
# ``_abc_impl`` is ``ABCMeta``'s record of its subclasses (of every ``abc.ABC`` and pydantic
# model), made from the classes and the ``register`` calls the walk reads on their own.
_NOISE = frozenset(
    {"__dict__", "__weakref__", "__module__", "__qualname__", "__doc__", "_abc_impl"}
)
_IMPORT_NAME = dis.opmap["IMPORT_NAME"]
_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR", "LOAD_METHOD"})
_PLAIN_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_DEREF", "LOAD_CONST"})
_CALLS = frozenset({"PRECALL", "CALL", "KW_NAMES"})
_SKIPPED = frozenset({"CACHE", "PUSH_NULL"})
_COMPUTED = (
    "a module imported by a name made while the code runs (importlib.import_module or __import__)"
)
# A module's own paths, which name the folder it was loaded from.
_OWN_PATHS = frozenset({"__file__", "__cached__"})
# What looks a name up by a string the code makes while it runs: ``getattr(handlers, name)``,
# ``globals()[name]``, ``vars(module)[name]``, ``handlers.__dict__[name]``,
# ``inspect.getmembers(handlers)``, ``operator.attrgetter(name)``.
_BY_NAME = frozenset(
    {"getattr", "globals", "vars", "__dict__", "getmembers", "attrgetter", "methodcaller"}
)
_OWN_NAMESPACE = frozenset({"globals", "vars", "modules"})
# What reads the clock, found by what it is (``from time import time``) or, for a name the
# time module shares with itself, by the attribute the code loads (``time.time()``).
_CLOCKS: dict[Any, str] = {time.time: "time", time.time_ns: "time_ns"}
_ATTRIBUTE_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})
_LIBRARIES = frozenset({Place.STDLIB, Place.INSTALLED})


class Walk(Values):
    """One fingerprint's walk. ``run()`` drains the queue of functions and classes to visit."""

    def __init__(self, base_dir: Path) -> None:
        self.base_dir = base_dir.resolve()
        self._base = str(self.base_dir)
        self._labels: dict[str, str] = {}
        self.code: dict[str, tuple[str, str, str]] = {}  # key -> (kind, file, digest)
        self.constants: dict[str, tuple[str, str]] = {}  # key -> (file, digest)
        self.dists: dict[str, str] = {}
        self.stdlib: set[str] = set()  # the standard library's top-level modules it reaches
        self.tools: set[str] = set()  # Oloproof's own modules the code reaches
        self.dist_files: dict[str, str] = {}  # distribution -> digest of its installed files
        self.dist_edited: dict[str, tuple[str, ...]] = {}  # distribution -> files edited in place
        self.unseen: dict[str, None] = {}
        self.clock: dict[str, None] = {}  # the names by which the code reads the clock
        # Every name the user code reached uses: globals, and the attributes it reads by name.
        self.names: set[str] = set()
        # The user's functions it walked, for a caller to read what their code does.
        self.functions: list[FunctionType] = []
        self._queue: deque[Callable[[], None]] = deque()
        self._scheduled: set[tuple[int, int]] = set()
        self._done: set[tuple[str, str, int]] = set()
        self._keep: list[Any] = []  # keeps what was scheduled alive, so ids stay unique
        self._top_done: set[str] = set()  # modules whose top-level statements were read
        self._whole: set[str] = set()  # user modules counted by their whole file
        self._classes: list[type] = []  # the user's classes reached, for ``__subclasses__``

    def run(self) -> None:
        while True:
            while self._queue:
                self._queue.popleft()()
            # Either may reach more code, to walk in turn.
            if not self._top_levels() and not self._subclasses():
                return

    # --- entry points ----------------------------------------------------------------------

    def method_entry(self, cls: type, name: str) -> bytes:
        """A method called on ``cls``: the class's MRO by name, and what the method reads."""
        material = bytearray(b"method:" + name.encode())
        for klass in cls.__mro__:
            material += b"|" + class_key(klass).encode()
            place = place_of_class(klass)
            if place is not Place.USER:
                self.stand_for(klass.__module__, place)
            else:
                self._classes.append(klass)
        if type(cls) is not type:
            material += self.class_reference(type(cls))
        for attribute in (name, *LIFECYCLE):
            self.attribute(cls, attribute)
        material += self._declared_fields(cls, owner=cls)
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
            self.stand_for(_defined_in(fn), place)
            # A library's decorator around the user's function (functools.singledispatch,
            # a retry wrapper): the user's code it holds still counts.
            cells = [c.cell_contents for c in fn.__closure__ or () if _filled(c)]
            self.references([*cells, *vars(fn).values()], f"{fn.__qualname__}", owner)
            return
        self.functions.append(fn)
        digest = blake3()
        names: dict[str, None] = {}
        imports: list[tuple[str, int, tuple[str, ...]]] = []
        _hash_code(fn.__code__, digest, names, imports)
        self.names.update(names)
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
        libraries: list[tuple[str, ModuleType]] = []
        for name in names:
            if name in namespace:
                value = namespace[name]
                self.global_value(module, name, value, names)
                if isinstance(value, ModuleType) and _shares_state(value, names):
                    libraries.append((name, value))
            if owner is not None:
                self.attribute(owner, name)
        if libraries:
            self._shared_state(fn.__code__, libraries)
        held = [namespace.get(name) for name in names]  # what each name holds, for both
        every_module = _reads_sys_modules(held, names)
        if every_module or not _BY_NAME.isdisjoint(names):
            self._looked_up_by_name(held, module, owner, names, every_module)
        if "time" in names or "time_ns" in names:
            self._clock(fn.__code__, namespace, names)
        package = namespace.get("__package__")
        for name, level, fromlist in imports:
            if not name and not level:
                self.unseen[_COMPUTED] = None
                continue
            package_name = package if isinstance(package, str) else None
            self.imported(name, level, package_name, fromlist, names)

    def class_reference(self, cls: type) -> bytes:
        place = place_of_class(cls)
        if place is Place.USER:
            self._schedule(cls, None, lambda: self._whole_class(cls))
        else:
            self.stand_for(cls.__module__, place)
        return b"C" + class_key(cls).encode()

    def _whole_class(self, cls: type) -> None:
        """A class the code uses (not the entry class): its source, bases and every member."""
        key = class_key(cls)
        self._classes.append(cls)
        digest = blake3()
        try:
            source: str | None = inspect.getsource(cls)
        except Exception:  # defined in a notebook or at run time; a file that no longer parses
            source = None
        digest.update(b"<no source>" if source is None else source.encode())
        for base in cls.__bases__:
            digest.update(self.class_reference(base))
        if type(cls) is not type:
            digest.update(self.class_reference(type(cls)))
        for name, attr in list(vars(cls).items()):
            if name in _NOISE or (_is_dunder(name) and not is_reference(attr)):
                continue
            digest.update(name.encode() + self.value(attr, f"{key}.{name}", cls))
        digest.update(self._declared_fields(cls, owner=cls))
        self._record_code(key, "c", self.file_label(file_of_module(cls.__module__), None), digest)
        if source is not None:
            self._annotated(cls, source)

    def _annotated(self, cls: type, source: str) -> None:
        """The module-level names the class's field annotations use (``mode: Mode``, ``docs:
        list[Doc]``, ``"Doc"``; see ``oloproof.fingerprint._annotations``), followed as the
        globals a function reads are: a pydantic model validates against its annotations, so an
        alias edited to ``Literal["a", "c"]`` changes what the class accepts, though its source
        does not change. A name an import from a library binds (``Optional``, ``PositiveInt``,
        ``np``) is left out, as it was before: following it would change the key of every
        class annotated with library types, for nothing the user's code holds."""
        names = field_annotation_names(source)
        module = sys.modules.get(cls.__module__)
        if not names or module is None:
            return
        filename = file_of_module(cls.__module__)
        bound = source_of(filename, cls.__module__).bound if filename is not None else ()
        namespace = vars(module)
        for name in names:
            if name in namespace and not _from_library(name, namespace[name], bound):
                self.global_value(cls.__module__, name, namespace[name], names)

    def _declared_fields(self, cls: type, owner: type | None) -> bytes:
        """The defaults of a dataclass's or a pydantic model's fields, which its instances
        start from (a pydantic model keeps them out of its class's attributes)."""
        material = bytearray()
        for name, default, factory in _fields(cls):
            material += name.encode()
            material += self.value(default, f"{cls.__qualname__}.{name}", owner)
            material += self.value(factory, f"{cls.__qualname__}.{name}", owner)
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
        label = f"{module}:{name}"
        if value is sys.modules:  # ``from sys import modules``: read as the lookups it makes
            return
        if isinstance(value, ModuleType):
            self.module_attributes(value, names)
            if names_another(label, value):  # ``import json as codec``: which module it holds
                file = self.file_label(file_of_module(module), module)
                self.constant(label, file, b"M" + value.__name__.encode())
            return
        if name in _OWN_PATHS and isinstance(value, str):
            # Where the module's file is, named as the fingerprint names files: a copy of the
            # project in another folder (another checkout, a Ray worker) is the same code.
            where = self.file_label(value, None).encode()
            self.constant(label, self.file_label(file_of_module(module), module), where)
            return
        material = self.value(value, label, None)
        if not is_reference(value) or names_another(label, value):
            self.constant(label, self.file_label(file_of_module(module), module), material)
        own = _library_name(value)
        if own is not None:  # ``from numpy import load as np_load``: it reads what ``load`` does
            self.names.add(own)

    def module_attributes(self, module: ModuleType, names: Iterable[str]) -> None:
        """``module.name`` for every name the code uses that the module has."""
        place = place_of_module(module, module.__name__)
        namespace = vars(module)
        if place is not Place.USER:
            self.stand_for(module.__name__, place)
            # The user's code put into a library module (a patched function) still counts.
            used = [namespace[name] for name in list(names) if name in namespace]
            self.references(used, module.__name__, None)
            return
        for name in list(names):
            if name in namespace:
                self.global_value(module.__name__, name, namespace[name], names)
        if "__getattr__" in namespace:  # a module's __getattr__ makes the names it lacks
            self.global_value(module.__name__, "__getattr__", namespace["__getattr__"], names)

    def attribute(self, owner: type, name: str) -> None:
        """Every definition of ``name`` along ``owner``'s MRO (``self.name``, ``super().name``)."""
        for klass in owner.__mro__:
            if name not in vars(klass):
                continue
            place = place_of_class(klass)
            if place is not Place.USER:
                self.stand_for(klass.__module__, place)
                continue
            token = (class_key(klass), name, id(owner))
            if token in self._done:
                continue
            self._done.add(token)
            attr = vars(klass)[name]
            label = f"{class_key(klass)}.{name}"
            material = self.value(attr, label, owner)
            if not is_reference(attr) or names_another(label, attr):
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
                self.module_value(module)
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
        """A user module counted whole: its file, and each module its source may import (one
        not loaded yet runs that source when the code imports it, its imports included); the
        names its source uses join those the walked code uses."""
        if module in self._whole:
            return
        self._whole.add(module)
        try:
            digest = blake3(Path(filename).read_bytes())
        except OSError:
            digest = blake3(b"<unreadable>")
        self._record_code(f"{module}:", "m", self.file_label(filename, None), digest)
        source = source_of(filename, module)
        self.names.update(source.names)
        if source.computed:
            self.unseen[_COMPUTED] = None
        for name in source.imports:
            self._import_target(name, quiet=True)

    def module_value(self, module: ModuleType) -> None:
        # A module held as data (in a dict, say): what of it is used cannot be told, so a user
        # module counts whole, with every name it holds (the code of what it imported from
        # other modules, the values it computed when imported).
        place = place_of_module(module, module.__name__)
        filename = getattr(module, "__file__", None)
        if place is Place.USER and isinstance(filename, str):
            self._module_file(module.__name__, filename)
            self.module_attributes(module, [n for n in list(vars(module)) if not _is_dunder(n)])
        else:
            self.stand_for(module.__name__, place)

    def stand_for(self, module: str, place: Place) -> None:
        """Code outside the user's: a distribution's version (the stdlib: Python's)."""
        if place is Place.STDLIB or not module:
            self.stdlib.add(module.partition(".")[0])
            return
        if place is Place.USER:  # user code without Python source (a compiled extension)
            filename = file_of_module(module)
            if filename is not None:
                self._module_file(module, filename)
            return
        if place is Place.TOOL:
            self.tools.add(module)
        found = installed(module)
        self.dists[found.name] = found.version
        if found.files is not None:
            self.dist_files[found.name] = found.files
        if found.edited:
            self.dist_edited[found.name] = found.edited

    def constant(self, label: str, file: str, material: bytes) -> None:
        self.constants[label] = (file, blake3(material).hexdigest()[:DIGEST])

    def file_label(self, filename: str | None, module: str | None) -> str:
        """A file as the fingerprint names it: relative to the project folder when inside it.

        A name Python could not decode (bytes that are not UTF-8, read as lone surrogates) is
        written with its escapes (``sys\\udcff.py``): the ledger stores only text, and the run
        would otherwise stop on the name, saying neither which file nor why.
        """
        if filename is None or filename.startswith("<"):
            filename = file_of_module(module) if module else None
            if filename is None:
                return "<no file>"
        label = self._labels.get(filename)
        if label is None:
            path = os.path.realpath(filename)
            label = recordable(self.in_project(path) or path)
            self._labels[filename] = label
        return label

    # --- names looked up while the code runs, and what the modules do when imported --------

    def _looked_up_by_name(
        self,
        held: list[Any],
        module: str,
        owner: type | None,
        names: Iterable[str],
        every_module: bool,
    ) -> None:
        """Code that may look a name up by a string it makes (``getattr(handlers, name)``,
        ``globals()[name]``, ``getattr(self, name)``): every name of the user's modules it holds
        counts (of its own module's too, when it uses ``globals``, ``vars`` or ``sys.modules``;
        of every one loaded, with ``every_module``: ``sys.modules["plugins"]``) and, for a
        method, every attribute of its class. ``held``: what each of ``names`` holds in the
        code's module."""
        modules = [m for m in held if isinstance(m, ModuleType)]
        own = sys.modules.get(module)
        if own is not None and not _OWN_NAMESPACE.isdisjoint(names):
            modules.append(own)  # ``globals()[name]``, ``getattr(sys.modules[__name__], name)``
        if every_module:  # the user's modules are those loaded from a file (not a script)
            loaded = [m for n, m in list(sys.modules.items()) if n != "__main__"]
            modules += [m for m in loaded if _is_module(m) and isinstance(_file(m), str)]
        for value in modules:
            if place_of_module(value, value.__name__) is Place.USER:
                everything = [n for n in list(vars(value)) if not _is_dunder(n)]
                self.module_attributes(value, everything)
        if owner is not None:
            for klass in owner.__mro__:
                if place_of_class(klass) is Place.USER:
                    for name in list(vars(klass)):
                        if not _is_dunder(name):
                            self.attribute(owner, name)

    def _shared_state(self, code: CodeType, libraries: list[tuple[str, ModuleType]]) -> None:
        """Methods of one object a library module shares with the whole process, which the code
        calls through the module (``random.random()``, ``numpy.random.randint()``): the state of
        that object (its seed, wherever it was set) is listed as unseen. Read from the
        bytecode, as the module's name and the method's may be one (``RNG.random()`` with
        ``random`` imported calls no method of the module)."""
        for name, library in libraries:
            for chain in _attribute_chains(code, name):
                holder: Any = library
                for step, attribute in enumerate(chain):
                    value = _module_attribute(holder, attribute)
                    if _bound_to_an_object(value):
                        label = ".".join((library.__name__, *chain[: step + 1]))
                        self.value(value, label, None)
                        break
                    holder = value

    def _clock(self, code: CodeType, namespace: dict[str, Any], names: Iterable[str]) -> None:
        """Whether the code reads the time of day through the time module (``time.time()``, or
        ``time`` imported from it): its name is one the module shares with itself, so the
        attribute loads tell."""
        for name in names:
            value = namespace.get(name)
            try:
                clock = _CLOCKS.get(value)
            except TypeError:  # an unhashable value
                clock = None
            if clock is not None:
                self.clock[f"time.{clock}"] = None
            elif value is time:
                for attribute in _CLOCKS.values():
                    if _loads_attribute(code, (attribute,)):
                        self.clock[f"time.{attribute}"] = None

    def _subclasses(self) -> bool:
        """Once the code uses ``__subclasses__`` (``for cls in Base.__subclasses__()``), the
        subclasses of each of the user's classes reached, which it may call though it never
        names them (a plugin module imported for its classes alone). Whether any was new."""
        if "__subclasses__" not in self.names:
            return False
        waiting = len(self._queue)
        for cls in list(self._classes):
            subclasses: list[type] = type.__subclasses__(cls)  # not the class's override
            for subclass in subclasses:
                self.class_reference(subclass)
        return len(self._queue) > waiting

    def _top_levels(self) -> bool:
        """The statements run at import (``oloproof.fingerprint._toplevel``) of each user module
        the walk reached, of the packages above them and of the user modules they import (a
        module imported only for what it does, ``import seeding``). Whether there were any new
        modules to read."""
        # Sorted: the walk's order (which numbers two functions of one name) never depends on
        # the process's hash seed.
        pending = sorted({key.partition(":")[0] for key in (*self.code, *self.constants)})
        new = False
        while pending:
            name = pending.pop()
            if name in self._top_done:
                continue
            self._top_done.add(name)
            module = sys.modules.get(name)
            if module is None or name == "__main__" or f"{name}:" in self.code:
                continue  # not loaded, a script, or counted whole already
            if place_of_module(module, name) is not Place.USER:
                continue
            new = True
            pending.append(name.rpartition(".")[0])
            imported = [v for v in list(vars(module).values()) if isinstance(v, ModuleType)]
            pending += [v.__name__ for v in imported]
            self._top_level(module)
        return new

    def _top_level(self, module: ModuleType) -> None:
        """A module's acting top-level statements, and the values and code they name."""
        filename = getattr(module, "__file__", None)
        found = top_level(filename) if isinstance(filename, str) else None
        if found is None or not isinstance(filename, str):
            return
        self.names.update(found.names)  # ``os.environ[...]``, ``open(...)``: said as unseen
        namespace = vars(module)
        for name in found.names:
            if name not in namespace or _is_dunder(name):
                continue
            value = namespace[name]
            place = place_of_module(value, value.__name__) if _is_module(value) else Place.USER
            if place is Place.USER:
                self.global_value(module.__name__, name, value, found.names)
            else:  # a library (``dspy.configure``): its version; what is called on it is set
                self.stand_for(value.__name__, place)
        key = f"{module.__name__}:<top level>"
        self._record_code(key, "t", self.file_label(filename, None), blake3(found.dump.encode()))

    # --- values -----------------------------------------------------------------------------


# --- helpers ---------------------------------------------------------------------------------


def _fields(cls: type) -> Iterator[tuple[str, Any, Any]]:
    """Each field of a dataclass or pydantic model: its name, default and default factory, a
    required field's default being ``dataclasses.MISSING`` either way."""
    from pydantic import BaseModel

    if dataclasses.is_dataclass(cls):
        for f in dataclasses.fields(cls):
            yield f.name, f.default, f.default_factory
    elif issubclass(cls, BaseModel):
        for name, info in cls.model_fields.items():
            default = dataclasses.MISSING if info.is_required() else info.default
            yield name, default, info.default_factory


def _from_library(name: str, value: Any, bound: Iterable[tuple[str, str]]) -> bool:
    """Whether a module's import statements (``bound``, as ``Source.bound`` lists them) bind
    ``name`` to what a library module holds: by name, or by a star import of a module holding
    ``value`` under that name (``from typing import *``)."""
    origins = {bound_name: origin for bound_name, origin in bound if bound_name != "*"}
    if name in origins:
        return place_of_name(origins[name]) is not Place.USER
    for star_name, origin in bound:
        star = vars(sys.modules[origin]) if star_name == "*" and origin in sys.modules else {}
        held = name in star and star[name] is value
        if held and place_of_name(origin) is not Place.USER:
            return True
    return False


def _library_name(value: Any) -> str | None:
    """The name a library's function or class was defined with (``numpy.load`` held as
    ``np_load``); None for the user's code, for Oloproof's (its ``system`` decorator is no
    ``os.system``) and for anything not callable."""
    if isinstance(value, ModuleType) or not callable(value):
        return None
    try:
        own, module = getattr(value, "__name__", None), getattr(value, "__module__", None)
    except Exception:  # an object whose attribute lookup itself fails
        return None
    if isinstance(value, FunctionType):
        place = place_of_function(value)
    else:
        place = place_of_name(module) if isinstance(module, str) else Place.USER
    return own if isinstance(own, str) and place in _LIBRARIES else None


def _defined_in(fn: FunctionType) -> str:
    """The module a function's code is defined in: its globals' ``__name__``. A library's
    wrapper made with ``functools.wraps`` carries the ``__module__`` of the user's function it
    wraps, and would stand for that module rather than for its own package."""
    name = fn.__globals__.get("__name__")
    return name if isinstance(name, str) else fn.__module__ or ""


def _filled(cell: Any) -> bool:
    try:
        _ = cell.cell_contents
    except ValueError:  # a cell not yet filled
        return False
    return True


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
    if not IMPORTERS.isdisjoint(code.co_names):
        imports.extend(_imports_by_call(code))
    if _IMPORT_NAME in code.co_code:
        loaded: list[Any] = []
        for instruction in dis.get_instructions(code):
            if instruction.opname == "LOAD_CONST":
                loaded.append(instruction.argval)
            elif instruction.opname == "IMPORT_NAME":
                level = loaded[-2] if len(loaded) >= 2 and isinstance(loaded[-2], int) else 0
                fromlist = loaded[-1] if loaded and isinstance(loaded[-1], tuple) else ()
                imports.append((str(instruction.argval), level, tuple(map(str, fromlist))))


def _imports_by_call(code: CodeType) -> Iterator[tuple[str, int, tuple[str, ...]]]:
    """What ``importlib.import_module("m")`` and ``__import__("m")`` in ``code`` import, as an
    ``import`` statement's (a leading dot is a relative name); ``("", 0, ())`` where the name
    is not written in the code."""
    steps = [(i.opname, i.argval) for i in dis.get_instructions(code) if i.opname not in _SKIPPED]
    for at, (step, value) in enumerate(steps):
        if step in _LOADS and value in IMPORTERS:
            yield _named(steps[at + 1 : at + 4])


def _named(following: list[tuple[str, Any]]) -> tuple[str, int, tuple[str, ...]]:
    """The module an importer's call names, from the steps that follow the importer's load: its
    first argument, when that is text the call is made on as it is (the call comes next, or
    one more argument, a package, loaded as it is and then the call)."""
    ops = [op for op, _ in following] + ["", ""]
    text = following[0][1] if ops[0] == "LOAD_CONST" else None
    called = ops[1] in _CALLS or (ops[1] in _PLAIN_LOADS and ops[2] in _CALLS)
    if not isinstance(text, str) or not text or not called:
        return "", 0, ()
    name = text.lstrip(".")
    return name, len(text) - len(name), ()


def _const(value: Any) -> bytes:
    """A code constant (always plain: numbers, text, bytes, tuples, frozensets, None)."""
    if isinstance(value, tuple):
        return b"(" + b",".join(_const(v) for v in value) + b")"
    if isinstance(value, frozenset):
        return b"<" + b",".join(sorted(_const(v) for v in value)) + b">"
    if isinstance(value, float):
        return b"f" + value.hex().encode()
    return f"{type(value).__name__}:{value!r}".encode("utf-8", "surrogatepass")


def _is_module(value: Any) -> bool:
    return isinstance(value, ModuleType)


def _shares_state(module: ModuleType, names: Iterable[str]) -> bool:
    """Whether a library ``module`` (or a submodule of it) has, among ``names``, a method bound
    to an object: a cheap test before the bytecode is read."""
    if place_of_module(module, module.__name__) is Place.USER:
        return False
    for name in names:
        value = _module_attribute(module, name)
        if _bound_to_an_object(value):
            return True
        inside = isinstance(value, ModuleType) and value.__name__.startswith(f"{module.__name__}.")
        if inside and _shares_state(value, [n for n in names if n != name]):
            return True
    return False


def _module_attribute(holder: Any, name: str) -> Any:
    """``holder.name`` when ``holder`` is a module, read without running its code (a submodule
    loaded but not yet bound in its package, as numpy binds ``numpy.random``, included)."""
    if not isinstance(holder, ModuleType):
        return None
    found = vars(holder).get(name)
    return found if found is not None else sys.modules.get(f"{holder.__name__}.{name}")


def _attribute_chains(code: CodeType, name: str) -> Iterator[tuple[str, ...]]:
    """The attributes the code loads one after another from the global ``name`` (``np.random.
    randint`` gives ``("random", "randint")``), in it and in the code nested in it."""
    chain: list[str] | None = None
    for instruction in dis.get_instructions(code):
        if instruction.opname in _SKIPPED:
            continue
        if chain is not None and instruction.opname in _ATTRIBUTE_LOADS:
            chain.append(str(instruction.argval))
            continue
        if chain:
            yield tuple(chain)
        loads = instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME")
        chain = [] if loads and instruction.argval == name else None
    if chain:
        yield tuple(chain)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _attribute_chains(const, name)


def _bound_to_an_object(value: Any) -> bool:
    """A method bound to an object, not to a module or a class (``random.random``)."""
    if not isinstance(value, MethodType | BuiltinFunctionType):
        return False
    bound = value.__self__
    return bound is not None and not isinstance(bound, ModuleType | type)


def _loads_attribute(code: CodeType, attributes: Iterable[str]) -> bool:
    """Whether ``code`` (or code nested in it) loads one of ``attributes`` as an attribute."""
    wanted = set(attributes)
    if wanted.isdisjoint(code.co_names):
        found = False
    else:
        found = any(
            i.opname in _ATTRIBUTE_LOADS and i.argval in wanted for i in dis.get_instructions(code)
        )
    return found or any(
        _loads_attribute(c, wanted) for c in code.co_consts if isinstance(c, CodeType)
    )


def _file(module: ModuleType) -> Any:
    """A module's ``__file__``, read without running its ``__getattr__``."""
    return vars(module).get("__file__")


def _reads_sys_modules(held: list[Any], names: Iterable[str]) -> bool:
    """Whether code with these ``names``, holding ``held`` in its module, may look a module up
    in ``sys.modules`` (``sys.modules["plugins"]``, ``from sys import modules``)."""
    if any(value is sys.modules for value in held):
        return True
    return "modules" in names and any(value is sys for value in held)


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


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
