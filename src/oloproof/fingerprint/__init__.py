"""Code fingerprints: what the code behind an entry point is, so a cache can tell it changed.

A fingerprint is the *code closure* of one entry point (a function, or a method called on a
given class), computed once per run:

1. the code of the function or method itself, not of the rest of its class;
2. every function, method and class of the user's own code it reaches, transitively: calls and
   other global names, values captured by closures, defaults, attributes of imported user
   modules (``helper.f``), modules imported inside a function (and those their source
   imports), what a decorator wraps (``__wrapped__``), the getter and setter of a property,
   the function of a staticmethod or classmethod, the base classes and metaclass of a class
   it uses (and, once the code uses ``__subclasses__``, the subclasses of each user class
   reached) and the module-level names its field annotations use (``mode: Mode``,
   ``list[Doc]``; ``oloproof.fingerprint._annotations``), the user's functions held by a
   library's objects (a decorator's wrapper, a dispatch registry, a patched library module);
   cycles and recursion are visited once;
3. for a method, the class it is called on (its MRO, by name), every definition along that MRO
   of each name the method's code uses (``self.helper()``, ``self.prompt``, ``super().f()``),
   and what runs on every instance (``__init__``, ``__new__``, ``__post_init__``,
   ``__getattr__``...), because those set the state the method reads;
4. the values of the module-level names and class attributes it reads, when they are plain
   data of at most ``DATA_LIMIT`` bytes (numbers, text, bytes, and containers of them; instances
   of the user's own classes by their attributes), and which module, function or class such a
   name holds when that is not what is defined there under it (``import json as codec``,
   ``from json import dumps``, ``PICK = max``);
5. code that looks names up by a string it makes (``getattr(handlers, name)``,
   ``globals()[name]``, ``handlers.__dict__[name]``, ``sys.modules[name]``, ``getattr(self,
   name)``): every name of the user's modules it holds (and of its own, for ``globals()``/
   ``vars()``; of every one loaded, for ``sys.modules``) and, in a method, every attribute of
   its class;
6. the statements each user module it reaches (and each user module those import) runs when
   imported that act on something else (``random.seed(1)``, ``dspy.configure(lm=lm)``,
   ``Settings.llm = ...``, ``os.environ["K"] = ...``; see ``oloproof.fingerprint._toplevel``);
7. the version of each installed distribution it imports (and Oloproof's own version), the
   digest of the files that distribution installed (its ``RECORD``; a file edited in place
   since, by its content), and the Python version.

The user's own code is everything outside the standard library, the installed packages
(site-packages) and Oloproof; see ``oloproof.fingerprint._places``.

What it cannot see, and what covers it: module state larger than ``DATA_LIMIT`` or held in
objects of library types (a search index, a model client, the ``random.Random`` object behind
``random.random()``: listed in ``unseen``), files, databases and services read at run time,
environment variables, the clock, and files added to an installed package that are not
module files beside those its ``RECORD`` lists. A system's ``version`` (and a staged system's
``index_version``) is part of every identity for that reason: change it when any of those
changes. Where the code it reaches calls what reads files, databases, services, environment
variables or the clock (``open``, ``np.load``, ``glob``, ``sqlite3.connect``, ``requests``,
``os.environ``, ``datetime.now()``...), ``unseen`` says so, by the names it uses.

Being conservative is the rule: a name that might be read is followed, so an edit to something
the entry point never actually calls can still count as a change; a real change is never missed
through anything the walk can see.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FunctionType
from typing import Any, Final

from blake3 import blake3

from oloproof.fingerprint._values import DATA_LIMIT
from oloproof.fingerprint._walk import DIGEST, Walk
from oloproof.usercode import describe, user_failed

__all__ = [
    "DATA_LIMIT",
    "WALK",
    "Fingerprint",
    "changes",
    "earlier_walk",
    "of_callable",
    "of_method",
]

# What the walk reads changes from release to release (what modules run at import, names looked
# up by a string, installed files); each such change counts one up. It is part of every key:
# a key an earlier release made, seeing less, could otherwise equal one made now for code that
# differs only in what it did not see, and a run would reuse that code's answers. Walk 1 (keys
# and records without a mark) is every release before the mark, which read no statement run at
# import. Walk 3 reads which module, function or class an imported name holds (``import json as
# codec``, ``from json import dumps``), and takes a secret in a value as ``[redacted]``, which
# walk 2 read as it was.
WALK: int = 3

# Names whose use says that the code reads what no fingerprint holds, by what they read (and,
# for services, the installed HTTP clients and model SDKs it uses; for any of them, the
# standard-library modules it reaches, so that ``from subprocess import run`` counts too).
_READ_WHILE_RUNNING: Final = (
    ("environment variables it reads", frozenset({"environ", "environb", "getenv", "getenvb"})),
    (
        "files it opens or reads",
        frozenset(
            {"open", "read_text", "read_bytes", "iterdir", "listdir", "scandir", "rglob"}
            | {"glob", "iglob", "walk", "FileIO", "get_data", "mmap", "memmap"}
            | {"read_binary", "open_text", "open_binary", "linecache", "getline", "getlines"}
            | {"fileinput", "zipfile", "ZipFile", "tarfile", "shelve", "dbm"}
            | {"read_csv", "read_json", "read_parquet", "read_table", "read_excel"}
            | {"read_pickle", "read_feather", "read_hdf", "read_orc", "read_fwf", "read_xml"}
            | {"loadtxt", "genfromtxt", "fromfile", "load", "read_index", "from_pretrained"}
            | {"load_dataset", "load_from_disk", "load_local", "load_index_from_storage"}
        ),
    ),
    (
        "code it loads from files",
        frozenset({"runpy", "run_path", "spec_from_file_location", "SourceFileLoader"}),
    ),
    (
        "programs it starts",
        frozenset(
            {"subprocess", "Popen", "check_output", "check_call", "getoutput", "getstatusoutput"}
            | {"create_subprocess_exec", "create_subprocess_shell", "system", "popen"}
            | {"spawnl", "spawnle", "spawnlp", "spawnv", "spawnve", "spawnvp", "posix_spawn"}
            | {"execl", "execle", "execlp", "execv", "execve", "execvp", "execvpe"}
        ),
    ),
    (
        "databases it connects to",
        frozenset({"connect", "read_sql", "PersistentClient", "HttpClient", "QdrantClient"}),
    ),
    (
        "services it calls",
        frozenset(
            {"urlopen", "requests", "httpx", "aiohttp", "urllib3", "HTTPConnection"}
            | {"HTTPSConnection", "socket", "create_connection", "ftplib", "smtplib"}
            | {"openai", "anthropic", "litellm", "cohere", "mistralai", "groq", "boto3"}
        ),
    ),
    (
        "the clock it reads",
        frozenset({"now", "utcnow", "today", "time.time", "time.time_ns", "localtime"}),
    ),
)


@dataclass(frozen=True)
class Fingerprint:
    """The code closure of one entry point, and the one key that stands for all of it.

    ``code``: per function or class reached, ``module:qualname`` → (kind ``f`` function, ``c``
    class, ``m`` whole module file, ``t`` a module's statements run at import; the file; a
    digest). ``constants``: per value read, ``module:name`` (or ``module:Class.attr``) → (file,
    digest). ``distributions``: name → version; ``installed_files``: name → the digest of the
    files it installed, where its ``RECORD`` lists them (without one, ``modules`` and the
    digest of its module files). ``unseen``: what was read but cannot
    be part of the fingerprint. ``names``: every name the user code reached uses (globals, and
    attributes read by name), for a caller to ask whether it reads an attribute of what it is
    handed; not part of the record. ``functions``: the user's functions it reaches, for a caller
    to read what they do (``oloproof.systems.context_use.written``); not part of the record.
    ``tools``: the modules of Oloproof it reaches (``oloproof.models``, say), for a caller to
    ask whether it may call a model through Oloproof; not part of the record. ``edited_files``:
    name → the files of that distribution edited in place (their content is in its
    ``installed_files`` digest already), for ``changes`` to name them.
    """

    key: str
    entry: str
    code: Mapping[str, tuple[str, str, str]]
    constants: Mapping[str, tuple[str, str]]
    distributions: Mapping[str, str]
    python: str
    unseen: tuple[str, ...]
    names: frozenset[str] = frozenset()
    installed_files: Mapping[str, str] = field(default_factory=dict)
    functions: tuple[FunctionType, ...] = ()
    tools: frozenset[str] = frozenset()
    edited_files: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        """The compact form kept in a run's event, which ``changes`` reads back."""
        return {
            "key": self.key,
            "walk": WALK,
            "entry": self.entry,
            "python": self.python,
            "code": {k: list(v) for k, v in self.code.items()},
            "constants": {k: list(v) for k, v in self.constants.items()},
            "dists": dict(self.distributions),
            "unseen": list(self.unseen),
            **({"dist_files": dict(self.installed_files)} if self.installed_files else {}),
            **(
                {"dist_edited": {k: list(v) for k, v in self.edited_files.items()}}
                if self.edited_files
                else {}
            ),
        }


