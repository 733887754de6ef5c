"""What the engine needs of a system, whichever kind it is."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import hashlib
import importlib
import inspect
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Final, Protocol

from oloproof.dataset import MAX_NESTING, Case
from oloproof.display import printable
from oloproof.errors import ArtifactError, ConfigError, OloproofError
from oloproof.suggest import did_you_mean
from oloproof.usercode import describe, lone_surrogate, message_of, received, user_failed

# The attribute of a case's cancellation that holds what its system last failed on.
_LAST_FAILURE: Final = "_oloproof_last_failure"


def keep_last_failure(cancelled: asyncio.CancelledError, failure: str) -> None:
    """Hold ``failure`` (a failed try the system was retrying past) on ``cancelled``, a case
    being stopped at its timeout: the case's record then says why it was still trying
    (``last_failure``), where it would say only that it took too long."""
    setattr(cancelled, _LAST_FAILURE, failure)


def last_failure(exc: BaseException) -> str | None:
    """What ``keep_last_failure`` held on ``exc`` or on what it came from (``asyncio.timeout``
    raises a TimeoutError from the cancellation), or None."""
    seen: set[int] = set()
    found: BaseException | None = exc
    while found is not None and id(found) not in seen:
        seen.add(id(found))
        failure = getattr(found, _LAST_FAILURE, None)
        if isinstance(failure, str):
            return failure
        found = found.__cause__ or found.__context__
    return None


@dataclass(frozen=True)
class StageRecord:
    """One stage a staged system ran (or took from its cache) for a case."""

    stage: str
    identity: str
    address: str
    hit: bool


@dataclass
class Execution:
    """What one case's execution produced."""

    output: Any
    artifacts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    stages: list[StageRecord] = field(default_factory=list)


class StageCache(Protocol):
    """Stage outputs kept in the ledger, looked up by identity."""

    async def lookup(self, identity: str) -> dict[str, Any] | None:
        """The stored body of the stage with ``identity``, or None (awaited: on a Ray replica
        the answer comes from the driver's ledger)."""

    def record(self, stage: str, identity: str, result: dict[str, Any]) -> str:
        """Store a stage output; return its address."""


@dataclass
class ExecContext:
    """Per-run services and settings the engine hands a system."""

    stage_cache: StageCache
    use_stage_cache: bool = True
    # What the run changes, as recorded (part of every execution's identity).
    intervention: dict[str, Any] | None = None
    # What an intervention replays: recorded retrievals by case id, a reranker function.
    replay: dict[str, Any] = field(default_factory=dict)


class System(Protocol):
    """A system under test: called once per case."""

    kind: str
    # Whether a later run may reuse an execution instead of calling the system again.
    reuses_executions: bool

    def identity(self) -> dict[str, Any]:
        """Name, version, code fingerprint and settings: what makes two executions comparable."""

    def fingerprints(self) -> dict[str, dict[str, Any]]:
        """The recorded parts of each code fingerprint in the identity, by entry point."""

    async def execute(self, case: Case, ctx: ExecContext) -> Execution:
        """Run one case. An exception from user code propagates; the engine records it."""

    async def aclose(self) -> None:
        """Release connections and threads."""


def identity_changes(now: Mapping[str, Any], then: Mapping[str, Any]) -> str:
    """What differs between a system's identity ``now`` and the one a run recorded ``then``,
    for a refusal to say: its parts (``code (generate), top_k``), never their values, which
    may hold what the environment gave a setting. A staged system's code is named by stage."""
    changed = []
    for key in dict.fromkeys([*then, *now]):
        was, is_ = then.get(key), now.get(key)
        if was == is_:
            continue
        if key == "code" and isinstance(was, Mapping) and isinstance(is_, Mapping):
            stages = [s for s in dict.fromkeys([*was, *is_]) if was.get(s) != is_.get(s)]
            changed.append(f"code ({', '.join(stages)})")
        else:
            changed.append(key)
    return ", ".join(changed)


def declared_apart(
    declared: tuple[str, str] | None, name: str, version: str
) -> dict[str, dict[str, str]]:
    """The name and version a decorator declares, when oloproof.yaml gives others: they join
    the system's identity, so that bumping the decorator's version executes every case again
    even while oloproof.yaml's (which is what is recorded as the version) overrides it."""
    if declared is None or declared == (name, version):
        return {}
    return {"declared": {"name": declared[0], "version": declared[1]}}


