"""Read a settings file (oloproof.yaml, a policy) as YAML, refusing what would change its meaning.

YAML as PyYAML reads it lets a later duplicate key silently replace the earlier one (a second
``rules: []`` switches every rule off), follows an alias into the node that holds it, nests
until Python's recursion limit breaks, and turns a 5,000-digit number into a ``ValueError``.
Here each of those is one sentence naming the file and the line:

0. the file must be a regular file of at most ``MAX_BYTES``: a named pipe with no writer is
   never waited on, ``/dev/zero`` or a 1 GB file is never read whole (``read_file``, which
   reads a labels file and a qrels file too, each with a limit of its own);
1. the file must be UTF-8 text, without the control characters YAML does not allow (a NUL);
2. a key may appear once per mapping (both lines are named); so may a merge (``<<``), and
   the mappings one merge names may not give the same key unless the mapping holding the
   merge gives it too: which of two merged values wins is read differently by YAML readers
   (the merge-key spec keeps the first of a list, PyYAML 6.0.4 the last), whereas a key
   written beside a merge overrides it in every reader; a merged key is named at the line it
   is written on;
3. values nest at most ``MAX_NESTING`` levels, and an alias may not refer to the node that
   holds it; a file holds at most ``MAX_VALUES`` values, aliases counted at each use;
4. integers lie in what the ledger records (``-2**64 .. 2**64-1``), since the settings are
   stored with every run;
5. a boolean is written ``true`` or ``false``: YAML 1.1 also reads a bare ``yes``, ``no``,
   ``on`` or ``off`` as one, so ``enum: [yes, no]`` in a schema would silently be
   ``[true, false]``;
6. a bare number reads the same in YAML 1.1 (PyYAML) and YAML 1.2 (most other readers, and
   what the file looks like): ``017`` is 15 (octal) to one and 17 to the other, ``1:30``
   (base 60) and ``1_000`` are numbers to YAML 1.1 only, ``1e3`` and ``0o17`` to YAML 1.2 only,
   so ``max_failures: 017`` would silently allow 15; so does a bare date (``2024-01-01``),
   which YAML 1.1 alone reads as one;
7. no value holds a NUL (``"\\0"``): no setting can, and a path holding one cannot be opened.
8. a value YAML types by its form is one PyYAML can read as that type: a tag on text not
   written as what it names (``!!int 0.5``, ``!!null 0.9``, which PyYAML reads as null) and a
   bare word of a number's form that is none (``0b_``) are refused, and so is a bare ``=``,
   which YAML 1.1 types as its "value" key and PyYAML cannot read (its error named the tag).
9. the file holds no U+0085 (NEL), U+2028 (LINE SEPARATOR) or U+2029 (PARAGRAPH SEPARATOR)
   as it is: YAML 1.1 (PyYAML) breaks a line at each, YAML 1.2 and most editors at none, so
   ``# off<U+2028>max_failures: 5`` is a comment to one and a setting to the other, and a
   quoted value folds the character to a space or keeps it. Written as a double-quoted
   escape (``"\\L"``) it reads the same to both. With this, what the checks above let through
   reads alike in YAML 1.1 and 1.2 (merges aside, an extension to both: requirement 2), so a
   ``%YAML 1.2`` directive, which PyYAML reads by 1.1's rules, changes nothing.

``read_yaml`` returns the data and the line of every key path, for later errors.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from ledger.codec import INT_MAX, INT_MIN
from oloproof.errors import ConfigError, OloproofError
from oloproof.filekinds import LOOKUP_FAULTS, lookup_fault, not_a_file
from oloproof.usercode import unrecordable_path

_BOOL = "tag:yaml.org,2002:bool"
_STR = "tag:yaml.org,2002:str"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
# The numbers of YAML 1.2's core schema (its spec, 10.3.2); its infinities and NaN, which
# PyYAML reads alike, apart.
_CORE_NUMBER = re.compile(
    r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?"
)
_CORE_SPECIAL = re.compile(r"[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)")
_LEADING_ZERO = re.compile(r"[-+]?0[0-9]+")  # decimal to YAML 1.2, octal to YAML 1.1
_MERGE = "tag:yaml.org,2002:merge"
# A bare ``=``: YAML 1.1's "value" key type (``!!value``), which PyYAML resolves but cannot read.
_VALUE = "tag:yaml.org,2002:value"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
# The tags YAML also gives a bare word by its form, each named for a sentence (``_unreadable``).
_KINDS = {
    _BOOL: "a boolean",
    _INT: "an integer",
    _FLOAT: "a number",
    "tag:yaml.org,2002:null": "null",
    _TIMESTAMP: "a date",
}
_RESOLVER = yaml.resolver.Resolver()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_NUMBERS = (_INT, _FLOAT)
MAX_NESTING = 100
MAX_VALUES = 100_000
MAX_BYTES = 16 << 20  # a settings file of 16 MB holds far more than MAX_VALUES values
_INT_DIGITS = 40  # past 2**64 by far: refused without converting (Python's own limit is 4,300)

Lines = dict[tuple[Any, ...], int]
Keys = dict[tuple[str, Any], int]  # a mapping's keys, by tag and value, with their lines


class _Refused(yaml.YAMLError):
    """A refusal found while parsing, with the line it is on."""

    def __init__(self, message: str, mark: yaml.Mark) -> None:
        super().__init__(message)
        self.message = message
        self.line = mark.line + 1


class _Loader(yaml.SafeLoader):
    """A safe loader that stops at ``MAX_NESTING`` levels and at integers far out of range,
    and keeps the scalars given a tag (``!!str 017``), which are read as the tag says."""

    _depth = 0

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.tagged: set[int] = set()

    def compose_scalar_node(self, anchor: Any) -> yaml.ScalarNode:
        tagged = self.peek_event().tag is not None  # type: ignore[no-untyped-call]  # untyped in stubs
        node = super().compose_scalar_node(anchor)
        if tagged:
            self.tagged.add(id(node))
        return node

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_NESTING:
                event = self.peek_event()  # type: ignore[no-untyped-call]  # untyped in stubs
                raise _Refused(f"nested deeper than {MAX_NESTING} levels", event.start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        digits = sum(c.isalnum() for c in str(node.value))
        if digits > _INT_DIGITS:
            raise _Refused(
                f"an integer of {digits} digits is outside -2**64 .. 2**64-1", node.start_mark
            )
        return super().construct_yaml_int(node)


_Loader.add_constructor(_INT, _Loader.construct_yaml_int)


def read_yaml(path: Path) -> tuple[Any, Lines]:
    """Parse a YAML file; return the data and the line of each key path."""
    raw = read_file(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}, line {line}: not UTF-8 text (byte {exc.start})") from None
    _refuse_line_breaks_of_yaml_1_1(path, text)
    try:
        loader = _Loader(text)  # reading the text starts here: a NUL in it is refused now
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        raise ConfigError(f"{path}, line {line}: not valid YAML ({_reader_problem(exc)})") from None
    try:
        node = loader.get_single_node()
        lines: Lines = {}
        if node is not None:
            _Walk(path, lines, loader.tagged).node(node, ())
        data = loader.construct_document(node) if node is not None else None
    except _Refused as exc:
        raise ConfigError(f"{path}, line {exc.line}: {exc.message}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f", line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{path}{at}: not valid YAML ({problem})") from None
    finally:
        loader.dispose()
    _check_integers(path, data, (), lines)
    return data, lines


# The line breaks of YAML 1.1 alone (requirement 9), each with its name and its escape in
# double quotes, which YAML 1.1 and 1.2 read alike.
_BREAKS_OF_1_1 = re.compile("[\x85\u2028\u2029]")
_BREAKS = {
    "\x85": ("NEXT LINE", "\\N"),
    "\u2028": ("LINE SEPARATOR", "\\L"),
    "\u2029": ("PARAGRAPH SEPARATOR", "\\P"),
}


def _refuse_line_breaks_of_yaml_1_1(path: Path, text: str) -> None:
    """Refuse the first U+0085, U+2028 or U+2029 in ``text`` (requirement 9), at its line and
    column as an editor that breaks lines at ``\\n`` alone counts them."""
    found = _BREAKS_OF_1_1.search(text)
    if found is None:
        return
    before = text[: found.start()]
    line = before.count("\n") + 1
    column = found.start() - before.rfind("\n")
    char = found.group()
    name, escape = _BREAKS[char]
    raise ConfigError(
        f"{path}, line {line}: the character U+{ord(char):04X} ({name}) "
        f"at column {column}, which YAML 1.1 (how this file is read) takes for a line break and "
        "YAML 1.2 and most editors for an ordinary character, so what the file says depends on "
        f'what reads it; remove it, or write "{escape}" inside double quotes for the '
        "character itself"
    )


def read_file(
    path: Path,
    limit: int = MAX_BYTES,
    what: str = "a settings file",
    error: type[OloproofError] = ConfigError,
) -> bytes:
    """The bytes of the file ``path``, ``what`` the file is, refused with ``error`` when it is
    no regular file or holds more than ``limit`` bytes (requirement 0). Opened without
    waiting, so a named pipe is seen for what it is before anything waits on a writer."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except OSError as exc:
        why = LOOKUP_FAULTS.get(exc.errno or 0, exc.strerror)
        raise error(f"{path}: cannot read it ({why})") from None
    try:
        found = os.fstat(fd)
        if stat.S_ISDIR(found.st_mode):
            raise error(f"{path}: cannot read it (Is a directory)")
        kind = not_a_file(found.st_mode)
        if kind is not None:
            raise error(f"{path}: cannot read it ({kind}, not a regular file)")
        if found.st_size > limit:
            raise error(f"{path}: {found.st_size} bytes, more than {what} may hold ({limit})")
        raw = _read_at_most(fd, limit + 1)
    except OSError as exc:
        raise error(f"{path}: cannot read it ({exc.strerror})") from None
    finally:
        os.close(fd)
    if len(raw) > limit:  # grown since it was looked at
        raise error(f"{path}: more than {what} may hold ({limit} bytes)")
    return raw