def of_callable(obj: Callable[..., Any] | Any, *, base_dir: Path) -> Fingerprint:
    """The fingerprint of a function (or any callable object) called as it is."""
    walk = Walk(base_dir)
    return _finish(walk, lambda: walk.value(obj, "the entry point", None), _name_of(obj))


def of_method(cls: type, name: str, *, base_dir: Path) -> Fingerprint:
    """The fingerprint of method ``name`` called on an instance of ``cls``."""
    walk = Walk(base_dir)
    name_of = f"{cls.__module__}:{cls.__qualname__}.{name}"
    return _finish(walk, lambda: walk.method_entry(cls, name), name_of)


def _finish(walk: Walk, start: Callable[[], bytes], name: str) -> Fingerprint:
    try:
        entry = start()
        walk.run()
    except BaseException as exc:  # an object the walk cannot read: never reuse, rather than
        if not user_failed(exc):  # guess; its own code (a subclass's __iter__) may even exit
            raise
        return _unknown(name, exc)
    python = f"{sys.implementation.name} {platform.python_version()}"
    code = dict(sorted(walk.code.items()))
    constants = dict(sorted(walk.constants.items()))
    dists = dict(sorted(walk.dists.items()))
    files = dict(sorted(walk.dist_files.items()))
    # Files are named in the record, for people, but are not part of the key: the same code
    # checked out elsewhere is the same code.
    digest = blake3(entry)
    parts: tuple[Any, ...] = (
        f"walk {WALK}",
        python,
        {key: (kind, hexdigest) for key, (kind, _, hexdigest) in code.items()},
        {key: hexdigest for key, (_, hexdigest) in constants.items()},
        dists,
    )
    if files:  # only then: a key made without any stays what it was
        parts += (files,)
    digest.update(repr(parts).encode())
    return Fingerprint(
        key=digest.hexdigest()[:DIGEST],
        entry=name,
        code=code,
        constants=constants,
        distributions=dists,
        python=python,
        unseen=(
            *walk.unseen,
            *_read_while_running({*walk.names, *walk.clock, *walk.dists, *walk.stdlib}),
        ),
        names=frozenset(walk.names),
        installed_files=files,
        functions=tuple(walk.functions),
        tools=frozenset(walk.tools),
        edited_files=dict(sorted(walk.dist_edited.items())),
    )