def load_object(reference: str, *, base_dir: Path, key: str, where: str) -> Any:
    """Import ``module:attr`` with ``base_dir`` on the import path; errors name the config key."""
    module_name, sep, attr = reference.partition(":")
    if not sep or not _dotted(module_name) or not _dotted(attr):
        # A path (`../x:y`, `pkg/mod:f`) is no module name: importlib's own words for it
        # (a relative import needs a package) would send the user looking elsewhere.
        raise ConfigError(
            f"{where}: {key}: expected `module:name`, a module's dotted name as Python imports "
            f"it from the project folder (`rerank` or `pkg.rerank`, not a path) and a name in "
            f"it, found {reference!r}"
        )
    try:
        module = _import_fresh(module_name, base_dir.resolve())
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise ConfigError(
                f"{where}: {key}: no module named {module_name!r} (looked in {base_dir})"
            ) from None
        raise ConfigError(f"{where}: {key}: importing {module_name!r} failed: {exc}") from None
    except BaseException as exc:  # user code failed or exited while importing: report it
        if isinstance(exc, KeyboardInterrupt) and received():
            raise  # a real Ctrl-C during the import
        # Oloproof's own decorators refuse their arguments in a sentence of their own.
        why = str(exc) if isinstance(exc, OloproofError) else describe(exc)
        raise ConfigError(f"{where}: {key}: importing {module_name!r} failed: {why}") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            # The names of the module (or class) where the lookup stopped: a misspelt
            # function is then named, as a misspelt key of a file is.
            names = [n for n in vars(obj) if not n.startswith("_")] if _holds_names(obj) else []
            raise ConfigError(
                f"{where}: {key}: module {module_name!r} has no {attr!r}"
                + did_you_mean(part, names)
            )
        obj = getattr(obj, part)
    return obj


def _holds_names(obj: Any) -> bool:
    """Whether ``obj``'s names can be read without running user code: a module or a class
    (``vars`` of anything else may be a property, or refused)."""
    return isinstance(obj, ModuleType | type)


def load_reranker(reference: str, *, base_dir: Path, key: str, where: str) -> Callable[..., Any]:
    """The reranker function ``reference`` (``module:function``) names, imported as
    ``load_object`` imports; a ``ConfigError`` naming ``key`` when it is not a function."""
    function = load_object(reference, base_dir=base_dir, key=key, where=where)
    if not callable(function):
        raise ConfigError(f"{key}: {reference} is not a function", where=where)
    return function  # type: ignore[no-any-return]


def _dotted(name: str) -> bool:
    return all(part.isidentifier() for part in name.split("."))


# Project folders this process has imported user code from (the Python API may evaluate
# several projects in one process).
_project_dirs: set[Path] = set()


# Libraries Oloproof loads only once a run needs them (scipy to decide the gate, httpx for a
# judge), which import many of Python's standard modules as they load.
_LATER_LIBRARIES: Final = ("numpy", "scipy.special", "scipy.optimize", "httpx")


def _standard_names_in(folder: Path) -> dict[str, str]:
    """The modules and packages of ``folder`` named like a module of Python's standard library
    (``pprint.py``, ``unittest/``), by that name: once ``folder`` is first on the import path,
    Python loads one in the standard module's place for whoever imports the name first."""
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return {}
    found = {}
    for entry in entries:
        if entry.suffix == ".py":
            name = entry.stem
        elif (entry / "__init__.py").is_file():
            name = entry.name
        else:  # a folder without one is found only where no module of its name is
            continue
        if name in sys.stdlib_module_names:
            found[name] = entry.name
    return found


def _keep_standard_modules(folder: Path) -> None:
    """When ``folder`` holds modules named like standard ones, load ``_LATER_LIBRARIES`` while
    the import path is still Python's own, so that they get the standard modules; and say
    which of the folder's files an ``import`` of their name cannot load, the standard module
    being loaded already (a file the user's code imports by that name would silently not run)."""
    named = _standard_names_in(folder)
    if not named:
        return
    if any(name not in sys.modules for name in named):
        for library in _LATER_LIBRARIES:
            importlib.import_module(library)
    hidden = [file for name, file in named.items() if _loaded_elsewhere(name, folder)]
    if hidden and folder not in _warned:
        _warned.add(folder)
        sys.stderr.write(
            f"warning: {printable(str(folder))}: {', '.join(printable(f) for f in hidden)}: "
            "named like modules of Python's standard library, which are loaded already; an "
            "import of one of these names in your code gets Python's module, not the file "
            "(rename the file to use it)\n"
        )


