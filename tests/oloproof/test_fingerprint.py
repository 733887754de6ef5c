"""Code fingerprints: every edit that can change what an entry point does changes its key, and
edits it cannot see (another method, a comment, a function nothing calls) leave it alone.

Each test writes a small project twice, into two folders (v1 and v2) that differ by one edit,
imports each fresh under the same module names, and compares the two fingerprints.
"""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from tests.support import printed_under_hash_seeds

from oloproof.fingerprint import DATA_LIMIT, Fingerprint, changes, of_callable, of_method
from oloproof.fingerprint._places import Place, distribution_of, place_of_file


@pytest.fixture(autouse=True)
def _clean_imports(tmp_path: Path) -> Iterator[None]:
    path = list(sys.path)
    yield
    sys.path[:] = path
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


def fingerprint(root: Path, files: Mapping[str, str], entry: str) -> Fingerprint:
    """Write ``files`` under ``root`` and fingerprint ``entry`` (``module:attr`` or
    ``module:Class.method``, a method when the attribute before it is a class)."""
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    tops = {Path(name).parts[0].removesuffix(".py") for name in files}
    for name in [m for m in sys.modules if m.partition(".")[0] in tops]:
        del sys.modules[name]
    importlib.invalidate_caches()
    sys.path.insert(0, str(root))
    try:
        module_name, _, attr = entry.partition(":")
        obj: Any = importlib.import_module(module_name)
        parts = attr.split(".")
        for part in parts[:-1]:
            obj = getattr(obj, part)
        if isinstance(obj, type):
            return of_method(obj, parts[-1], base_dir=root)
        return of_callable(getattr(obj, parts[-1]), base_dir=root)
    finally:
        sys.path.remove(str(root))


def compare(
    tmp_path: Path, files: Mapping[str, str], entry: str, old: str, new: str, where: str = "app.py"
) -> tuple[Fingerprint, Fingerprint]:
    """The fingerprints before and after replacing ``old`` with ``new`` in ``where``."""
    assert old in files[where], f"{old!r} not in {where}"
    edited = {**files, where: files[where].replace(old, new)}
    return fingerprint(tmp_path / "v1", files, entry), fingerprint(tmp_path / "v2", edited, entry)


def changed(
    tmp_path: Path, files: Mapping[str, str], entry: str, old: str, new: str, where: str = "app.py"
) -> list[str]:
    before, after = compare(tmp_path, files, entry, old, new, where)
    found = changes(before.record(), after.record())
    assert (before.key != after.key) == bool(found), (before.record(), after.record())
    return found


APP = {
    "app.py": """
        import re

        LIMIT = 2
        UNUSED = "never read"
        STOPWORDS = frozenset({"a", "the", "of", "to", "and"})


        def words(text):
            return {w for w in re.findall(r"[a-z]+", text.lower()) if w not in STOPWORDS}


        def score(question, passage):
            return len(words(question) & words(passage))


        def entry(question, passages):
            return [p for p in passages if score(question, p) >= LIMIT]


        def unrelated():
            return "nothing calls me"
        """
}


# --- functions, constants and what is left out -------------------------------------------------


def test_the_same_code_gives_the_same_key(tmp_path: Path) -> None:
    first = fingerprint(tmp_path / "a", APP, "app:entry")
    second = fingerprint(tmp_path / "b", APP, "app:entry")
    assert first.key == second.key and first.record() == second.record()
    assert set(first.code) == {"app:entry", "app:score", "app:words"}
    assert set(first.constants) == {"app:LIMIT", "app:STOPWORDS"}
    assert first.code["app:words"][:2] == ("f", "app.py")


def test_an_edit_two_calls_down_is_a_change(tmp_path: Path) -> None:
    assert changed(tmp_path, APP, "app:entry", "text.lower()", "text.casefold()") == [
        "code of words() in app.py changed"
    ]


