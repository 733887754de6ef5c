"""The central redactor: what counts as a secret, where it is replaced, what is counted."""

from __future__ import annotations

import html
import io
import json
import re
import urllib.parse
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oloproof import events as ev
from oloproof import redaction
from oloproof.redaction import REDACTED, RedactingStream, redact, redact_text, register

SECRET = 'sk-"quoted"\\slash-é'


@pytest.fixture(autouse=True)
def clean_registry() -> Iterator[None]:
    redaction.forget_all()
    yield
    redaction.forget_all()


def test_nothing_registered_costs_nothing() -> None:
    body = {"a": ["text", b"bytes"], "b": {"c": 1.5}}
    assert redact(body) is body
    assert redact_text("plain") == "plain"


def test_every_string_bytes_and_key_inside_a_body() -> None:
    register(SECRET)
    before = redaction.stored_count()
    body = {
        "output": f"it said {SECRET} twice: {SECRET}",
        "nested": [{"deep": (SECRET, 3)}, b"raw " + SECRET.encode()],
        SECRET: "a key too",
        "echoed json": json.dumps({"token": SECRET}),
        "echoed ascii json": json.dumps({"token": SECRET}, ensure_ascii=True),
        "number": 7,
    }
    cleaned = redact(body)
    assert SECRET not in json.dumps(cleaned, default=repr)
    assert cleaned["output"] == f"it said {REDACTED} twice: {REDACTED}"
    assert cleaned["nested"] == [{"deep": [REDACTED, 3]}, b"raw " + REDACTED.encode()]
    assert cleaned[REDACTED] == "a key too" and cleaned["number"] == 7
    assert cleaned["echoed json"] == json.dumps({"token": REDACTED})
    assert cleaned["echoed ascii json"] == '{"token": "[redacted]"}'
    assert redaction.stored_count() - before == 7


def test_short_values_are_not_secrets() -> None:
    register("yes")
    register("")
    register(None)
    assert redact({"a": "yes yes"}) == {"a": "yes yes"}


def test_events_are_made_redacted() -> None:
    register("token-12345678")
    event = ev.make(ev.EXECUTION, {"identity": "x", "output": "got token-12345678"})
    assert event.body["output"] == f"got {REDACTED}"
    assert b"token-12345678" not in event.to_bytes()


def test_a_stream_writes_through_the_redactor() -> None:
    target = io.StringIO()
    stream = RedactingStream(target)
    stream.write("before anything is registered: token-12345678\n")
    register("token-12345678")
    stream.write("error: the server said token-12345678\n")
    stream.writelines(["token-12345678", "\n"])
    assert target.getvalue().splitlines() == [
        "before anything is registered: token-12345678",
        f"error: the server said {REDACTED}",
        REDACTED,
    ]
    assert not hasattr(stream, "buffer")  # nothing can write around it
    assert stream.encoding and stream.writable()


def test_a_cut_never_ends_inside_a_secret() -> None:
    register(SECRET)
    escaped = json.dumps(SECRET)[1:-1]
    for form in (SECRET, escaped):
        text = f"head {form} tail"
        assert redaction.cut(text, 5) == "head "
        assert redaction.cut(text, 7) == "head "  # inside it: before it instead
        assert redaction.cut(text, 5 + len(form)) == f"head {form}"
        assert redaction.cut(text, 100) == text
    assert redaction.cut(f"{SECRET} and {SECRET}", len(SECRET) + 8) == f"{SECRET} and "
    redaction.forget_all()
    assert redaction.cut(f"head {SECRET}", 7) == f"head {SECRET}"[:7]


# Escaped forms, each built here with the standard library rather than with the redactor's
# own patterns: the forms an endpoint echoes a value in.
TRICKY = 'sk-"q"\\s/p+a ce\té😀%&<x>'


def utf16_escaped(text: str, which: Callable[[int], bool], upper: bool) -> str:
    """``text`` with the characters at positions ``which`` accepts as ``\\uXXXX`` (UTF-16
    units, so a pair beyond the BMP), the others as JSON has them."""
    out = []
    for i, c in enumerate(text):
        if which(i):
            units = c.encode("utf-16-be")
            for at in range(0, len(units), 2):
                code = f"{int.from_bytes(units[at : at + 2], 'big'):04x}"
                out.append("\\u" + (code.upper() if upper else code))
        else:
            out.append(json.dumps(c, ensure_ascii=False)[1:-1])
    return "".join(out)