def _loaded_elsewhere(name: str, folder: Path) -> bool:
    """Whether the module ``name`` is loaded, and not from ``folder``."""
    module = sys.modules.get(name)
    if module is None:
        return False
    origin = getattr(module, "__file__", None)
    return origin is None or not Path(origin).resolve().is_relative_to(folder)


_warned: set[Path] = set()


def _import_fresh(module_name: str, base_dir: Path) -> ModuleType:
    """Import ``module_name`` as ``base_dir`` holds it now, and what it imports as well.

    The Python API may run several projects in one process, and one project again after its
    code was edited. So a module loaded from a project folder (the deepest one that holds its
    file: projects may nest) is dropped before another project's code is imported, and so is
    every module of this project when one of their files changed since they were loaded; and
    ``base_dir`` goes first on the import path. The code that runs is this project's, as its
    files are now. Unchanged, this project's modules are kept: one imported again would run
    its import-time work twice and hold two copies of its classes. One import at a time: two
    threads would move the import path and the loaded modules under each other."""
    with _importing:
        base = str(base_dir)
        _keep_standard_modules(base_dir)
        if base in sys.path:
            sys.path.remove(base)
        sys.path.insert(0, base)
        _project_dirs.add(base_dir)
        _drop_stale_modules(base_dir)
        if _loaded_elsewhere(module_name, base_dir):
            del sys.modules[module_name]
        limit = sys.getrecursionlimit()
        handlers = {signum: signal.getsignal(signum) for signum in _STOPS}
        try:
            return importlib.import_module(module_name)
        finally:
            _give_back_handlers(handlers)
            lowered = sys.getrecursionlimit()
            # Given back first: what follows, and every call oloproof makes around the
            # system's, runs beneath frames of its own that a lowered limit leaves no room for
            # (a traceback from deep inside oloproof, or an error naming no cause).
            sys.setrecursionlimit(max(limit, lowered))
            _loaded_from[base_dir] = _project_files(base_dir)
            if lowered < limit:  # raised here, it takes the place of what the import raised
                raise ConfigError(
                    f"it lowered Python's recursion limit from {limit} to {lowered} "
                    "(sys.setrecursionlimit), which oloproof's own calls around the system's "
                    f"need; leave it at {limit} or more"
                )


# The signals that stop a command, whose handlers the module's import may not keep.
_STOPS = (signal.SIGINT, signal.SIGTERM)


def _give_back_handlers(handlers: Mapping[signal.Signals, Any]) -> None:
    """Put back the handlers of ``_STOPS`` that an import replaced. A system's module that ends
    quietly on SIGTERM (``sys.exit(0)``, as servers do) would otherwise act outside the run's
    event loop, which handles both while cases run: in Oloproof's own code as it writes the
    reports, turning a failed gate and the interruption into exit 0."""
    for signum, handler in handlers.items():
        if signal.getsignal(signum) is not handler and handler is not None:
            # Changed, so this is the main thread: only it can set a handler.
            signal.signal(signum, handler)


@contextlib.contextmanager
def import_path_kept(base_dir: Path) -> Iterator[None]:
    """Give the caller's import path back once the ``with`` block ends (returned or raised):
    ``base_dir``, which ``_import_fresh`` puts first, goes back where it stood, or out when it
    was not there. Left first, it would make the caller's next ``import helper`` the project's
    ``helper.py``. Only that entry: what the project's own code added is its business."""
    folder = str(base_dir.resolve())
    stood = sys.path.index(folder) if folder in sys.path else None
    try:
        yield
    finally:
        with _importing:
            if folder in sys.path and sys.path.index(folder) != stood:
                sys.path.remove(folder)
                if stood is not None:
                    sys.path.insert(stood, folder)


_importing = threading.RLock()
# What each project's loaded modules were read from, as they were after its last import: a
# file whose content differs now was edited since, and the module loaded from it is stale.
_loaded_from: dict[Path, dict[str, bytes]] = {}


@functools.lru_cache(maxsize=8192)
def _resolved(origin: str) -> str:
    # A loaded module's file stays where it is; resolving each anew on every import of a
    # project's code cost a tenth of a second with the libraries a run loads.
    return os.path.realpath(origin)


