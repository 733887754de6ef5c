r"""Keep configured secrets out of everything Oloproof stores or prints.

Requirements:

1. One registry. An adapter that reads a secret from the environment (an HTTP system's header
   value given as ``${NAME}``, a judge's API key) registers the value with ``register`` as it
   reads it; nothing else needs to know about that adapter. A new adapter only registers its
   own secrets. The user's code reads its own, out of sight: before it runs, the values of the
   variables named like credentials and of those the project lists are registered
   (``register_environment``); those the project lists, only while it runs (requirement 8).
2. Applied at the chokepoints, not per adapter: ``oloproof.events.make`` (every event the
   ledger stores is built there) passes each body through ``redact``, and the command line
   wraps its output streams in ``RedactingStream``, so every printed line (errors included)
   passes through ``redact_text``, a secret a system prints a few characters at a time too
   (``RedactingStream``). Every occurrence of a registered value in a string (or in
   bytes) becomes ``[redacted]``, in map keys as well as values.
3. An occurrence is recognised in the forms an endpoint plausibly echoes a value in: any of
   its characters (all, some or none) may be written escaped, through up to three layers of
   escaping in any order, and the whole occurrence, escapes included, is replaced. A layer is
   one of three families:

   - The string escapes of JSON: ``\/``, ``\"``, ``\\``, ``\n`` and the other short ones,
     ``\u002F`` or ``\u002f`` (a surrogate pair beyond the BMP); and those JavaScript and
     Python add: a backslash before any ASCII punctuation (``\'``), ``\x2f``,
     ``\U0001f600``.
   - Percent-encoding of its UTF-8 bytes, as a URL that quotes the value has it: ``%2F`` or
     ``%2f``, ``+`` for a space.
   - HTML character references: ``&#43;``, ``&#x2B;``, ``&quot;``.

   The first layer may write any character of the value in any form of its family. A layer
   over an escape writes the characters the escape is made of as encoders do: JSON writes its
   backslash as ``\\`` or ``\u005c`` and may write its ``&``, ``%``, ``#``, ``;`` or ``+`` as
   ``\u0026`` and the like (Go's ``encoding/json`` writes ``&#43;`` as ``\u0026#43;``);
   percent-encoding writes any of them (PHP's ``\/`` in a URL is ``%5C%2F``); HTML writes its
   ``&`` and ``+`` (``&amp;#43;``). The letters and digits of an escape stay as they are. So
   JSON text quoted in JSON, three times over, writes a ``/`` as ``\\\\\\\/``, and a URL quoted
   three times writes it as ``%25252F``.

   Within a run of backslashes in a value only the run is recognised, not how many
   backslashes it holds: each is written as one to eight, and an escape of the next character
   may take some of them, so any number, up to eight for each, is taken as the run.
4. Text cut short before it is stored (an excerpt of a body) is cut with ``cut``, which never
   ends part way through a secret, in any of those forms: the first characters of one are not
   recognised as it. Text put on one line (``one_line``) keeps each secret as it is, so that a
   secret holding two spaces or a tab is still recognised when the line is stored.
5. The run report says when it happened: ``stored_count()`` counts the occurrences replaced in
   what was stored, and a run records how many it replaced (``Redacted: 16 occurrences of
   configured secrets``).
6. Costs nothing until a secret is registered: every function checks one module attribute and
   returns its argument unchanged. Once one is, a text holding none of the characters an
   escaped form needs (``\``, ``%``, ``&``; ``+`` when a secret has a space) can only hold the
   values as they are, and is searched for those alone in one pass, as fast as when no escape
   was recognised; only other texts are searched for every form, one value at a time. Each
   value's pattern is compiled once, when it is registered.
7. A search takes time in proportion to the text, whatever the text: no reply can make it
   slow. Once a character of a value has matched, the engine does not go back on how (an
   atomic group), and a run of backslashes is taken whole (a possessive repeat), so that it
   never tries the ways of splitting a text among the characters one after another. So a
   character's forms are tried longest first where one can open another (``&amp;`` before
   ``&``, ``\u002525`` before ``\u0025``). Where the end of one value is the start of another
   (or of itself), occurrences may overlap, and each overlapping run of them is replaced whole:
   either alone would leave part of the other. A search then goes on from inside what it found,
   so a text packed with occurrences of a value that repeats itself (``abababab``) takes longer
   in proportion to the value's length; values that share no such part are searched as before.
8. A value registered because a project declared it is a secret of that project alone: inside
   a ``project_scope`` (``oloproof.evaluate``, ``oloproof.diagnose``) it is held until the
   scope ends, then released, so that a project evaluated next in the same process, whose
   system may rightly answer that word, is stored and judged as in a process of its own. A
   released value stays registered while anything else holds it: an adapter or a variable
   named like a credential (``register``, for the rest of the process), or a scope going on in
   another thread, which holds its own count of it; runs side by side may thus keep out each
   other's values, never let out their own. Once a process prints through a
   ``RedactingStream`` (the command line), nothing declared is released: a line it prints
   later, up to an error the command ends with, may hold one. An error leaving a scope has
   every registered value replaced in its messages first: the caller may print it. Outside a
   scope (``plan_run`` called directly) a declared value is registered for the rest of the
   process, and its errors are redacted all the same (``redact_raised``).
9. A command that reads the ledger keeps out of what it prints or writes out (an export, the
   viewer's pages) the values a run in its place would keep out (``register_environment``
   with ``shown_only``): a run recorded before a secret was declared holds its value. They
   are never applied to what is stored or derived (``redact``, ``cut``, ``one_line``): what
   such a command records (a comparison) or derives again to check it (``verify``, a
   diagnosis) must be what the ledger's events give, whatever the environment holds.
   ``holds_secret`` tells whether a text holds any registered value, shown only or not.

Values shorter than ``MIN_LENGTH`` characters are not registered: they occur inside ordinary
text ("1", "yes"), replacing them would change outputs and so verdicts, and no credential is
that short. Apart from requirement 8 the registry lives as long as the process; ``forget_all``
is for tests.

Not recognised: a value an endpoint transformed rather than escaped (base64 of
``user:secret``, a hash, a change of case, a part of it), or escaped through more than three
layers. The error of user code is the exception for a part: ``redact_pieces`` replaces the runs
of at least ``PIECE`` characters of a value there, which libraries leave when they shorten what
they echo. Oloproof's adapters send each value as it was read, so an endpoint that repeats what
it got repeats that, in one of the forms above; and a pattern for a transform would miss part
of the value (base64 writes each character differently at each of three offsets, mixed with
its neighbours') or match ordinary text. A value whose own characters spell the start of an
escape (``%25``, ``&amp;``, ``\u005c``) is recognised as it is, but may not be when others of
its characters are escaped.
"""