def test_a_constant_it_reads_is_part_of_it(tmp_path: Path) -> None:
    assert changed(tmp_path, APP, "app:entry", "LIMIT = 2", "LIMIT = 3") == [
        "constant LIMIT in app.py changed"
    ]
    assert changed(tmp_path / "set", APP, "app:entry", '"and"}', '"or"}') == [
        "constant STOPWORDS in app.py changed"
    ]


def test_what_it_never_reads_is_not(tmp_path: Path) -> None:
    assert changed(tmp_path / "a", APP, "app:entry", "never read", "still unread") == []
    assert changed(tmp_path / "b", APP, "app:entry", "nothing calls me", "nobody") == []
    # Comments and blank lines move every line number below them: line numbers are not code.
    assert (
        changed(
            tmp_path / "c", APP, "app:entry", "import re\n", "import re\n\n\n        # a note\n"
        )
        == []
    )


def test_defaults_nested_functions_and_lambdas_are_code(tmp_path: Path) -> None:
    files = {
        "app.py": """
            KEY = lambda p: -len(p)


            def entry(items, depth=3):
                def keep(item):
                    return item.startswith("k")

                return sorted(filter(keep, items), key=KEY)[:depth]
            """
    }
    assert changed(tmp_path / "a", files, "app:entry", "depth=3", "depth=4")
    assert changed(tmp_path / "b", files, "app:entry", 'startswith("k")', 'startswith("j")')
    assert changed(tmp_path / "c", files, "app:entry", "-len(p)", "len(p)")


def test_recursion_and_cycles_end(tmp_path: Path) -> None:
    files = {
        "app.py": """
            def even(n):
                return True if n == 0 else odd(n - 1)


            def odd(n):
                return False if n == 0 else even(n - 1)


            def entry(n):
                return even(n) and entry is not None
            """
    }
    found = fingerprint(tmp_path / "a", files, "app:entry")
    assert set(found.code) == {"app:entry", "app:even", "app:odd"}
    assert changed(tmp_path / "b", files, "app:entry", "n == 0 else even", "n <= 0 else even")


# --- other modules --------------------------------------------------------------------------

HELPER = """
    def clean(text):
        return text.strip()
    """


@pytest.mark.parametrize(
    "use",
    [
        "from helper import clean\n\ndef entry(text):\n    return clean(text)\n",
        "import helper\n\ndef entry(text):\n    return helper.clean(text)\n",
        "import helper as h\n\ndef entry(text):\n    return h.clean(text)\n",
        "def entry(text):\n    import helper\n    return helper.clean(text)\n",
        "def entry(text):\n    from helper import clean\n    return clean(text)\n",
        # Imported by name while the code runs
        "import importlib\n\ndef entry(text):\n    return importlib.import_module('helper').clean(text)\n",
        "from importlib import import_module\n\ndef entry(t):\n    return import_module('helper').clean(t)\n",
        "def entry(text):\n    return __import__('helper').clean(text)\n",
        "import importlib\n\ndef entry(text):\n    return importlib.import_module(name='helper').clean(text)\n",
        "def entry(t):\n    return __import__('helper', globals(), locals(), ['clean'], 0).clean(t)\n",
    ],
)
def test_an_edit_in_an_imported_module_is_a_change(tmp_path: Path, use: str) -> None:
    files = {"app.py": use, "helper.py": HELPER}
    found = changed(tmp_path, files, "app:entry", "strip()", "lstrip()", where="helper.py")
    assert found in (
        ["code of clean() in helper.py changed"],
        ["code of module helper (helper.py) changed"],
    )


def test_a_submodule_of_a_package(tmp_path: Path) -> None:
    files = {
        "app.py": "import pkg.text\n\ndef entry(t):\n    return pkg.text.clean(t)\n",
        "pkg/__init__.py": "",
        "pkg/text.py": HELPER,
    }
    assert changed(tmp_path, files, "app:entry", "strip()", "lstrip()", where="pkg/text.py") == [
        "code of clean() in pkg/text.py changed"
    ]


def test_a_relative_import_inside_a_function(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/app.py": "def entry(t):\n    from . import text\n    return text.clean(t)\n",
        "pkg/text.py": HELPER,
    }
    assert changed(tmp_path, files, "pkg.app:entry", "strip()", "lstrip()", where="pkg/text.py")