def _owners() -> dict[str, tuple[str, Path]]:
    """Each loaded module that some project folder owns, by name: its file, and the deepest
    project folder holding it. Source files only: an extension module cannot be loaded twice
    in one process, so it is never dropped."""
    found = {}
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if not isinstance(origin, str) or not origin.endswith(".py"):
            continue
        path = _resolved(origin)
        holding = [d for d in _project_dirs if path.startswith(f"{d}{os.sep}")]
        if holding:
            found[name] = (origin, max(holding, key=lambda d: len(d.parts)))
    return found


def _digests(origins: Iterable[str]) -> dict[str, bytes]:
    """The digest of the content of each of these files."""
    digests = {}
    for origin in origins:
        try:
            digests[origin] = hashlib.blake2b(Path(origin).read_bytes()).digest()
        except OSError:
            digests[origin] = b""  # gone or unreadable: stale, whatever it held
    return digests


def _project_files(base_dir: Path) -> dict[str, bytes]:
    """The digest of the content of each file this project's loaded modules came from."""
    return _digests(origin for origin, owner in _owners().values() if owner == base_dir)


def _drop_stale_modules(base_dir: Path) -> None:
    """Drop the modules other projects own, and this project's when one of their files has
    changed since they were loaded (all of them: an unchanged module may hold what it took
    from a changed one, ``from helper import rule``)."""
    seen = _loaded_from.get(base_dir, {})
    owners = _owners()
    mine = [origin for origin, owner in owners.values() if owner == base_dir]
    # A module loaded since the last import (at run time, by name) is judged from its next.
    stale = any(
        origin in seen and seen[origin] != digest for origin, digest in _digests(mine).items()
    )
    for name, (_, owner) in owners.items():
        if owner != base_dir or stale:
            del sys.modules[name]


class UnrecordableOutput(ValueError):
    """An output that nests deeper than ``MAX_NESTING`` levels, contains itself, holds a
    mapping two of whose keys are one text (``1`` and ``"1"``), or holds an object with no text
    of its content (see ``plain_output``)."""


# How CPython writes an object that has no text of its own, and what generators, coroutines,
# functions and locks write: "<... at 0x7f3a...>", the object's place in memory, followed by
# ">" or by more of the object's state ("<Future at 0x7f3a... state=finished ...>").
_MEMORY_ADDRESS: Final = re.compile(r" at 0x[0-9a-fA-F]{6,}\b")
_PLAIN: Final = frozenset({str, int, float, bool})


def plain_output(value: Any) -> Any:
    """An output as plain JSON-like data: subclasses of text and numbers their base values,
    tuples lists, other mappings dicts, pydantic models their JSON dump, dataclass and attrs
    instances their fields, NumPy values and arrays their ``tolist()``, sets their ``repr``
    with the members in order, other objects their ``repr`` (a mapping's other keys their
    ``str``).

    Raises ``UnrecordableOutput`` saying where, when it nests deeper than ``MAX_NESTING``
    levels or contains itself (which would nest for ever); saying which keys, when two keys
    of one mapping are the same text (one value would silently replace the other); and saying
    which object, when an object's text cannot be made or shows a memory address: such a text
    says where the object was, not what it held, differs on every run, and would be judged as
    the answer (a coroutine never awaited, a generator, an instance of a class without a
    ``__repr__``).
    """
    try:
        return _plain(value, 0)
    except _TooDeep:
        raise UnrecordableOutput(_why_too_deep(value, ("output",), frozenset())) from None
    except _NoText as found:
        if inspect.iscoroutine(found.value):
            found.value.close()  # never to run: Python would warn it was never awaited
        where = _place_of(value, found.value, ("output",), 0) or "a value in the output"
        raise UnrecordableOutput(
            f"{where} is a value of type {type(found.value).__name__}, {found.why}"
        ) from None


def case_output(case: Case, output: Any) -> Any:
    """``plain_output`` of one case's output; one that cannot be made plain stops the run."""
    try:
        return plain_output(output)
    except UnrecordableOutput as exc:
        raise unrecordable(case, exc) from None


def unrecordable(case: Case, why: Exception) -> ArtifactError:
    """What stops the run on an output of ``case`` the ledger cannot record."""
    return ArtifactError(f"case {case.id!r}: the output cannot be recorded: {why}")


class _TooDeep(Exception):
    pass


class _NoText(Exception):
    def __init__(self, value: Any, why: str) -> None:
        super().__init__(why)
        self.value = value
        self.why = why