def lower_hex(quoted: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), quoted)


def every_other(i: int) -> bool:
    return i % 2 == 1


def json_string(text: str) -> str:
    """``text`` as it is inside a JSON string."""
    return json.dumps(text)[1:-1]


def php_string(text: str) -> str:
    """``text`` as it is inside a JSON string PHP writes: ``/`` as ``\\/``."""
    return json_string(text).replace("/", "\\/")


def go_string(text: str) -> str:
    """``text`` as it is inside a JSON string Go's encoding/json writes: ``<``, ``>`` and
    ``&`` as ``\\u003c``, ``\\u003e`` and ``\\u0026`` too."""
    escapes = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}
    return re.sub("[<>&]", lambda m: escapes[m.group()], json_string(text))


def go_html(text: str) -> str:
    """``text`` as Go's html/template writes it: ``+`` as ``&#43;`` too."""
    return html.escape(text).replace("+", "&#43;")


def u_punctuation(text: str) -> str:
    """``text`` with every character but a letter or a digit as ``\\uXXXX``."""
    return "".join(c if c.isalnum() else utf16_escaped(c, lambda i: True, False) for c in text)


VARIANTS: dict[str, Callable[[str], str]] = {
    "json ascii": json_string,
    "json unicode": lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
    "json slash": php_string,
    "json in json": lambda s: json_string(json_string(s)),
    "json slash in json slash": lambda s: php_string(php_string(s)),
    "json in json in json": lambda s: json_string(json_string(json_string(s))),
    "all \\u upper": lambda s: utf16_escaped(s, lambda i: True, upper=True),
    "all \\u lower": lambda s: utf16_escaped(s, lambda i: True, upper=False),
    "some \\u": lambda s: utf16_escaped(s, every_other, upper=True),
    "quote": lambda s: urllib.parse.quote(s, safe=""),
    "quote lower": lambda s: lower_hex(urllib.parse.quote(s, safe="")),
    "quote_plus": lambda s: urllib.parse.quote_plus(s, safe=""),
    "quote twice": lambda s: urllib.parse.quote(urllib.parse.quote(s, safe=""), safe=""),
    "query": lambda s: urllib.parse.urlencode({"k": s})[2:],
    "html": html.escape,
    "html decimal": lambda s: "".join(f"&#{ord(c)};" for c in s),
    "html hex": lambda s: "".join(f"&#x{ord(c):X};" for c in s),
    "python repr": lambda s: repr(s)[1:-1],
    "python ascii": lambda s: ascii(s)[1:-1],
    # Layers over layers
    "go html/template in go json": lambda s: go_string(go_html(s)),
    "php json in a php url": lambda s: urllib.parse.quote_plus(php_string(s), safe=""),
    "html twice": lambda s: html.escape(go_html(s)),
    "a url in \\u escapes": lambda s: u_punctuation(urllib.parse.quote(s, safe="")),
    "html in a url in json": lambda s: json_string(urllib.parse.quote(go_html(s), safe="")),
    "json in json in a url": lambda s: urllib.parse.quote(json_string(php_string(s)), safe=""),
}


@pytest.mark.parametrize("variant", VARIANTS.values(), ids=list(VARIANTS))
@pytest.mark.parametrize("secret", [TRICKY, "sk-live/ABCDEF123456+xyz"], ids=["tricky", "token"])
def test_every_escaped_form_is_replaced_whole(secret: str, variant: Callable[[str], str]) -> None:
    register(secret)
    form = variant(secret)
    text = f"[[{form}]] and [[{form}]]"
    assert redact_text(text) == f"[[{REDACTED}]] and [[{REDACTED}]]"
    before = redaction.stored_count()
    cleaned = redact({"text": text, "bytes": text.encode()})
    assert cleaned == {"text": redact_text(text), "bytes": redact_text(text).encode()}
    assert redaction.stored_count() - before == 4