def input_fault(path: Path) -> str | None:
    """Why the file ``path`` names cannot be read: it cannot be looked up (a loop of symbolic
    links, a name too long), or it is no regular file (``a named pipe, not a regular file``),
    which a reader would wait on for ever, or never reach the end of. None when it can be read,
    and when it is missing or a folder: its reader says so."""
    fault = lookup_fault(path)
    if fault is not None:
        return fault
    try:
        kind = not_a_file(os.stat(path).st_mode)
    except OSError:
        return None
    return None if kind is None else f"{kind}, not a regular file"


def refuse_unreadable(path: Path) -> None:
    """Refuse the file ``path`` names when ``input_fault`` says why it cannot be read: before
    its path is resolved (``Path.resolve`` raises a bare ``RuntimeError`` on a loop of
    symbolic links) or anything is written."""
    fault = input_fault(path)
    if fault is not None:
        raise ConfigError(f"{path}: cannot read it ({fault})")


def recorded_file(path: Path, *, name_only: bool = False) -> Path:
    """``path`` resolved, for a record to name: refused when it cannot be read
    (``refuse_unreadable``, before it is resolved) or when the ledger could not hold it
    (``usercode.unrecordable_path``), its name alone with ``name_only`` (a project file's
    folder is the ledger's to refuse: the ledger lives there). The ledger refuses such a path
    naming nothing, once a command has made it."""
    refuse_unreadable(path)
    resolved = path.resolve()
    unrecordable = unrecordable_path(path.name if name_only else str(resolved))
    if unrecordable is not None:
        raise ConfigError(unrecordable)
    return resolved


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _reader_problem(exc: yaml.reader.ReaderError) -> str:
    """``unacceptable character #x0000: special characters are not allowed``."""
    character = exc.character
    code = character if isinstance(character, int) else ord(character)
    return f"unacceptable character #x{code:04x}: {exc.reason}"