def test_a_relative_name_imported_while_the_code_runs(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/app.py": (
            "import importlib\n\ndef entry(t):\n"
            "    return importlib.import_module('.text', __package__).clean(t)\n"
        ),
        "pkg/text.py": HELPER,
    }
    assert changed(tmp_path, files, "pkg.app:entry", "strip()", "lstrip()", where="pkg/text.py")


@pytest.mark.parametrize(
    "load",
    [
        "importlib.import_module(NAME)",
        "importlib.import_module('HELPER'.lower())",
        "importlib.import_module('help' + NAME[4:])",
        "importlib.import_module(f'{NAME}')",
    ],
)
def test_a_module_name_not_written_as_it_is_imported_is_unseen(tmp_path: Path, load: str) -> None:
    files = {
        "app.py": f"import importlib\n\nNAME = 'helper'\n\ndef entry(t):\n    return {load}\n",
        "helper.py": HELPER,
    }
    found = fingerprint(tmp_path, files, "app:entry")
    assert "a module imported by a name made while the code runs" in " ".join(found.unseen)


# --- decorators, closures and callables of other kinds --------------------------------------

DECORATED = {
    "app.py": """
        import functools

        from deco import traced

        TABLE = {"a": 1, "b": 2}
        LOOKUP = TABLE.get


        def make_scaler(factor):
            def scale(x):
                return x * factor
            return scale


        SCALE = make_scaler(3)
        HALF = functools.partial(round, ndigits=1)


        @traced
        def entry(x):
            return HALF(SCALE(x)) + LOOKUP("a", 0)
        """,
    "deco.py": """
        import functools


        def traced(fn):
            @functools.wraps(fn)
            def wrapper(*args):
                return fn(*args)
            return wrapper
        """,
}


def test_a_decorated_function_is_seen_through_its_wrapper(tmp_path: Path) -> None:
    assert changed(tmp_path / "a", DECORATED, "app:entry", "+ LOOKUP", "- LOOKUP")
    assert changed(
        tmp_path / "b",
        DECORATED,
        "app:entry",
        "return fn(*args)",
        "return fn(*args[:1])",
        where="deco.py",
    )


def test_closures_partials_and_bound_methods_carry_their_values(tmp_path: Path) -> None:
    assert changed(tmp_path / "a", DECORATED, "app:entry", "make_scaler(3)", "make_scaler(4)")
    assert changed(tmp_path / "b", DECORATED, "app:entry", "ndigits=1", "ndigits=2")
    assert changed(tmp_path / "c", DECORATED, "app:entry", '"a": 1', '"a": 5')


def test_a_callable_instance(tmp_path: Path) -> None:
    files = {
        "app.py": """
            class Answer:
                def __init__(self, prefix):
                    self.prefix = prefix

                def __call__(self, case):
                    return self.prefix + case["q"]


            entry = Answer("A: ")
            """
    }
    assert changed(tmp_path / "a", files, "app:entry", '"A: "', '"B: "')
    assert changed(tmp_path / "b", files, "app:entry", 'case["q"]', 'case["question"]')


# --- methods and the classes they are called on ----------------------------------------------

STAGED = {
    "app.py": """
        PROMPT = "Answer briefly."


        class Base:
            def helper(self, text):
                return text.strip()


        class Rag(Base):
            depth_scale = 2
            template = PROMPT

            def __init__(self):
                self.calls = 0

            def retrieve(self, question, depth):
                return self.rank(question)[: depth * self.depth_scale]

            def rank(self, question):
                return sorted(super().helper(question).split())

            def generate(self, question, context):
                return self.template + " " + " ".join(context)

            @staticmethod
            def tidy(text):
                return text

            @property
            def label(self):
                return "rag"


        class Other(Rag):
            pass
        """
}