def _read_while_running(names: set[str]) -> list[str]:
    found = []
    for what, uses in _READ_WHILE_RUNNING:
        used = sorted(uses & names)
        if used:
            found.append(f"{what} while it runs (it uses {', '.join(used)})")
    return found


def _unknown(name: str, exc: BaseException) -> Fingerprint:
    """A fingerprint that matches no other: what the code is could not be worked out."""
    return Fingerprint(
        key=os.urandom(DIGEST // 2).hex(),
        entry=name,
        code={},
        constants={},
        distributions={},
        python=f"{sys.implementation.name} {platform.python_version()}",
        unseen=(
            f"the code could not be fingerprinted ({describe(exc)}), so nothing "
            "it produced is reused",
        ),
    )


def _name_of(obj: Any) -> str:
    module = getattr(obj, "__module__", None) or type(obj).__module__
    qualname = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    return f"{module}:{qualname}"


# --- what changed between two fingerprints -----------------------------------------------------


def earlier_walk(records: Mapping[str, Any]) -> bool:
    """Whether any of a run's recorded fingerprints (``Fingerprint.record()`` by entry point)
    was made by an earlier walk than this release's: its key cannot be made again."""
    return any(record.get("walk", 1) != WALK for record in records.values())


def changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """What differs between two recorded fingerprints (``Fingerprint.record()``), in words.

    ``code of words() in app.py changed``, ``constant MIN_SHARED_WORDS in app.py changed``,
    ``installed numpy changed (2.4.5 → 2.4.6)``... Empty when they are the same. A class
    whose member changed is named through the member only.
    """
    if before.get("walk", 1) != after.get("walk", 1):
        # Read otherwise, the same code gives other parts (a secret read as it was, say): any
        # difference between them may be the release's, none can be said to be the user's.
        return ["an earlier release of oloproof fingerprinted it, reading the code otherwise"]
    found: list[str] = []
    if before.get("entry") != after.get("entry"):
        found.append(f"the entry point changed ({_entry(before)} → {_entry(after)})")
    if before.get("python") != after.get("python"):
        found.append(f"Python changed ({before.get('python')} → {after.get('python')})")
    old_code, new_code = before.get("code", {}), after.get("code", {})
    changed = [k for k in new_code if k in old_code and _what(old_code[k]) != _what(new_code[k])]
    for key in changed:
        if new_code[key][0] == "c" and any(o.startswith(key + ".") for o in changed):
            continue
        name = _code_name(key, new_code[key])
        found.append(f"{name} changed" if new_code[key][0] == "t" else f"code of {name} changed")
    found += [f"now reaches {_code_name(k, v)}" for k, v in new_code.items() if k not in old_code]
    found += [
        f"no longer reaches {_code_name(k, v)}" for k, v in old_code.items() if k not in new_code
    ]
    old_data, new_data = before.get("constants", {}), after.get("constants", {})
    for key, value in new_data.items():
        if key not in old_data:
            found.append(f"now reads {_constant_name(key, value)}")
        elif old_data[key][-1] != value[-1]:
            found.append(f"{_constant_name(key, value)} changed")
    found += [
        f"no longer reads {_constant_name(k, v)}" for k, v in old_data.items() if k not in new_data
    ]
    old_dists, new_dists = before.get("dists", {}), after.get("dists", {})
    old_files, new_files = before.get("dist_files", {}), after.get("dist_files", {})
    for name, version in new_dists.items():
        if name not in old_dists:
            found.append(f"now uses installed {name} {version}")
        elif old_dists[name] != version:
            found.append(f"installed {name} changed ({old_dists[name]} → {version})")
        elif name in old_files and name in new_files and old_files[name] != new_files[name]:
            edited = after.get("dist_edited", {}).get(name)
            if edited:
                how = f"{', '.join(edited)} edited in place"
            elif str(new_files[name]).startswith("modules "):  # installed without a RECORD
                how = "its module files changed"
            else:
                how = "installed again with other files"
            found.append(f"installed {name} {version} changed ({how})")
    found += [f"no longer uses installed {name}" for name in old_dists if name not in new_dists]
    if not found and before.get("key") != after.get("key"):
        found.append("the code changed")  # a part the record does not itemise (the class MRO)
    return found


def _what(value: Any) -> tuple[Any, Any]:
    """A code part's kind and digest: what it is, wherever its file is."""
    return value[0], value[-1]


def _entry(record: Mapping[str, Any]) -> str:
    return str(record.get("entry", "?")).replace(":", ".", 1)


def _code_name(key: str, value: Any) -> str:
    module, _, qualname = key.partition(":")
    kind, file = value[0], value[1]
    if kind == "m":
        return f"module {module} ({file})"
    if kind == "t":
        return f"the statements {file} runs when imported"
    name = f"class {qualname}" if kind == "c" else f"{qualname.split('#')[0]}()"
    return f"{name} in {file}"


def _constant_name(key: str, value: Any) -> str:
    _, _, name = key.partition(":")
    what = "class attribute" if "." in name else "constant"
    return f"{what} {name} in {value[0]}"