class _Walk:
    """Records the line of every key path; refuses duplicate keys, merges that give one key
    two values, cycles and huge files."""

    def __init__(self, path: Path, lines: Lines, tagged: set[int]) -> None:
        self.path = path
        self.lines = lines
        self.tagged = tagged  # the scalars given a tag (``_Loader``)
        self.values = 0
        self.holding: set[int] = set()  # the nodes that hold the one being walked
        self.gives: dict[int, Keys] = {}  # each mapping's keys where it is merged, by node

    def node(self, node: yaml.Node, at: tuple[Any, ...]) -> None:
        line = node.start_mark.line + 1
        self.lines.setdefault(at, line)
        self.values += 1
        if self.values > MAX_VALUES:
            raise ConfigError(
                f"{self.path}: more than {MAX_VALUES} values (YAML aliases repeat what they name)"
            )
        if isinstance(node, yaml.ScalarNode):
            self.scalar(node, at)
        if id(node) in self.holding:
            where = ".".join(str(p) for p in at)
            raise ConfigError(
                f"{self.path}, line {line}: {where}: a YAML alias that refers to the node "
                "holding it"
            )
        if isinstance(node, yaml.MappingNode | yaml.SequenceNode):
            self.holding.add(id(node))
            try:
                self._children(node, at)
            finally:
                self.holding.discard(id(node))

    def scalar(self, node: yaml.ScalarNode, at: tuple[Any, ...]) -> None:
        word = node.value
        where = f"{self.path}, line {node.start_mark.line + 1}: "
        where += ".".join(str(p) for p in at) or "(top level)"
        if "\0" in word:
            raise ConfigError(f"{where}: a NUL character (\\0), which no setting can hold")
        tagged = id(node) in self.tagged
        shown = f"a bare {word}"
        if tagged:
            quote = node.style or ""
            shown = f"{quote}{word}{quote} tagged !!{node.tag.rsplit(':', 1)[-1]}"
        if node.tag == _VALUE:  # PyYAML has no constructor for it: its error named only the tag
            fix = "remove the tag" if tagged else f'write "{word}" for the text'
            raise ConfigError(
                f"{where}: {shown} is read by YAML 1.1 as its 'value' key, which no setting "
                f"can hold; {fix}"
            )
        problem = _unreadable(node.tag, word, tagged, shown)
        # A bare word's type is read from how it looks; a number's tag (!!int '017') reads
        # the quoted text as each YAML reads a bare one.
        if problem is None and (node.style is None or node.tag in _NUMBERS):
            problem = _read_two_ways(node.tag, word, tagged, shown)
        if problem is not None:
            raise ConfigError(f"{where}: {problem}")
        if node.tag != _BOOL or word.lower() in ("true", "false"):
            return
        meant = str(word.lower() in ("yes", "y", "on")).lower()
        raise ConfigError(
            f"{where}: a bare {word} is read by YAML as the boolean {meant}; write {meant}, or "
            f'"{word}" for the text'
        )

    def _children(self, node: yaml.Node, at: tuple[Any, ...]) -> None:
        if isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self.node(item, (*at, index))
            return
        own: Keys = {}
        merge: tuple[yaml.Node, int] | None = None
        for key_node, value_node in node.value:
            key = key_node.value
            line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):  # `? [a, b]`: no setting is named so
                what = "list" if isinstance(key_node, yaml.SequenceNode) else "mapping"
                where = ".".join(str(p) for p in at) or "(top level)"
                raise ConfigError(
                    f"{self.path}, line {line}: {where}: a key must be a name, not a {what}"
                )
            self.scalar(key_node, at)
            ident = (key_node.tag, key)
            if key_node.tag == _MERGE:
                first = merge[1] if merge is not None else None
            else:
                first = own.get(ident)
            if first is not None:
                raise ConfigError(self._twice(key, line, first, key_node.tag == _MERGE))
            self.lines[(*at, key)] = line
            self.node(value_node, (*at, key))
            if key_node.tag == _MERGE:
                merge = (value_node, line)
            else:
                own[ident] = line
        if merge is not None:
            for ident, at_line in self._merged(*merge, own, at).items():
                own.setdefault(ident, at_line)
                self.lines.setdefault((*at, ident[1]), at_line)
        self.gives[id(node)] = own

    def _twice(self, key: str, line: int, first: int, merge: bool) -> str:
        tail = (
            "readers of YAML disagree on what a second merge does, so merge once, a list of "
            "mappings if need be (<<: [*a, *b])"
            if merge
            else "the second would silently replace the first"
        )
        return (
            f"{self.path}, line {line}: key {key!r} appears twice in one mapping (first on "
            f"line {first}); {tail}"
        )

    def _merged(self, value: yaml.Node, line: int, own: Keys, at: tuple[Any, ...]) -> Keys:
        """The keys a merge gives the mapping that holds it, each with the line it is on."""
        sources = value.value if isinstance(value, yaml.SequenceNode) else [value]
        merged: Keys = {}
        for source in sources:
            # A source that is not a mapping gives no keys; PyYAML refuses it when it builds
            # the data.
            for ident, at_line in self.gives.get(id(source), {}).items():
                if ident in merged and ident not in own:
                    first = merged[ident]
                    lines = (
                        f"both on line {first}"
                        if first == at_line
                        else f"on lines {first} and {at_line}"
                    )
                    where = ".".join(str(p) for p in at) or "(top level)"
                    raise ConfigError(
                        f"{self.path}, line {line}: {where}: two of the mappings merged here "
                        f"give {ident[1]!r} ({lines}), and readers of YAML disagree on which "
                        f"one wins; give {ident[1]!r} in one of them only, or beside the << to "
                        "override both"
                    )
                merged.setdefault(ident, at_line)
        return merged