def _plain(value: Any, depth: int, turns: int = 0) -> Any:
    """``value`` as plain data; ``turns``: how many conversions in a row made it (a model's
    dump, an array's list), each of which may give back another object to convert."""
    if type(value) is dict:
        if depth >= MAX_NESTING:
            raise _TooDeep
        plain: dict[str, Any] = {}
        keys: dict[str, Any] = {}  # the key each text was written from
        for k, v in value.items():
            text = _whole(k) if type(k) is str else _text(k, str)
            other = keys.setdefault(text, k)
            if other is not k:  # two keys written as one text: a value would be lost
                raise UnrecordableOutput(_same_text(other, k))
            plain[text] = _plain(v, depth + 1)
        return plain
    if isinstance(value, list | tuple):
        if depth >= MAX_NESTING:
            raise _TooDeep
        items = value
        if type(value) not in (list, tuple):  # a subclass's __iter__ is code of its own
            items = _made(value, lambda: list(value), "items could not be read")
        return [_plain(v, depth + 1) for v in items]
    if isinstance(value, str):  # a str of the project's own (an enum's member) too
        return _base(_whole(value))
    if value is None or type(value) in _PLAIN:
        return value
    if isinstance(value, int | float):  # an enum's member, NumPy's float64, an int of the
        return _base(value)  # project's own: its base value, as the ledger stores it
    if isinstance(value, Mapping):
        # Not a dict: a configuration library's, a proxy, or a dict's subclass, whose items()
        # may be code of its own that fails or gives no pairs.
        return _plain(_made(value, lambda: dict(value.items()), "items could not be read"), depth)
    dump = _method(value, "model_dump")
    if dump is not None:
        made = _made(value, lambda: dump(mode="json"), "fields JSON cannot hold")
        return _again(value, made, "model_dump()", depth, turns)
    names = _field_names(value)
    if names is not None:
        # Its fields, as a model's: read whole as its text, `contains` judged field names and
        # other fields as the answer, and a set in it was written in the hash seed's order.
        return _plain(
            _made(value, lambda: {n: getattr(value, n) for n in names}, "fields could not be read"),
            depth,
        )
    # A NumPy value or array (or a tensor): the numbers it holds, not its text.
    has_dtype = _method(value, "dtype", callable_=False) is not None
    values = _method(value, "tolist") if has_dtype else None
    if values is not None:
        return _again(
            value, _made(value, values, "values could not be read"), "tolist()", depth, turns
        )
    if isinstance(value, set | frozenset):
        return _set_text(value)
    return _text(value, repr)


def _again(value: Any, made: Any, how: str, depth: int, turns: int) -> Any:
    """``_plain`` of what ``how`` made of ``value``: user code, which may give back an object
    to convert again (a ``tolist()`` that returns its own array) for ever, so after
    ``MAX_NESTING`` conversions in a row the object is refused rather than walked until
    Python's recursion limit ends the run."""
    if turns >= MAX_NESTING:
        raise _NoText(
            value,
            f"whose {how} gave back an object to convert again {MAX_NESTING} times in a row, "
            "never plain data",
        )
    return _plain(made, depth, turns + 1)


def _whole(text: str) -> str:
    """``text``, unless it holds a lone surrogate, which the ledger could not store: refused
    here, where it is known where it sits, rather than by the encoder."""
    wrong = lone_surrogate(text)
    if wrong is not None:
        raise _NoText(text, f"which {wrong}")
    return text


def _field_names(value: Any) -> list[str] | None:
    """The fields of a dataclass's or an attrs class's instance, by name; ``None`` for any
    other value."""
    if isinstance(value, type):
        return None
    if is_dataclass(value):
        return [f.name for f in fields(value)]
    declared = _method(type(value), "__attrs_attrs__", callable_=False)
    if isinstance(declared, tuple):
        return [attribute.name for attribute in declared]
    return None


def _set_text(value: set[Any] | frozenset[Any]) -> str:
    """A set's text with its members in order: its ``repr`` follows the process's hash seed, so
    the same set would be another text, and another execution address, in every process."""
    try:
        members = sorted(value)
    except BaseException as exc:  # members that do not compare (their own __lt__ may raise
        if not user_failed(exc):  # anything, sys.exit too):
            raise
        members = sorted(value, key=_repr)  # in the order of their text
    inside = ", ".join(map(_repr, members))
    if type(value) is set:
        return f"{{{inside}}}" if value else "set()"
    return f"{type(value).__name__}({{{inside}}})" if value else f"{type(value).__name__}()"