@pytest.mark.parametrize("variant", VARIANTS.values(), ids=list(VARIANTS))
def test_a_cut_never_ends_inside_an_escaped_form(variant: Callable[[str], str]) -> None:
    register(TRICKY)
    form = variant(TRICKY)
    text = f"head {form} tail"
    for limit in range(len(text) + 2):
        expected = "head " if 5 < limit < 5 + len(form) else text[:limit]
        assert redaction.cut(text, limit) == expected, limit


def test_a_space_written_as_plus_alone_is_recognised() -> None:
    # Nothing else in the form is escaped: no "%", "\" or "&" in the text.
    register("open sesame now")
    assert redact_text("?pass=open+sesame+now") == f"?pass={REDACTED}"


@pytest.mark.parametrize(
    "near",
    [
        "sk-live\\/ABCDEF123457+xyz",  # one character differs
        "sk-live%2GABCDEF123456+xyz",  # not a percent-encoding
        "sk-live\\u002GABCDEF123456+xyz",  # not a \u escape
        "sk-live&#48;ABCDEF123456+xyz",  # the reference of another character
        "sk-live\\/ABCDEF12345",  # cut short
        "SK-LIVE\\/ABCDEF123456+XYZ",  # another case
    ],
)
def test_what_only_resembles_a_secret_is_kept(near: str) -> None:
    register("sk-live/ABCDEF123456+xyz")
    assert redact_text(f"key {near}!") == f"key {near}!"


def test_several_secrets_each_in_its_forms() -> None:
    token, inner = "tok/ABCDEF-123456", "ABCDEF-12"  # one inside the other
    register(inner)
    register(token)
    refs = "".join(f"&#{ord(c)};" for c in token)
    text = f"{php_string(token)} {urllib.parse.quote(inner)} {refs} {inner}"
    assert redact_text(text) == " ".join([REDACTED] * 4)
    assert redaction.cut(f"{inner} {php_string(token)}", len(inner) + 5) == f"{inner} "


def test_a_value_read_from_undecodable_bytes_is_registered() -> None:
    # The environment gives bytes that are not UTF-8 as lone surrogates.
    value = b"tok-\xff\xfe-secret".decode("utf-8", "surrogateescape")
    register(value)
    assert redact({"raw": b"got tok-\xff\xfe-secret"}) == {"raw": b"got " + REDACTED.encode()}
    assert redact_text(f"got {value}") == f"got {REDACTED}"


# A secret's characters: any but the brackets around it in the text, and lone surrogates.
secrets = st.text(
    st.characters(exclude_categories=("Cs",), exclude_characters="[]"), min_size=6, max_size=20
)


# Each family of escapes (requirement 3 of oloproof.redaction): the forms its first layer
# may write a character in, and the encoders a layer over that applies to the whole text.
FIRST: dict[str, Callable[[str, bool], list[str]]] = {
    "json": lambda c, upper: [
        utf16_escaped(c, lambda i: True, upper=upper),
        json_string(c),
        json.dumps(c, ensure_ascii=False)[1:-1],
        php_string(c),
        ascii(c)[1:-1],
        u_punctuation(c),
    ],
    "percent": lambda c, upper: [
        urllib.parse.quote(c, safe=""),
        lower_hex(urllib.parse.quote_plus(c, safe="")),
    ],
    "html": lambda c, upper: [html.escape(c), f"&#{ord(c)};", f"&#x{ord(c):x};"],
}
OVER: dict[str, list[Callable[[str], str]]] = {
    "json": [json_string, php_string, go_string, lambda s: ascii(s)[1:-1], u_punctuation],
    "percent": [
        lambda s: urllib.parse.quote(s, safe=""),
        lambda s: lower_hex(urllib.parse.quote_plus(s, safe="")),
    ],
    "html": [html.escape, go_html],
}


@st.composite
def escaped(draw: st.DrawFn, secret: str) -> str:
    """``secret`` with each of its characters through its own stack of up to three layers of
    escaping, each layer of any family."""
    out = []
    for c in secret:
        form = c
        layers = draw(st.lists(st.sampled_from(sorted(FIRST)), max_size=3))
        for i, family in enumerate(layers):
            if i == 0:
                form = draw(st.sampled_from(FIRST[family](c, draw(st.booleans()))))
            else:
                form = draw(st.sampled_from(OVER[family]))(form)
        out.append(form)
    return "".join(out)