def test_a_method_is_its_own_code_not_its_class(tmp_path: Path) -> None:
    found = fingerprint(tmp_path / "a", STAGED, "app:Rag.retrieve")
    assert set(found.code) == {
        "app:Rag.retrieve",
        "app:Rag.rank",
        "app:Base.helper",
        "app:Rag.__init__",
    }
    assert set(found.constants) == {"app:Rag.depth_scale"}
    # Editing generate, or the constant only generate reads, leaves retrieve alone.
    assert (
        changed(tmp_path / "b", STAGED, "app:Rag.retrieve", '" ".join(context)', '"".join(context)')
        == []
    )
    assert (
        changed(tmp_path / "c", STAGED, "app:Rag.retrieve", "Answer briefly.", "Answer at length.")
        == []
    )
    # generate reads the class attribute, which holds PROMPT's value; PROMPT itself it never reads.
    assert changed(
        tmp_path / "d", STAGED, "app:Rag.generate", "Answer briefly.", "Answer at length."
    ) == [
        "class attribute Rag.template in app.py changed",
    ]


def test_what_a_method_reaches_through_self_and_super(tmp_path: Path) -> None:
    entry = "app:Rag.retrieve"
    assert changed(tmp_path / "a", STAGED, entry, "depth_scale = 2", "depth_scale = 3") == [
        "class attribute Rag.depth_scale in app.py changed"
    ]
    assert changed(tmp_path / "b", STAGED, entry, "sorted(super()", "list(super()") == [
        "code of Rag.rank() in app.py changed"
    ]
    assert changed(tmp_path / "c", STAGED, entry, "text.strip()", "text.lstrip()") == [
        "code of Base.helper() in app.py changed"
    ]
    assert changed(tmp_path / "d", STAGED, entry, "self.calls = 0", "self.calls = 1") == [
        "code of Rag.__init__() in app.py changed"
    ]


def test_the_class_it_is_called_on_is_part_of_it(tmp_path: Path) -> None:
    rag = fingerprint(tmp_path / "a", STAGED, "app:Rag.retrieve")
    other = fingerprint(tmp_path / "b", STAGED, "app:Other.retrieve")
    assert rag.key != other.key
    assert changes(rag.record(), other.record())[0] == (
        "the entry point changed (app.Rag.retrieve → app.Other.retrieve)"
    )


def test_staticmethods_and_properties_reached_through_self(tmp_path: Path) -> None:
    files = {
        "app.py": STAGED["app.py"].replace(
            "self.rank(question)", "self.rank(self.tidy(question + self.label))"
        )
    }
    assert changed(
        tmp_path / "a", files, "app:Rag.retrieve", "return text\n", "return text.upper()\n"
    )
    assert changed(tmp_path / "b", files, "app:Rag.retrieve", 'return "rag"', 'return "RAG"')


def test_a_class_the_code_uses_counts_whole(tmp_path: Path) -> None:
    files = {
        "app.py": """
            import dataclasses
            import enum


            class Mode(enum.Enum):
                FAST = "fast"
                SLOW = "slow"


            @dataclasses.dataclass(frozen=True)
            class Settings:
                k: int = 3
                mode: Mode = Mode.FAST
                tags: list = dataclasses.field(default_factory=lambda: ["x"])

                def scaled(self):
                    return self.k * 2


            DEFAULTS = Settings()


            def entry(items):
                settings = Settings(k=DEFAULTS.k)
                return items[: settings.scaled()]
            """
    }
    entry = "app:entry"
    assert changed(tmp_path / "a", files, entry, "k: int = 3", "k: int = 4")
    assert changed(tmp_path / "b", files, entry, "self.k * 2", "self.k * 3")
    assert changed(tmp_path / "c", files, entry, 'lambda: ["x"]', 'lambda: ["y"]')
    assert changed(tmp_path / "d", files, entry, 'FAST = "fast"', 'FAST = "quick"')


# --- installed packages, the standard library and what cannot be seen ---------------------------