def _unreadable(tag: str, word: str, tagged: bool, shown: str) -> str | None:
    """Why PyYAML cannot give the scalar ``word`` the value ``tag`` names (requirement 8), or
    None; ``shown`` is how the sentence names it.

    A tag on text not written as what it names (``!!int 0.5``, ``!!bool maybe``) made PyYAML
    fail with a traceback, or give a value the text does not say: it reads ``!!null 0.9`` as
    null whatever the text, which dropped a rule's bound. A bare word of a number's form that
    is none (``0b_``, binary without a digit) failed the same way. Text of a number longer
    than any setting needs is left to the checks on its value."""
    kind = _KINDS.get(tag)
    if kind is None:
        return None
    written = _RESOLVER.resolve(yaml.ScalarNode, word, (True, False))  # type: ignore[no-untyped-call]  # untyped in stubs
    if written == tag or (tag == _FLOAT and written == _INT):  # !!float 1 is 1.0 to every reader
        if len(word) > _INT_DIGITS:
            return None
        try:
            _CONSTRUCTOR.yaml_constructors[tag](_CONSTRUCTOR, yaml.ScalarNode(tag, word))
            return None
        except (ValueError, LookupError, AttributeError):  # int('', 2), a bool not known...
            pass
    if tagged:
        return f"{shown} is not {kind} as YAML writes one; remove the tag, or write {kind}"
    return (
        f"{shown} has the form of {kind} to YAML 1.1, which cannot read it as one; write "
        f'{kind}, or "{word}" for the text'
    )