@given(st.data(), secrets)
def test_any_mix_of_forms_is_replaced_whole_and_never_cut_into(
    data: st.DataObject, secret: str
) -> None:
    redaction.forget_all()
    register(secret)
    form = data.draw(escaped(secret))
    text = f"[[{form}]]"
    assert redact_text(text) == f"[[{REDACTED}]]"
    assert redact(text.encode()) == f"[[{REDACTED}]]".encode()
    limit = data.draw(st.integers(0, len(text)))
    expected = "[[" if 2 < limit < 2 + len(form) else text[:limit]
    assert redaction.cut(text, limit) == expected


def test_one_line_keeps_each_secret_as_it_is() -> None:
    text = "refused:\n  open  sesame-42\tnow  is\tnot a key\n"
    assert redaction.one_line(text) == "refused: open sesame-42 now is not a key"
    register("open  sesame-42\tnow")
    line = redaction.one_line(text)
    assert line == "refused: open  sesame-42\tnow is not a key"
    before = redaction.stored_count()
    assert redact(line) == f"refused: {REDACTED} is not a key"
    assert redaction.stored_count() - before == 1
    assert redaction.one_line("\n open  sesame-42\tnow \n") == "open  sesame-42\tnow"
    quoted = json_string("open  sesame-42\tnow")  # the tab escaped, the two spaces not
    assert redaction.one_line(f" a  {quoted}  b ") == f"a {quoted} b"


@pytest.mark.parametrize(
    ("secret", "near"),
    [
        ("pw" + "\\" * 12 + "qq", "pw" + "\\" * 100 + "x"),
        ("pw" + "\\" * 12 + "qq", "pw" + "\\u005c" * 40 + "%5C" * 40 + "x"),
        ("ab" + "&" * 12 + "yz", "ab" + "\\u0026amp;" * 14 + "x"),
        ("ab" + "%" * 12 + "yz", "ab" + "%255Cu0025" * 14 + "x"),
    ],
    ids=["backslashes", "escaped backslashes", "ampersands", "percent signs"],
)
def test_a_near_miss_costs_one_pass(secret: str, near: str) -> None:
    """A reply cannot make a search slow (requirement 7 of oloproof.redaction). Were the
    engine to try the ways a text could be split among a value's characters one after
    another, each near miss here would take hours: before, each backslash of a value could
    take one to eight of the text's, and one near miss of a value with six backslashes took
    28 ms, eight times as long with each more. benchmarks/redaction.py times these."""
    register(secret)
    text = near * 3
    assert redact_text(text) == text
    assert redaction.cut(text, 50) == text[:50]


KEY = "sk-svc-7d41c2f09b3e8a6f7d41c2f09b3e8a6fQx9Tz4LmW8rNp2Va5"


@given(
    start=st.integers(0, len(KEY) - redaction.PIECE),
    length=st.integers(redaction.PIECE, len(KEY)),
    before=st.text(max_size=20),
    after=st.text(max_size=20),
)
def test_every_piece_of_a_secret_in_an_error_is_replaced(
    start: int, length: int, before: str, after: str
) -> None:
    """What is stored of an error (``redact`` after ``redact_pieces``) holds no piece of 12 or
    more characters of the secret, wherever the library cut it."""
    redaction.forget_all()
    register(KEY)
    piece = KEY[start : start + length]
    stored = redact(redaction.redact_pieces(f"{before}'{piece}...'{after}"))
    assert piece not in stored
    assert REDACTED in stored


def test_pieces_as_libraries_cut_them_and_what_is_left() -> None:
    register(KEY)
    pydantic = f"input_value='{KEY[:24]}...{KEY[-24:]}', input_type=str"
    assert (
        redaction.redact_pieces(pydantic) == "input_value='[redacted]...[redacted]', input_type=str"
    )
    before = redaction.stored_count()
    # reprlib keeps 13 and 14; a run of 11 is not taken for a piece
    assert redaction.redact_pieces(f"'{KEY[:13]}...{KEY[-14:]}'") == "'[redacted]...[redacted]'"
    assert redaction.stored_count() == before + 2
    assert redaction.redact_pieces(f"x {KEY[5:16]} y") == f"x {KEY[5:16]} y"
    # A whole occurrence is left for redact, which counts it where it is stored
    assert redaction.redact_pieces(f"key {KEY} here") == f"key {KEY} here"