def _base(value: str | int | float) -> str | int | float:
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__index__(value)
    return float.__float__(value)


def _repr(member: Any) -> str:
    # Text and numbers are written as Python writes them, whatever the text says.
    return repr(member) if type(member) in _PLAIN else _text(member, repr)


def _method(value: Any, name: str, *, callable_: bool = True) -> Any:
    """``value``'s attribute ``name`` (``None`` when it has none, or it is not callable, or
    looking it up fails: ``__getattr__`` is user code)."""
    try:
        found = getattr(value, name, None)
    except BaseException as exc:
        if not user_failed(exc):
            raise
        return None
    return found if not callable_ or callable(found) else None


def _made(value: Any, make: Callable[[], Any], what: str) -> Any:
    try:
        return make()
    except BaseException as exc:  # user code (sys.exit too), or a library's refusal of it
        if not user_failed(exc):
            raise
        raise _NoText(value, f"whose {what}: {describe(exc)}") from None


def _text(value: Any, write: Callable[[Any], str]) -> str:
    """``write(value)`` (``repr``, or ``str`` for a key), unless it fails or shows where the
    object sits in memory (``_NoText``)."""
    if isinstance(value, bytes | bytearray):  # its text is its content, whatever that says
        return write(value)
    if isinstance(value, asyncio.Future | concurrent.futures.Future):
        # Its text says whether it is done and, maybe, what it returned: never the answer.
        raise _NoText(
            value,
            "an answer not yet collected: return its result (await it, or call .result())",
        )
    try:
        text = write(value)
    except BaseException as exc:  # user code: its own __repr__ (sys.exit too)
        if not user_failed(exc):
            raise
        raise _NoText(value, f"whose text could not be made: {describe(exc)}") from None
    if not isinstance(text, str):
        return text
    wrong = lone_surrogate(text)
    if wrong is not None:
        raise _NoText(value, f"whose text {wrong}")
    if _MEMORY_ADDRESS.search(text) is None:
        return text
    hint = " (await it)" if inspect.iscoroutine(value) else ""
    raise _NoText(
        value,
        "whose text shows where it sits in memory, which changes from run to run (a judge "
        f"would read the address); return what it holds as plain data{hint}",
    )


def _place_of(value: Any, target: Any, path: tuple[str, ...], depth: int) -> str | None:
    """Where ``target`` sits in ``value``: ``output.a.0``, or ``a key of output.a``."""
    if value is target:
        return _shown(path)
    if depth >= MAX_NESTING:
        return None
    for key, item in _children(value):
        if key is target:
            return f"a key of {_shown(path)}"
        found = _place_of(item, target, (*path, str(key)), depth + 1)
        if found:
            return found
    return None


def _children(value: Any) -> list[tuple[Any, Any]]:
    """(key or position, item) of each item of a mapping, list or tuple; none of anything else,
    or of one whose own code fails (it failed on ``_plain``'s walk too)."""
    if not isinstance(value, list | tuple | Mapping):
        return []
    try:
        if isinstance(value, list | tuple):
            return list(enumerate(value))
        return [(key, item) for key, item in value.items()]
    except BaseException as exc:
        if not user_failed(exc):
            raise
        return []


def _same_text(other: Any, key: Any) -> str:
    # Their repr is user code too, which may fail as Python's tracebacks say it did.
    return (
        f"two keys of one mapping in it are the same text once written as text, "
        f"{message_of(other, repr)} and {message_of(key, repr)}: one of their values would be lost"
    )


def _why_too_deep(value: Any, path: tuple[str, ...], holding: frozenset[int]) -> str:
    """Where an output that ``_plain`` found too deep goes wrong ("" below where it does not)."""
    if not isinstance(value, Mapping | list | tuple):
        return ""
    if id(value) in holding:
        return f"it contains itself (at {_shown(path)})"
    if len(holding) >= MAX_NESTING:
        return f"it is nested deeper than {MAX_NESTING} levels (at {_shown(path)})"
    for key, item in _children(value):
        found = _why_too_deep(item, (*path, str(key)), holding | {id(value)})
        if found:
            return found
    return ""


def _shown(path: tuple[str, ...]) -> str:
    return ".".join(path) if len(path) <= 6 else ".".join(path[:6]) + "…"