def _read_two_ways(tag: str, word: str, tagged: bool, shown: str) -> str | None:
    """Why YAML 1.1 and YAML 1.2 read the bare ``word`` differently (requirement 6), or None;
    ``shown`` is how the sentence names it (``a bare 017``).

    A word longer than any number a setting needs is left to the checks on its value."""
    if len(word) > _INT_DIGITS:
        return None
    if tag == _TIMESTAMP and not tagged:  # 2024-01-01: a date or time in YAML 1.1 alone
        return (
            f"{shown} is read by YAML 1.1 as a date and by YAML 1.2 as text; write "
            f'"{word}" for the text'
        )
    if tag in _NUMBERS:
        if not (_CORE_NUMBER.fullmatch(word) or _CORE_SPECIAL.fullmatch(word)):
            # 1:30, 1_000, 0b11: YAML 1.1's own forms
            value = _written(yaml.safe_load(word))
            return (
                f"{shown} is read by YAML 1.1 as the number {value} and by YAML 1.2 as "
                f'text; write {value}, or "{word}" for the text'
            )
        if _LEADING_ZERO.fullmatch(word) and int(word, 8) != int(word, 10):
            return (
                f"{shown} is read by YAML 1.1 as the octal number {int(word, 8)} and by "
                f"YAML 1.2 as {int(word, 10)}; write {int(word, 10)}, or {int(word, 8)} if "
                "octal is meant"
            )
    elif tag == _STR and not tagged and _CORE_NUMBER.fullmatch(word):  # 1e3, 0o17, 09
        number = _core_number(word)
        if number == number and abs(number) != float("inf"):
            value = _written(number)
            return (
                f"{shown} is read by YAML 1.1 as text and by YAML 1.2 as the number "
                f'{value}; write {value}, or "{word}" for the text'
            )
    return None


def _core_number(word: str) -> int | float:
    """The number YAML 1.2's core schema reads ``word`` (one of its numbers) as."""
    if word.startswith(("0o", "0x")):
        return int(word, 0)
    if any(c in word for c in ".eE"):
        return float(word)
    return int(word, 10)


def _written(number: int | float) -> str:
    """``number`` as both YAML 1.1 and 1.2 read it: a float's exponent with a dot before it
    and a sign (``1.0e-05``), as YAML 1.1 needs."""
    text = repr(number)
    if isinstance(number, int) or "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}e{exponent if exponent[0] in '+-' else '+' + exponent}"


def _check_integers(path: Path, data: Any, at: tuple[Any, ...], lines: Lines) -> None:
    if isinstance(data, bool):
        return
    if isinstance(data, int) and not INT_MIN <= data <= INT_MAX:
        line = line_for(at, lines)
        where = f"{path}, line {line}" if line is not None else str(path)
        key = ".".join(str(p) for p in at)
        raise ConfigError(f"{where}: {key}: the integer {data} is outside -2**64 .. 2**64-1")
    if isinstance(data, dict):
        for key, value in data.items():
            _check_integers(path, value, (*at, key), lines)
    elif isinstance(data, list):
        for index, value in enumerate(data):
            _check_integers(path, value, (*at, index), lines)


def line_for(loc: tuple[Any, ...], lines: Lines) -> int | None:
    """The line of a key path, or of the nearest key above it that has one."""
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return None