def test_an_installed_package_stands_for_itself_by_its_version(tmp_path: Path) -> None:
    files = {
        "app.py": "import json\nimport numpy\n\ndef entry(x):\n    return json.dumps(float(numpy.sqrt(x)))\n"
    }
    found = fingerprint(tmp_path, files, "app:entry")
    assert found.distributions == {"numpy": importlib.import_module("numpy").__version__}
    assert set(found.code) == {"app:entry"}  # neither numpy's code nor the stdlib's is walked
    before = found.record()
    after = {**before, "dists": {"numpy": "0.0.1"}, "key": "other"}
    assert changes(before, after) == [f"installed numpy changed ({numpy_version()} → 0.0.1)"]


def numpy_version() -> str:
    return str(importlib.import_module("numpy").__version__)


def test_oloproof_itself_stands_for_itself_by_its_version(tmp_path: Path) -> None:
    files = {
        "app.py": "from oloproof import Passage\n\ndef entry(d):\n    return Passage(doc_id=d)\n"
    }
    found = fingerprint(tmp_path, files, "app:entry")
    assert found.distributions == {"oloproof": importlib.import_module("oloproof").__version__}


def test_state_it_cannot_see_is_listed(tmp_path: Path) -> None:
    big = DATA_LIMIT // 10 + 1
    files = {
        "app.py": f"""
            import numpy

            CORPUS = ["0123456789" * 1] * {big}
            INDEX = numpy.random.default_rng(0)


            def entry(i):
                return CORPUS[i] + str(INDEX)
            """
    }
    found = fingerprint(tmp_path / "a", files, "app:entry")
    assert any(u.startswith("app.CORPUS: more than") for u in found.unseen), found.unseen
    assert any(u.startswith("app.INDEX: a numpy.random") for u in found.unseen), found.unseen
    # What it cannot see it cannot tell changed: documented, and why `version` exists.
    assert changed(tmp_path / "b", files, "app:entry", '"0123456789"', '"9876543210"') == []


def test_a_namedtuple_and_a_dataclass_are_seen_whole(tmp_path: Path) -> None:
    # Their field descriptors and the dataclass's "no default" sentinel were listed as state the
    # fingerprint cannot see, beside the state it really cannot (a random generator).
    files = {
        "app.py": """
            import collections
            import dataclasses
            import random

            Pair = collections.namedtuple("Pair", "a b")
            PAIR = Pair("x", 1)
            RNG = random.Random(7)


            @dataclasses.dataclass(frozen=True)
            class Cfg:
                width: str = "w"
                depth: int = dataclasses.field(default_factory=int)


            def entry(i):
                return [PAIR.a, Cfg().width, Cfg().depth, RNG.random()]
            """
    }
    found = fingerprint(tmp_path / "a", files, "app:entry")
    assert found.unseen == ("app.RNG: a random.Random object",)
    # Renaming a namedtuple's fields is a change the fingerprint sees.
    renamed = changed(tmp_path / "b", files, "app:entry", '"a b"', '"b a"')
    assert renamed != []


HOLDERS = {
    "app.py": """
        import array
        import collections
        import string
        import types

        TEMPLATE = string.Template("$x: TEMPLATE_TEXT")
        NAMES = types.SimpleNamespace(suffix="NAMESPACE_TEXT")
        PROXY = types.MappingProxyType({"k": "PROXY_TEXT"})
        RECENT = collections.deque(["DEQUE_TEXT"], maxlen=4)
        LAYERS = collections.ChainMap({"k": "CHAIN_TEXT"})
        CODES = array.array("u", "ARRAY_TEXT")
        LOOP = collections.deque()
        LOOP.append(LOOP)


        def entry(i):
            return [TEMPLATE, NAMES, PROXY, RECENT, LAYERS, CODES, LOOP, i]
        """
}


@pytest.mark.parametrize(
    "text",
    ["TEMPLATE_TEXT", "NAMESPACE_TEXT", "PROXY_TEXT", "DEQUE_TEXT", "CHAIN_TEXT", "ARRAY_TEXT"],
)
def test_plain_data_in_a_standard_library_object_is_seen(tmp_path: Path, text: str) -> None:
    found = fingerprint(tmp_path / "a", HOLDERS, "app:entry")
    assert found.unseen == ()  # the deque that holds itself included
    assert changed(tmp_path / "b", HOLDERS, "app:entry", text, "edited") != []