from __future__ import annotations

import atexit
import os
import re
import string
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from typing import IO, Any, Final

__all__ = [
    "MIN_LENGTH",
    "REDACTED",
    "RedactingStream",
    "add_stored",
    "cut",
    "forget_all",
    "holds_secret",
    "keeps_out_any",
    "kept_out",
    "kept_out_all",
    "kept_out_found",
    "one_line",
    "project_scope",
    "redact",
    "redact_pieces",
    "redact_raised",
    "redact_shown",
    "redact_text",
    "register",
    "register_environment",
    "stored_count",
]

REDACTED: Final = "[redacted]"
MIN_LENGTH: Final = 6

_LAYERS: Final = 3
_LEADING_ZEROS: Final = 3  # that an HTML character reference may have (&#x002B;)
_SHORT_ESCAPES: Final = {"\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t"}
_BACKSLASHED: Final = frozenset(string.punctuation + " ")
_ENTITIES: Final = {"&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "apos"}
# The characters of an escape that a layer over it may write escaped (percent-encoding writes
# any), besides the value's own characters that the escape holds (the "/" of "\/").
_JSON_REWRITES: Final = frozenset("\\%&#;+")
_HTML_REWRITES: Final = frozenset("&+\"'<>")


@dataclass(frozen=True, slots=True)
class _Patterns:
    """What the registered values are searched with (requirement 6)."""

    plain: re.Pattern[str]  # every value as it is
    # Each value in every form, then as it is, the longest value first
    every: tuple[re.Pattern[str], ...]
    plus: bool  # whether a value has a space, which "+" may stand for
    shortest: int  # the fewest characters an occurrence can take: the shortest value as it is
    longest: int  # the most characters one occurrence can take, in any form
    values: tuple[str, ...]  # the values, as they are
    # How many characters of text the end of one occurrence may share with the start of
    # another (the end of one value is the start of another, or of itself), in any form; 0
    # when none can. Each search goes on that far back from the end of what it found.
    overlap: int


_lock = threading.Lock()
# Each value's patterns (in every form, as it is) and the most characters one occurrence takes,
# compiled once: kept once the value is released, for the next run that declares it.
_compiled: dict[str, tuple[tuple[re.Pattern[str], ...], int]] = {}
_kept: set[str] = set()  # registered for the rest of the process
# The values projects declared, with how many of the calls going on hold each (requirement 8):
# a count, since runs may go on side by side in threads and declare the same value.
_holders: dict[str, int] = {}
_keep_declared = False  # once output passes a RedactingStream, no declared value is released
# Kept out of what is printed or written out only, never of what is stored (requirement 9)
_shown: set[str] = set()
_patterns: _Patterns | None = None  # what is stored is searched with; None: the fast path
_shown_patterns: _Patterns | None = None  # what is printed or written out is searched with
_stored = 0
# What the call going on in this context (a ``project_scope``) holds, or None outside one.
_scope: ContextVar[list[str] | None] = ContextVar("oloproof_redaction_scope", default=None)


def register(value: str | None, *, escaped: bool = True) -> None:
    """Treat ``value`` as a secret for the rest of the process (a value read from the
    environment); with ``escaped`` false, recognise it only as it is (its escaped forms take a
    pattern whose compiling grows with the value: seconds for a private key's 1,700
    characters)."""
    if not isinstance(value, str):
        return
    with _lock:
        if _compile(value, escaped) and value not in _kept:
            _kept.add(value)
            _refresh()


@contextmanager
def project_scope() -> Iterator[None]:
    """Keep out the values projects declare inside this block (``register_environment``) until
    it ends, not for the rest of the process: a project evaluated later may answer that very
    word. Values registered otherwise (``register``) are kept all the same."""
    held: list[str] = []
    token = _scope.set(held)
    try:
        yield
    except BaseException as exc:
        # The error reaches the caller, who may print it, as the command line's errors are not
        # printed: it is redacted as they are, while the project's values are still held.
        redact_raised(exc)
        raise
    finally:
        _scope.reset(token)
        _release(held)


def redact_raised(exc: BaseException) -> None:
    """Replace every secret in the messages of ``exc`` and of the exceptions it was raised from
    or while handling: their text arguments, text attributes (an ``OloproofError``'s message
    and where) and notes. One that cannot be changed (a frozen ``attrs`` exception, as the
    ``jsonschema`` stack raises) is taken out of the chain that holds it instead."""
    seen: set[int] = set()
    pending: list[tuple[BaseException | None, BaseException | None]] = [(exc, None)]
    while pending:
        one, holder = pending.pop()
        if one is None or id(one) in seen:
            continue
        seen.add(id(one))
        if not _redacted_in_place(one) and holder is not None:
            if holder.__cause__ is one:
                holder.__cause__ = None
            if holder.__context__ is one:
                holder.__context__ = None
            continue
        pending += [(one.__cause__, one), (one.__context__, one)]


def _redacted_in_place(exc: BaseException) -> bool:
    """Whether every text of ``exc`` could be redacted in place (``redact_raised``)."""
    try:
        exc.args = tuple(redact_text(a) if isinstance(a, str) else a for a in exc.args)
        for name, value in list(getattr(exc, "__dict__", {}).items()):
            if isinstance(value, str):
                setattr(exc, name, redact_text(value))
    except (AttributeError, TypeError):  # frozen: attrs raises FrozenInstanceError, one of these
        return False
    notes = getattr(exc, "__notes__", None)
    if isinstance(notes, list):
        notes[:] = [redact_text(n) if isinstance(n, str) else n for n in notes]
    return True


def _hold(value: str, held: list[str]) -> None:
    with _lock:
        if not _compile(value, True):
            return
        held.append(value)
        _holders[value] = _holders.get(value, 0) + 1
        if _holders[value] == 1 and value not in _kept:
            _refresh()


def _release(held: list[str]) -> None:
    with _lock:
        if _keep_declared:  # what is printed from now on may still hold one
            _kept.update(held)
        changed = False
        for value in held:
            _holders[value] -= 1
            if not _holders[value]:
                del _holders[value]
                changed = changed or value not in _kept
        if changed:
            _refresh()


def _compile(value: str, escaped: bool) -> bool:
    """Compile ``value``'s patterns unless they are; False for what is not a secret (under
    ``_lock``)."""
    if len(value) < MIN_LENGTH:
        return False
    if value not in _compiled:
        plain = re.compile(f"({re.escape(value)})")
        if escaped:
            form = _value(value)
            _compiled[value] = ((re.compile(form.source), plain), form.longest)
        else:
            _compiled[value] = ((plain,), len(value))
    return True


def _refresh() -> None:
    """Search with the values registered now, kept or held, and shown (under ``_lock``)."""
    global _patterns, _shown_patterns
    stored = _kept | _holders.keys()
    _patterns = _patterns_of(stored)
    _shown_patterns = _patterns if _shown <= stored else _patterns_of(stored | _shown)


def _patterns_of(values: set[str]) -> _Patterns | None:
    # The longest value wins an overlap; values as long as each other, in one order every time.
    ordered = sorted(values, key=lambda v: (-len(v), v))
    if not ordered:
        return None
    return _Patterns(
        plain=re.compile("(" + "|".join(re.escape(v) for v in ordered) + ")"),
        every=tuple(pattern for v in ordered for pattern in _compiled[v][0]),
        plus=any(" " in v for v in ordered),
        shortest=len(ordered[-1]),
        longest=max(_compiled[v][1] for v in ordered),
        values=tuple(ordered),
        overlap=max(_opening_at_end(v, ordered) for v in ordered)
        * max(-(-_compiled[v][1] // len(v)) for v in ordered),  # the widest a character is
    )


# Environment variables whose names say they hold a credential. Matched at the end of the name,
# which is where the conventions put the word (GEMINI_API_KEY, HF_TOKEN, AWS_SECRET_ACCESS_KEY,
# PGPASSWORD), and not in the middle (TOKENIZERS_PARALLELISM, MAX_TOKENS). Not CREDENTIALS:
# GOOGLE_APPLICATION_CREDENTIALS names a file, whose path errors would then lose.
_CREDENTIAL_NAME: Final = re.compile(
    r"(?:API_?KEY|ACCESS_?KEY|SECRET_?KEY|PRIVATE_?KEY|TOKEN|SECRET|PASSWORD|PASSWD)$",
    re.IGNORECASE,
)


# The shortest value of a variable named like a credential that is taken for one. Keys and
# tokens are longer (a GitHub token 40 characters, an OpenAI key over 50); a shorter value is
# more likely a word (a local database's PGPASSWORD=postgres), and replacing it in every answer
# about Postgres would change their verdicts. A project lists such a secret under ``secrets:``.
SHORTEST_FOUND: Final = 16
# The longest such value that is also recognised escaped. Keys and tokens, which a URL or an
# error repeats, are far shorter; a longer one (a private key's PEM text) is recognised as it
# is, which compiles in a millisecond where its escaped forms took seconds at the start of
# every run.
ESCAPED_UP_TO: Final = 256


def register_environment(declared: Iterable[str] = (), *, shown_only: bool = False) -> None:
    """Register the values of the environment variables named like credentials
    (``_CREDENTIAL_NAME``) for the rest of the process, and of those ``declared`` (a project's
    ``secrets:``, in every form whatever their length) until the ``project_scope`` this is
    called in ends (for the rest of the process outside one): the user's own code reads them,
    and an error of its client may repeat one (a URL with ``?key=``). With ``shown_only``
    (a command that reads the ledger), all of them are kept out of what is printed or written
    out only, for the rest of the process (requirement 9)."""
    wanted = set(declared)
    held = _scope.get()
    for name, value in os.environ.items():
        # Declared first, so that a value both declared and found by its name is recognised
        # escaped, whatever its length.
        if name in wanted:
            if shown_only:
                _show(value)
            elif held is None:
                register(value)
            else:
                _hold(value, held)
        if _CREDENTIAL_NAME.search(name) and len(value) >= SHORTEST_FOUND:
            (_show if shown_only else register)(value, escaped=len(value) <= ESCAPED_UP_TO)


def _show(value: str, escaped: bool = True) -> None:
    with _lock:
        if _compile(value, escaped) and value not in _shown:
            _shown.add(value)
            _refresh()


# ---------------------------------------------------------------------------- the patterns
#
# Each function gives a pattern of one character written through at most ``layers`` layers of
# escaping (requirement 3). A form that opens with backslashes opens with a possessive run of
# them, taken whole, and what follows the run says which form it is; the value's own
# backslashes join that run (requirement 7).


@dataclass(frozen=True, slots=True)
class _Form:
    source: str  # a regular expression
    longest: int  # the most characters it matches


def _text(text: str) -> _Form:
    return _Form(re.escape(text), len(text))


def _then(*parts: _Form) -> _Form:
    return _Form("".join(p.source for p in parts), sum(p.longest for p in parts))


def _either(*forms: _Form) -> _Form:
    """Any of ``forms``, tried in order: one that can be the start of a later one comes after
    it, or the engine would settle for the shorter."""
    if len(forms) == 1:
        return forms[0]
    return _Form("(?:" + "|".join(f.source for f in forms) + ")", max(f.longest for f in forms))


def _value(value: str) -> _Form:
    """The pattern of ``value``, whose group 1 is an occurrence: each character, or run of
    backslashes with the character after it, in turn."""
    parts: list[_Form] = []
    opens = ""
    for found in re.finditer(r"(\\*)(.?)", value, re.DOTALL):
        if not found.group():
            continue
        # Each backslash of a run written as up to 2**_LAYERS
        backslashes, after = len(found.group(1)) * 2**_LAYERS, found.group(2)
        if not backslashes:
            form = _written(after, _LAYERS)
        elif not after:
            form = _backslashes(_LAYERS, backslashes)
        else:
            # The run and the escape of the next character share the backslashes.
            escape = _then(
                _backslashes(_LAYERS, backslashes + 2**_LAYERS - 1),
                _either(*_after(after, _LAYERS)),
            )
            other = _then(_backslashes(_LAYERS, backslashes), _opening(after, _LAYERS))
            # A letter after backslashes may open an escape ("\u0075" is a "u"): the longer
            # first. Other characters' forms after the run are the longer ("\\%2F" is "\/").
            form = _either(escape, other) if after.isalnum() else _either(other, escape)
        if not parts:  # what an occurrence can open with
            opens = re.escape(after) + r"\\%&" + ("+" if after == " " else "")
        parts.append(_Form(f"(?>{form.source})", form.longest))
    body = _then(*parts)
    # The engine skips straight to the next place an occurrence could start only when the
    # pattern opens with a set of characters; several times slower otherwise. So it opens with
    # one (the occurrence's first), and the occurrence is matched from there by looking back
    # over it.
    return _Form(f"[{opens}](?<=(?=({body.source}))(?s:.))", body.longest)


@cache
def _written(c: str, layers: int) -> _Form:
    """``c`` in any of its forms."""
    if c == "\\":
        return _backslashes(layers, 2**layers)
    after = _after(c, layers)
    if not after:
        return _opening(c, layers)
    # The backslash of c's own escape and those of the layers over it, or of the escape of
    # its "&" or "%"
    return _either(
        _then(_backslashes(layers - 1, 2**layers - 1), _either(*after)), _opening(c, layers)
    )


@cache
def _opening(c: str, layers: int) -> _Form:
    """``c``'s forms that do not open with a backslash."""
    forms = []
    if layers:
        if layers == _LAYERS or c in _HTML_REWRITES:
            forms.append(_then(_opening("&", layers - 1), _reference(c, layers - 1)))
        forms.append(_then(_opening("%", layers - 1), _percent(c, layers - 1)))
        if c == " ":
            forms.append(_opening("+", layers - 1))
    if c != "\\":
        forms.append(_text(c))
    return _either(*forms)


@cache
def _after(c: str, layers: int, own: bool = True) -> tuple[_Form, ...]:
    """What may follow the backslashes a form of ``c`` opens with, if anything: its reference
    or percent-encoding with its "&" or "%" escaped, or (``own``) what follows the backslash of
    its own escape."""
    forms = []
    if layers > 1:
        if layers == _LAYERS or c in _HTML_REWRITES:
            amp = _after("&", layers - 1)
            forms += [_then(_either(*amp), _reference(c, layers - 1))] if amp else []
        percent = _after("%", layers - 1)
        forms += [_then(_either(*percent), _percent(c, layers - 1))] if percent else []
        if c == " ":
            forms += _after("+", layers - 1)
    if own and layers and (layers == _LAYERS or c in _JSON_REWRITES):
        forms.append(_escaped(c, layers))
    return tuple(forms)


def _escaped(c: str, layers: int) -> _Form:
    """What follows the backslash of ``c``'s own escape."""
    code = ord(c)
    if code < 0x10000:
        forms = [_Form(f"u{_hex(code, 4)}", 5)]
    else:  # a UTF-16 surrogate pair, as JSON writes it
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        between = _backslashes(layers - 1, 2 ** (layers - 1))
        forms = [
            _then(_Form(f"u{_hex(high, 4)}", 5), between, _Form(f"u{_hex(low, 4)}", 5)),
            _Form(f"U{_hex(code, 8)}", 9),
        ]
    if layers == _LAYERS:  # the forms no encoder writes over another escape
        if code < 0x100:
            forms.append(_Form(f"x{_hex(code, 2)}", 3))
        if c in _SHORT_ESCAPES:
            forms.append(_text(_SHORT_ESCAPES[c]))
        elif c in _BACKSLASHED:  # c itself, which the layers over it may write again
            forms += [*_after(c, layers - 1, own=False), _opening(c, layers - 1)]
    return _either(*forms)


@cache
def _backslash(layers: int) -> _Form:
    """One backslash not written as two: as it is, percent-encoded, as a reference (those of
    a value), or ``\u005c``, over and over."""
    if not layers:
        return _text("\\")
    forms = []
    if layers == _LAYERS:
        forms.append(_then(_written("&", layers - 1), _reference("\\", layers - 1)))
    forms += [_then(_written("%", layers - 1), _percent("\\", layers - 1)), _text("\\")]
    return _then(_either(*forms), _Form(f"(?:u{_hex(0x5C, 4)}){{0,{layers}}}", 5 * layers))


def _backslashes(layers: int, most: int) -> _Form:
    """A run of one to ``most`` backslashes, taken whole."""
    one = _backslash(layers)
    return _Form(f"(?:{one.source}){{1,{most}}}+", most * one.longest)


def _percent(c: str, layers: int) -> _Form:
    """``c``'s percent-encoding after its first ``%``."""
    encoded = _utf8(c)
    parts = [_Form(_hex(encoded[0], 2), 2)]
    for byte in encoded[1:]:
        parts += [_written("%", layers), _Form(_hex(byte, 2), 2)]
    return _then(*parts)


def _reference(c: str, layers: int) -> _Form:
    """``c``'s HTML character reference after its ``&``."""
    code = ord(c)
    zeros = f"0{{0,{_LEADING_ZEROS}}}"
    number = _Form(f"(?:{zeros}{code}|[xX]{zeros}{_hex(code)})", 1 + _LEADING_ZEROS + 8)
    forms = [_then(_written("#", layers), number)]
    if c in _ENTITIES:
        forms.append(_text(_ENTITIES[c]))
    return _then(_either(*forms), _written(";", layers))


def _hex(number: int, width: int = 1) -> str:
    """A pattern of ``number`` in hexadecimal, each letter in either case."""
    return "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{number:0{width}x}")


def _utf8(c: str) -> bytes:
    # A value read from the environment holds the bytes that are not UTF-8 as lone
    # surrogates, which give those bytes back; any other lone surrogate is encoded as UTF-8
    # would encode it, were it allowed.
    try:
        return c.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return c.encode("utf-8", "surrogatepass")


def _searches(text: str, patterns: _Patterns) -> tuple[re.Pattern[str], ...]:
    """The patterns to search ``text`` with: every escaped form holds one of these characters,
    so a text without them is searched for the values as they are, in one pass. Other texts
    are searched for each value in every form, then as it is: a value whose characters spell
    the start of an escape is found whole that way, and in every form not always
    (requirement 7)."""
    if "\\" in text or "%" in text or "&" in text or (patterns.plus and "+" in text):
        return patterns.every
    return (patterns.plain,)


def _occurrences(
    pattern: re.Pattern[str], text: str, overlap: int = 0
) -> Iterator[tuple[int, int]]:
    """Where ``pattern`` finds an occurrence (its group 1) in ``text``, from the start, each
    after the one before starts, and ending at most ``overlap`` characters into it."""
    at = 0
    while (found := pattern.search(text, at)) is not None:
        start, end = found.span(1)
        at = max(start + 1, end - overlap)
        yield start, end


def _replaced(text: str, patterns: _Patterns) -> tuple[str, int]:
    """``text`` with every occurrence replaced, and how many were. All are found in ``text``
    as it came, so that a replacement never makes another (a value such as "redacted")."""
    found = _found(text, patterns)
    return _replaced_at(text, found) if found else (text, 0)


def _replaced_at(text: str, spans: list[tuple[int, int]]) -> tuple[str, int]:
    """``text`` with each of ``spans`` (in order) replaced, those that overlap as one, and how
    many replacements were made."""
    pieces, at = [], 0
    for start, end in spans:
        if start >= at:
            pieces += [text[at:start], REDACTED]
        at = max(at, end)  # one inside or overlapping the one before joins it
    return "".join(pieces) + text[at:], len(pieces) // 2


def _found(text: str, patterns: _Patterns) -> list[tuple[int, int]]:
    """Where the occurrences in ``text`` are, in order, none overlapping another."""
    if len(text) < patterns.shortest:  # most strings stored are names and ids
        return []
    found: list[tuple[int, int]] = []
    for pattern in _searches(text, patterns):
        merged: list[tuple[int, int]] = []
        for start, end in sorted([*found, *_occurrences(pattern, text, patterns.overlap)]):
            if merged and start < merged[-1][1]:
                # Inside one found before, or overlapping it (the end of one value the start
                # of another): replaced as one, since either alone would leave part of the other.
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        found = merged
    return found


def redact_text(text: str) -> str:
    """``text`` with every registered secret replaced (not counted: for printed output)."""
    patterns = _shown_patterns
    if patterns is None:
        return text
    return _replaced(text, patterns)[0]


def kept_out(text: str) -> str:
    """``text`` with every secret kept out of what is stored replaced, as ``redact`` replaces
    them, but not counted: for what stands for a value rather than storing it (a fingerprint's
    digest of the data the system's code reads), which must not let the value be found again
    from what is stored, nor change when only the value does (a key rotated)."""
    patterns = _patterns
    if patterns is None:
        return text
    return _replaced(text, patterns)[0]


def kept_out_all(value: Any) -> Any:
    """``value`` with every secret kept out of what is stored replaced in every string inside
    it, as ``kept_out`` replaces them in one text: for the key of a value stored redacted (a
    case's input), which must be the key of what is stored."""
    return kept_out_found(value)[0]


def keeps_out_any() -> bool:
    """Whether any secret is kept out of what is stored (so that a check for one can be skipped
    without a look at the value)."""
    return _patterns is not None


def kept_out_found(value: Any) -> tuple[Any, bool]:
    """``kept_out_all(value)``, and whether it replaced any secret: two values it makes equal
    are then not known to be equal (each secret is ``[redacted]`` alike)."""
    patterns = _patterns
    if patterns is None:
        return value, False
    found = [0]
    kept = _walk(value, patterns, found)
    return kept, bool(found[0])


def cut(text: str, limit: int) -> str:
    """``text``'s first ``limit`` characters, or fewer where the cut would fall inside a
    registered secret, in any form: it then ends before the secret, which is left out whole."""
    patterns = _patterns
    if patterns is None or len(text) <= limit:
        return text[:limit]
    window = text[: limit + patterns.longest]  # holds all of any occurrence the cut falls in
    searches = _searches(window, patterns)
    end, moved = limit, True
    while moved:  # a cut moved back to before one secret may fall inside another
        moved = False
        for pattern in searches:
            for start, stop in _occurrences(pattern, window, patterns.overlap):
                if start >= end:
                    break
                if stop > end:
                    end, moved = start, True
                    break
    return text[:end]


def one_line(text: str) -> str:
    """``text`` on one line, as ``" ".join(text.split())`` puts it, except that each registered
    secret in it is left as it is: with its whitespace made one space, a secret holding two
    spaces or a tab would no longer be recognised where the line is stored."""
    patterns = _patterns
    if patterns is None:
        return " ".join(text.split())
    spans = sorted(
        span
        for pattern in _searches(text, patterns)
        for span in _occurrences(pattern, text, patterns.overlap)
    )
    pieces, at = [], 0
    for start, end in spans:
        if end <= at:  # inside one already kept (a value inside another)
            continue
        start = max(start, at)
        pieces += [re.sub(r"\s+", " ", text[at:start]), text[start:end]]
        at = end
    pieces.append(re.sub(r"\s+", " ", text[at:]))
    pieces[0] = pieces[0].lstrip()
    pieces[-1] = pieces[-1].rstrip()
    return "".join(pieces)


def redact(value: Any) -> Any:
    """``value`` (a body to store) with every registered secret replaced in every string and
    bytes inside it, counting the replacements (``stored_count``)."""
    patterns = _patterns
    if patterns is None:
        return value
    found = [0]
    cleaned = _walk(value, patterns, found)
    if found[0]:
        global _stored
        with _lock:
            _stored += found[0]
    return cleaned


def _walk(value: Any, patterns: _Patterns, found: list[int]) -> Any:
    if isinstance(value, str):
        cleaned, n = _replaced(value, patterns)
        found[0] += n
        return cleaned
    if isinstance(value, dict):
        return {_walk(k, patterns, found): _walk(v, patterns, found) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_walk(v, patterns, found) for v in value]
    if isinstance(value, bytes):
        # Searched as text: every byte that is not UTF-8 stands for itself and comes back.
        text, n = _replaced(value.decode("utf-8", "surrogateescape"), patterns)
        found[0] += n
        return text.encode("utf-8", "surrogateescape") if n else value
    return value


# The fewest characters of a secret that ``redact_pieces`` takes for a piece of it: twice the
# shortest secret, so that a piece of a key is more than a word of prose.
PIECE: Final = 2 * MIN_LENGTH
_BLOCK: Final = PIECE // 2  # every piece holds one of a value's blocks, cut at multiples of it
# Each value's blocks, searched at every position, and where in the value each one starts.
_blocks: dict[str, tuple[re.Pattern[str], dict[str, list[int]]]] = {}


def redact_pieces(text: str) -> str:
    """``text`` (an error of user code, to be stored) with every run of at least ``PIECE``
    characters of a secret kept out of what is stored replaced, counted as ``redact`` counts
    them. Libraries shorten the long values their errors echo (pydantic keeps the first and
    last 24 characters of one over 48, ``reprlib`` 13 and 14), so that no piece is the whole
    secret, yet most of it is there. Pieces are recognised as they are, not escaped; a whole
    occurrence, in any form, is left for ``redact`` to replace (and count) where it is stored,
    as everywhere."""
    patterns = _patterns
    if patterns is None:
        return text
    whole = _found(text, patterns)
    spans = sorted(
        (start, end)
        for value in patterns.values
        if len(value) > PIECE
        for start, end in _pieces(text, value)
        if not any(start < w_end and w_start < end for w_start, w_end in whole)
    )
    if not spans:
        return text
    replaced, count = _replaced_at(text, spans)
    add_stored(count)
    return replaced


def _pieces(text: str, value: str) -> Iterator[tuple[int, int]]:
    """The spans of ``text`` that are runs of at least ``PIECE`` characters of ``value``."""
    if value not in _blocks:
        where: dict[str, list[int]] = {}
        for offset in range(0, len(value) - _BLOCK + 1, _BLOCK):
            where.setdefault(value[offset : offset + _BLOCK], []).append(offset)
        # A lookahead finds every occurrence, overlapping ones included.
        search = re.compile("(?=(" + "|".join(re.escape(b) for b in where) + "))")
        _blocks[value] = (search, where)
    search, where = _blocks[value]
    if not any(block in text for block in where):  # the common case, far faster than search
        return
    for found in search.finditer(text):
        block, at = found.group(1), found.start()
        for offset in where[block]:
            before = _common(text, at - 1, value, offset - 1, -1)
            after = _common(text, at + _BLOCK, value, offset + _BLOCK, 1)
            if before + _BLOCK + after >= PIECE:
                yield at - before, at + _BLOCK + after


def _common(text: str, at: int, value: str, offset: int, step: int) -> int:
    """How many characters ``text`` and ``value`` share from ``at`` and ``offset`` on, going
    by ``step``."""
    n = 0
    while 0 <= at < len(text) and 0 <= offset < len(value) and text[at] == value[offset]:
        at, offset, n = at + step, offset + step, n + 1
    return n


def redact_shown(value: Any) -> Any:
    """``value`` (something printed or written out, not stored: an export's rows) with every
    registered secret replaced, as ``redact`` replaces them, but not counted."""
    patterns = _shown_patterns
    if patterns is None:
        return value
    return _walk(value, patterns, [0])


def holds_secret(value: str | bytes, *, shown_only_too: bool = True) -> bool:
    """Whether ``value`` holds a registered secret, in any of its forms: one kept out of what is
    shown only too, unless ``shown_only_too`` is false (what ``redact`` would replace)."""
    patterns = _shown_patterns if shown_only_too else _patterns
    if patterns is None:
        return False
    text = value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value
    return _replaced(text, patterns)[1] > 0


def stored_count() -> int:
    """How many occurrences ``redact`` has replaced in this process so far."""
    return _stored


def add_stored(count: int) -> None:
    """Count ``count`` occurrences replaced by another process in what this one stores (a Ray
    replica redacts what it sends back with the secrets it read)."""
    global _stored
    with _lock:
        _stored += count


def forget_all() -> None:
    """Forget every registered secret (for tests; a run forgets only those its project
    declared, at the end of its ``project_scope``)."""
    global _patterns, _shown_patterns, _keep_declared
    with _lock:
        _compiled.clear()
        _kept.clear()
        _holders.clear()
        _shown.clear()
        _keep_declared = False
        _patterns = _shown_patterns = None


def _opening_at_end(text: str, values: Iterable[str]) -> int:
    """How many of the last characters of ``text`` begin one of ``values`` as it is (fewer
    than all of its characters), the most any does; 0 if none."""
    most = 0
    for value in values:
        at = text.find(value[0], max(0, len(text) - len(value) + 1))
        while at != -1 and len(text) - at > most:
            if value.startswith(text[at:]):
                most = len(text) - at
                break
            at = text.find(value[0], at + 1)
    return most


class RedactingStream:
    """A text stream that writes through ``redact_text``: the command line wraps stdout and
    stderr in it. It has no ``buffer``, so nothing can write around it by accident.

    A secret may come a few characters a write (a system printing a model's reply as it is
    streamed), so the end of what it was given that could begin a secret as it is waits for
    the next write, which shows whether it does; a flush leaves it waiting. Whatever still
    waits is written when the process exits."""

    def __init__(self, stream: IO[str]) -> None:
        global _keep_declared
        # Any line printed from now on, up to the last error a command ends with, may hold
        # a secret a project declared: none is released any more (requirement 8).
        _keep_declared = True
        self._stream = stream
        self._held = ""  # the start of what may be a secret, written by the next write
        self._lock = threading.Lock()
        atexit.register(self._release)

    def write(self, text: str) -> int:
        patterns = _shown_patterns
        if patterns is None and not self._held:
            self._stream.write(text)
            return len(text)
        with self._lock:
            shown = self._held + text
            if patterns is not None:
                shown = _replaced(shown, patterns)[0]
                held = _opening_at_end(shown, patterns.values)
                shown, self._held = shown[: len(shown) - held], shown[len(shown) - held :]
            else:
                self._held = ""
            self._stream.write(shown)
        return len(text)

    def _release(self) -> None:
        with self._lock:
            held, self._held = self._held, ""
        if held:  # not the whole of a secret: the process ended before the rest came
            with suppress(OSError, ValueError):  # a closed pipe: nothing to do
                self._stream.write(held)
                self._stream.flush()

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return getattr(self._stream, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:
        return getattr(self._stream, "errors", None)

    @property
    def closed(self) -> bool:
        return bool(getattr(self._stream, "closed", False))


def too_short(name: str, value: str) -> str | None:
    """Why a declared secret ``name`` holding ``value`` cannot be kept out of what a run
    stores and prints (its value is set but shorter than ``MIN_LENGTH``), or None."""
    if not 0 < len(value) < MIN_LENGTH:
        return None
    return (
        f"the value of {name} is shorter than {MIN_LENGTH} characters, too short to be kept out "
        "of what a run stores and prints (so short a text occurs in ordinary text, and replacing "
        f"it there would change outputs and verdicts); give {name} a longer value, or take it "
        "out of secrets: to have it recorded as it is"
    )