def test_a_deque_length_limit_is_seen(tmp_path: Path) -> None:
    assert changed(tmp_path, HOLDERS, "app:entry", "maxlen=4", "maxlen=5") != []


def test_a_default_factory_and_a_method_of_a_built_in_type_are_seen(tmp_path: Path) -> None:
    # The factory was dropped with the defaultdict's items copied out, and a method of a type
    # written in C (str.upper) was listed as state the fingerprint cannot see.
    files = {
        "app.py": """
            import collections

            PROMPTS = collections.defaultdict(lambda: "answer briefly", {"long": "explain"})
            SHOUT = str.upper
            LOUD = collections.defaultdict(str.upper)


            def entry(kind):
                return SHOUT(PROMPTS[kind]), LOUD
            """
    }
    assert fingerprint(tmp_path / "a", files, "app:entry").unseen == ()
    assert changed(tmp_path / "b", files, "app:entry", '"answer briefly"', '"be terse"') != []
    assert changed(tmp_path / "c", files, "app:entry", "SHOUT = str.upper", "SHOUT = str.lower")
    assert changed(tmp_path / "d", files, "app:entry", "(str.upper)", "(str.title)") != []


def test_the_key_does_not_depend_on_the_process(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "app.py").write_text(textwrap.dedent(APP["app.py"]), encoding="utf-8")
    script = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); import app; "
        "from oloproof.fingerprint import of_callable; "
        "print(of_callable(app.entry, base_dir=Path(sys.argv[1])).key)"
    )
    keys = printed_under_hash_seeds(script, str(project))
    assert len(keys) == 1  # the frozenset STOPWORDS iterates differently under each seed


# --- where code belongs ------------------------------------------------------------------------


def test_places() -> None:
    assert place_of_file(json.__file__) is Place.STDLIB
    assert place_of_file(importlib.import_module("numpy").__file__ or "") is Place.INSTALLED
    assert place_of_file(importlib.import_module("oloproof").__file__ or "") is Place.TOOL
    # A project inside the interpreter's prefix, outside its library dirs, is the user's.
    assert place_of_file(str(Path(sys.prefix) / "project" / "app.py")) is Place.USER
    assert distribution_of("yaml")[0] == "PyYAML"  # a module whose distribution has another name


def test_changes_name_each_kind_of_change() -> None:
    before = {
        "key": "1",
        "entry": "app:entry",
        "python": "cpython 3.11.7",
        "code": {
            "app:entry": ["f", "app.py", "a"],
            "app:Tok": ["c", "app.py", "b"],
            "app:Tok.split": ["f", "app.py", "c"],
            "app:gone": ["f", "app.py", "d"],
        },
        "constants": {"app:K": ["app.py", "e"], "app:Tok.SEP": ["app.py", "f"]},
        "dists": {"numpy": "2.0"},
    }
    after = {
        "key": "2",
        "entry": "app:entry",
        "python": "cpython 3.12.1",
        "code": {
            "app:entry": ["f", "app.py", "a"],
            "app:Tok": ["c", "app.py", "B"],
            "app:Tok.split": ["f", "app.py", "C"],
            "app:new": ["f", "lib/new.py", "g"],
        },
        "constants": {
            "app:K": ["app.py", "E"],
            "app:Tok.SEP": ["app.py", "f"],
            "app:J": ["app.py", "h"],
        },
        "dists": {"numpy": "2.1", "scipy": "1.0"},
    }
    assert changes(before, after) == [
        "Python changed (cpython 3.11.7 → cpython 3.12.1)",
        "code of Tok.split() in app.py changed",  # the class's own change is implied
        "now reaches new() in lib/new.py",
        "no longer reaches gone() in app.py",
        "constant K in app.py changed",
        "now reads constant J in app.py",
        "installed numpy changed (2.0 → 2.1)",
        "now uses installed scipy 1.0",
    ]
    assert changes(before, before) == []


def test_library_objects_with_fields_and_decorator_objects(tmp_path: Path) -> None:
    files = {
        "app.py": """
            import functools

            from oloproof import Passage

            KB = [Passage(doc_id="kb-1", text="Refunds take two days.")]


            class Retry:
                def __init__(self, fn, times):
                    self.fn, self.times = fn, times

                def __call__(self, *args):
                    return self.fn(*args)


            @functools.lru_cache(maxsize=None)
            def lookup(doc_id):
                return next(p.text for p in KB if p.doc_id == doc_id)


            def fetch(doc_id):
                return lookup(doc_id)


            FETCH = Retry(fetch, times=3)


            def entry(doc_id):
                return FETCH(doc_id)
            """
    }
    # A knowledge base held as the library's own models: their fields are seen.
    assert changed(tmp_path / "a", files, "app:entry", "two days", "three days")
    # The function behind functools.lru_cache, and a decorator object's own state.
    assert changed(tmp_path / "b", files, "app:entry", "p.doc_id == doc_id", "p.doc_id != doc_id")
    assert changed(tmp_path / "c", files, "app:entry", "times=3", "times=4")


def test_code_it_cannot_read_is_never_reused(tmp_path: Path) -> None:
    files = {
        "app.py": """
            class Odd:
                pass


            Odd.__slots__ = 5  # nothing a walk can iterate
            THING = Odd()


            def entry():
                return THING
            """
    }
    first = fingerprint(tmp_path / "a", files, "app:entry")
    second = fingerprint(tmp_path / "b", files, "app:entry")
    assert first.key != second.key
    assert first.unseen[0].startswith("the code could not be fingerprinted (TypeError")


def test_user_code_held_by_library_objects_still_counts(tmp_path: Path) -> None:
    files = {
        "app.py": """
            import functools
            import textwrap
            import types


            def shout(text):
                return text.upper()


            textwrap.shout = shout  # the user's function put into a library module
            HOLDER = types.SimpleNamespace(fn=shout)  # held by a library object


            @functools.singledispatch
            def render(value):
                return str(value)


            @render.register
            def _(value: int):
                return f"#{value}"


            class Doc:
                def __init__(self, text):
                    self.text = text

                @functools.cached_property
                def words(self):
                    return self.text.split()


            def entry(text, n):
                return textwrap.shout(text) + HOLDER.fn(text) + render(n) + str(Doc(text).words)
            """
    }
    assert changed(tmp_path / "a", files, "app:entry", "text.upper()", "text.lower()")
    assert changed(tmp_path / "b", files, "app:entry", 'f"#{value}"', 'f"no. {value}"')
    assert changed(tmp_path / "c", files, "app:entry", "self.text.split()", "self.text.split(',')")


def test_a_library_decorator_wrapping_the_entry_point(tmp_path: Path) -> None:
    files = {
        "app.py": """
            import functools


            @functools.lru_cache(maxsize=None)
            def entry(x):
                return x * 2
            """
    }
    assert changed(tmp_path, files, "app:entry", "x * 2", "x * 3") == [
        "code of entry() in app.py changed"
    ]


def test_the_same_code_elsewhere_is_the_same_code(tmp_path: Path) -> None:
    # A module outside the project folder is named by its absolute path, which differs between
    # checkouts; the key does not depend on it.
    files = {"app.py": "import helper\n\ndef entry(t):\n    return helper.clean(t)\n"}
    keys = []
    for where in ("one", "two"):
        shared = tmp_path / where / "shared"
        shared.mkdir(parents=True)
        (shared / "helper.py").write_text(textwrap.dedent(HELPER))
        sys.path.insert(0, str(shared))
        try:
            found = fingerprint(tmp_path / where / "project", files, "app:entry")
        finally:
            sys.path.remove(str(shared))
            sys.modules.pop("helper", None)
        assert found.code["helper:clean"][1] == str(shared / "helper.py")
        keys.append(found.key)
    assert keys[0] == keys[1]
